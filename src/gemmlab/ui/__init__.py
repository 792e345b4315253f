"""What the command line needs besides the commands: one-line errors, input checks, summaries
and machine-readable documents."""
