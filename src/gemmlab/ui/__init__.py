"""What the command line needs besides the commands: one-line errors, input checks, summaries,
machine-readable documents and the help text's placeholders."""
