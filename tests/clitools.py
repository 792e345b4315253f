"""Helpers for the CLI tests: run a command, and check the exit-code contract."""

from __future__ import annotations

from pathlib import Path

import torch
from typer.testing import CliRunner

from gemmlab.cli import app

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in Path(root).rglob("*")}


def assert_no_traceback(result) -> None:
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


def assert_one_line(result, code: int, *fragments: str) -> str:
    """Exit `code`, no traceback, exactly one line of output that holds every fragment."""
    assert result.exit_code == code, result.output
    assert_no_traceback(result)
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1, result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert result.stdout.strip() == "", "a one-line error belongs on stderr"
    return lines[0]


def last_line(result) -> str:
    return [ln for ln in result.output.splitlines() if ln.strip()][-1]


HAS_GPU = torch.cuda.is_available()
