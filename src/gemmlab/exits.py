"""The exit codes every gemmlab command shares, so a script can trust them.

| code | meaning |
|---|---|
| 0 | passed or accepted |
| 1 | failed or rejected (a wrong result, a crash, a limit) |
| 2 | usage error, found before anything runs or is written |
| 3 | could not run here (no GPU, a missing tool or framework), with a one-line reason |
"""

from __future__ import annotations

from enum import IntEnum


class UsageError(ValueError):
    """A request that cannot be carried out as asked (exit 2), found before anything runs or is written."""


class CannotRun(Exception):
    """This machine lacks what the command needs (exit 3): a GPU, a tool, a package, a writable cache."""


class Exit(IntEnum):
    PASSED = 0
    FAILED = 1
    USAGE = 2
    CANNOT_RUN = 3
