"""The `gemmlab` command line: one module per command group, each registering its commands on
`common.app`. Every command exits 0 (passed), 1 (failed), 2 (usage error, found before anything
runs or is written) or 3 (could not run here), with a one-line reason for 2 and 3
(`gemmlab.exits`); with `--json`, stdout holds only the JSON document.

A module imports at its top only what `-h` needs: torch, the judge and what a command runs are
imported inside the command, so that `gemmlab -h`, `--version`, `list`, `explain` and `new` start
at once.
"""

from __future__ import annotations

from inspect import cleandoc

# Each module registers its commands on `app` when imported.
from . import bench, check, export, ladder, reading, tune  # noqa: F401
from .common import app

#: The order `gemmlab -h` lists the commands in (whatever order their modules are imported in).
HELP_ORDER = ("tour", "list", "explain", "glossary", "show", "diff", "book", "check", "bench", "inspect", "report", "study", "sweep", "new", "tune",
              "export", "submit", "judge")
app.registered_commands.sort(key=lambda c: HELP_ORDER.index(c.name or c.callback.__name__))


def _first_paragraph_on_one_line(doc: str) -> str:
    """A docstring whose first paragraph is one line: `gemmlab -h`'s list shows that paragraph and
    keeps its line breaks, which fall mid-sentence on a terminal of any other width."""
    first, *rest = cleandoc(doc).split("\n\n")
    return "\n\n".join([" ".join(first.split()), *rest])


for _command in app.registered_commands:
    _command.help = _command.help or _first_paragraph_on_one_line(_command.callback.__doc__ or "")

__all__ = ["app"]
