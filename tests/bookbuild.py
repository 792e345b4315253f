"""One build of the book per test run, shared by the book's tests: `gemmlab book` as a user runs
it, with the committed records, the committed judge record, and inspect's facts."""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JUDGED = ROOT / "tests" / "fixtures" / "book" / "judged-torch-cpu.json"


@cache
def built() -> Path:
    """The folder of a book built from the repository's root; the build's output is checked."""
    import os

    from tests.clitools import invoke

    out = Path(tempfile.mkdtemp(prefix="gemmlab-book-")) / "book"
    here = os.getcwd()
    os.chdir(ROOT)  # the records are found as a user in a clone finds them
    try:
        result = invoke("book", "-o", out, "--judged", JUDGED)
    finally:
        os.chdir(here)
    assert result.exit_code == 0, result.output
    return out
