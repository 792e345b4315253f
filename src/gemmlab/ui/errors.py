"""How a command ends: one line and an exit code a script can trust (see `gemmlab.exits`).

A command raises `UsageError` (exit 2) for what the user typed wrong, before anything runs or is
written, and `CannotRun` (exit 3) when this machine lacks what the command needs; `guarded` turns
either into one line on stderr, never a traceback. check, bench, sweep and study end on a `Tally`:
`4 passed, 0 failed, 14 not run (CUDA kernels need a CUDA GPU)`, any failure exit 1, nothing run
at all exit 3.
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from ..exits import CannotRun, Exit, UsageError  # noqa: F401  (the one classes, re-exported for the CLI)

#: Messages for the user, never mixed into a command's machine-readable stdout.
stderr = Console(stderr=True, soft_wrap=True)


def stop(code: Exit, message: str) -> typer.Exit:
    """Print the one-line message for `code` on stderr; return the Exit to raise."""
    label = {Exit.USAGE: "[red]error:[/red] ", Exit.CANNOT_RUN: "[yellow]not run here:[/yellow] "}
    stderr.print(label.get(code, "") + escape(" ".join(message.split())))
    return typer.Exit(int(code))


def _one_line(exc) -> None:
    where = getattr(getattr(exc, "ctx", None), "command_path", "gemmlab")
    stop(Exit.USAGE, f"{exc.format_message()} (see {where} -h)")


class _RichUtilsOnFirstUse:
    """Stands for `typer.rich_utils` until typer first reads it (to print help or an error): then
    imports it, which puts the module itself in this stand-in's place on `typer`, replaces its
    error printer with `_one_line`, and answers. typer imports it there and only there; importing
    it up front would cost every command a tenth of a second (it brings markdown-it)."""

    def __getattr__(self, name: str):
        import importlib

        module = importlib.import_module("typer.rich_utils")
        module.rich_format_error = _one_line
        return getattr(module, name)


def one_line_parse_errors() -> None:
    """Make typer's own command-line errors (a missing argument, a bad value, an unknown option)
    one line on stderr, as `stop` prints ours, instead of a boxed panel with the usage."""
    import importlib.util
    import sys

    if "typer.rich_utils" in sys.modules:
        sys.modules["typer.rich_utils"].rich_format_error = _one_line
    elif importlib.util.find_spec("typer.rich_utils") is not None:  # typer without rich: click's two lines
        typer.rich_utils = _RichUtilsOnFirstUse()


#: Notes for the user that a command prints on stderr once it has run (`note`).
_NOTES: list[str] = []


def note(message: str) -> None:
    """A one-line note (an old rung number's new reference) for stderr once the command has run.
    Held until then so that a usage error or a "not run here" stays the one line it promises:
    those drop the notes."""
    if message not in _NOTES:
        _NOTES.append(message)


def pending_notes() -> list[str]:
    return list(_NOTES)


def flush_notes() -> None:
    for message in _NOTES:
        stderr.print(message, markup=False, highlight=False)
    _NOTES.clear()


#: GEMMLAB_TRACEBACK=1: an error raised inside another package shows its traceback, not one line.
TRACEBACK_ENV = "GEMMLAB_TRACEBACK"


def broken_package(exc: BaseException) -> str | None:
    """The installed package (not gemmlab, not the standard library) whose own code raised `exc`,
    from its innermost frame; None where gemmlab or Python raised it. A truncated font file in
    matplotlib, a missing NVRTC library: one line naming the part, not a page of traceback."""
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    parts = Path(tb.tb_frame.f_code.co_filename).parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts and parts.index(marker) + 1 < len(parts):
            name = parts[parts.index(marker) + 1].removesuffix(".py")
            return None if name.startswith("gemmlab") or name.startswith("_") else name
    return None


def guarded(command: Callable) -> Callable:
    """Run a command; a UsageError exits 2 and a CannotRun exits 3, each with one line. Notes
    (`note`) follow on stderr whenever it ends otherwise."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        _NOTES.clear()
        try:
            result = command(*args, **kwargs)
        except (UsageError, CannotRun) as exc:
            _NOTES.clear()
            code = Exit.USAGE if isinstance(exc, UsageError) else Exit.CANNOT_RUN
            raise stop(code, str(exc)) from None
        except Exception as exc:
            package = broken_package(exc)
            if package is None or os.environ.get(TRACEBACK_ENV) == "1":
                flush_notes()
                raise
            _NOTES.clear()
            raise stop(Exit.CANNOT_RUN, f"{package} failed ({type(exc).__name__}: {' '.join(str(exc).split())[:300]}); "
                                        f"if that is not your input's doing, your environment may be broken: "
                                        f"pip install --force-reinstall {package} ({TRACEBACK_ENV}=1 shows the "
                                        f"traceback)") from None
        except BaseException:
            flush_notes()  # passed or failed (typer.Exit), or interrupted: what it ran stands
            raise
        flush_notes()
        return result

    return wrapper


@dataclass
class Tally:
    passed: int = 0
    failed: int = 0
    not_run: Counter = field(default_factory=Counter)  # reason → how many

    def add(self, passed: bool) -> None:
        if passed:
            self.passed += 1
        else:
            self.failed += 1

    def skip(self, reason: str) -> None:
        self.not_run[reason] += 1

    def line(self) -> str:
        skipped = sum(self.not_run.values())
        text = f"{self.passed} passed, {self.failed} failed, {skipped} not run"
        if len(self.not_run) == 1:
            text += f" ({next(iter(self.not_run))})"
        elif self.not_run:
            text += " (" + "; ".join(f"{n}: {why}" for why, n in self.not_run.most_common()) + ")"
        return text

    def exit_code(self) -> Exit:
        if self.failed:
            return Exit.FAILED
        if not self.passed:
            return Exit.CANNOT_RUN
        return Exit.PASSED

    def to_dict(self) -> dict:
        return {"passed": self.passed, "failed": self.failed,
                "not_run": sum(self.not_run.values()), "not_run_reasons": dict(self.not_run),
                "line": self.line()}
