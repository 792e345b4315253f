"""Generated blocks in Markdown files: what stands between `<!-- tag:begin -->` and
`<!-- tag:end -->` is written by a command, never by hand.

README's reading order (`gemmlab list --readme`), its ladder, study and random-shape
tables (`gemmlab report --readme`) are such blocks; a test regenerates each and fails
when the file holds something else. This module only finds and replaces them: it
imports nothing of gemmlab's, so the lightest command can use it.
"""

from __future__ import annotations

import re


def markers(tag: str) -> tuple[str, str]:
    return f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"


def _pattern(tag: str) -> re.Pattern:
    begin, end = markers(tag)
    return re.compile(re.escape(begin) + r"\n?(.*?)" + re.escape(end), re.S)


def read(text: str, tag: str) -> str:
    """What the block holds now (ValueError where the text has no such block)."""
    found = _pattern(tag).search(text)
    if found is None:
        begin, end = markers(tag)
        raise ValueError(f"no {begin} … {end} block")
    return found.group(1)


def replace(text: str, block: str, tag: str) -> str:
    """The text with the block's contents replaced by `block` (ValueError where there is none)."""
    read(text, tag)
    begin, end = markers(tag)
    return _pattern(tag).sub(lambda _m: f"{begin}\n{block}{end}", text)
