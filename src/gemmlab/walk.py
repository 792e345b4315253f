"""What to notice in the code: a note's short walk through its rung's source, each stop shown with
the line it points at, worked out when the note is read.

In a note (``kernels/cuda/naive.md``) the walk is the paragraph led by `HEAD`, then a list. Each
item opens with a link whose text is a snippet of code and whose target is the file that holds it,
relative to the note (so a Markdown viewer follows it), then says why the line matters::

    **What to notice in the code.**

    - [`acc += A[row * N + n] * B[n * K + col];`](naive.cu): NVRTC contracts this into one FFMA.

A snippet lies within one line and occurs exactly once in its file, or the walk is wrong
(`WalkError`); its line is the one it occurs on. No marker goes into a source (a kernel's source
is what its cubin is built from), so a stop follows its line as the file changes. The walk is part
of the lesson: it comes before the note's lab notes (`gemmlab.notes`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import notes
from .registry import PACKAGE_DIR, Implementation

HEAD = "**What to notice in the code.**"
#: An item of the walk: "- [`snippet`](file)" and what it says.
ITEM = re.compile(r"^- \[`(?P<snippet>[^`]+)`\]\((?P<target>[^)\s]+)\)(?P<rest>.*)$")
#: What ends the walk: the next paragraph that opens with a lead, or a heading.
_ENDS = re.compile(r"^(\*\*|#)")


class WalkError(ValueError):
    """A walk that does not match its sources: a snippet missing, repeated, or an item malformed."""


@dataclass(frozen=True)
class Stop:
    """One item of a walk: the snippet, where it is (the file relative to the package, its line)
    and what the note says of it."""

    snippet: str
    target: str  # the file as the note names it, relative to the note
    path: str  # the file relative to the package
    line: int  # from 1, as `gemmlab show` numbers it
    text: str  # the item's words after the link, Markdown

    @property
    def label(self) -> str:
        """`naive.cu:13` for a file beside the note, else the package's path: `cuda/handoff.py:42`."""
        return f"{self.target if '/' not in self.target else self.path}:{self.line}"


def _item_lines(text: str) -> list[tuple[int, re.Match]]:
    """(index among the text's lines, match) of each item of the walk; none without `HEAD`."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == HEAD)
    except StopIteration:
        return []
    found = []
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if _ENDS.match(line):
            break
        if line.startswith("- "):
            match = ITEM.match(line)
            if match is None:
                raise WalkError(f"an item of the walk does not open with [`snippet`](file): {line!r}")
            found.append((i, match))
    return found


def locate(path: Path, snippet: str) -> int:
    """The line (from 1) of the one occurrence of `snippet` in the file; WalkError where it is not
    there or is there more than once."""
    source = path.read_text()
    count = source.count(snippet)
    if count != 1:
        where = "not found" if count == 0 else f"found {count} times"
        raise WalkError(f"{path.name}: {snippet!r} {where}: a walk's snippet must occur exactly once")
    return source[:source.index(snippet)].count("\n") + 1


def _words(rest: str) -> str:
    """What an item says after its link, without the colon or dash that joins them."""
    return rest.strip().removeprefix(":").removeprefix("—").strip()


def _stop(doc: str, match: re.Match, words: str) -> Stop:
    target = match["target"]
    file = (PACKAGE_DIR / doc).parent / target
    try:
        path = file.resolve().relative_to(PACKAGE_DIR)
    except ValueError:
        raise WalkError(f"{doc}: {target} is outside the package") from None
    if not file.is_file():
        raise WalkError(f"{doc}: no file {target} beside it")
    return Stop(match["snippet"], target, path.as_posix(), locate(file, match["snippet"]), words)


def stops(doc: str, text: str | None = None) -> list[Stop]:
    """The walk of the note `doc` (relative to the package; `text` its text, read if not given), in
    order; [] where it has none."""
    text = (PACKAGE_DIR / doc).read_text() if text is None else text
    lines = text.splitlines()
    out = []
    for i, match in _item_lines(text):
        rest = [match["rest"]]
        for line in lines[i + 1:]:
            if not line.startswith("  ") or not line.strip():
                break
            rest.append(line.strip())
        out.append(_stop(doc, match, _words(" ".join(rest))))
    return out


def rendered(doc: str, text: str, link: Callable[[Stop], str | None] = lambda stop: None) -> str:
    """`text` (the note `doc`'s, or its lesson) with each stop's opening link written as its place
    and its snippet, "`naive.cu:13` `acc += …` — why", the place a link to `link(stop)` where that
    gives one (the book's anchor on the listed line)."""
    lines = text.splitlines(keepends=True)
    for i, match in _item_lines(text):
        stop = _stop(doc, match, "")
        href = link(stop)
        place = f"[`{stop.label}`]({href})" if href else f"`{stop.label}`"
        end = "\n" if lines[i].endswith("\n") else ""
        lines[i] = f"- {place} `{stop.snippet}` — {_words(match['rest'])}{end}"
    return "".join(lines)


def lesson_and_lab(impl: Implementation, link: Callable[[Stop], str | None] = lambda stop: None) -> tuple[str, str]:
    """`impl`'s note as the reader meets it (`explain`, the book): the lesson with its walk's stops
    shown at their lines (`rendered`), and the lab notes apart (`notes.split`)."""
    lesson, lab = notes.split(impl.explanation())
    return rendered(impl.doc, lesson, link), lab
