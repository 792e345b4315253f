"""The glossary (glossary.md beside this file, the one place its terms are defined): read into
entries, linked from a page where each term first appears, and listed by `gemmlab glossary` and
at the end of `gemmlab explain`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SOURCE = Path(__file__).with_name("glossary.md")
PAGE = "glossary.html"


@dataclass(frozen=True)
class Term:
    names: tuple[str, ...]  # the heading's spellings, the first the term's own
    text: str

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.names[0].lower()).strip("-")


@cache
def terms() -> tuple[Term, ...]:
    out = []
    for section in re.split(r"^## ", SOURCE.read_text(), flags=re.M)[1:]:
        heading, _, body = section.partition("\n")
        out.append(Term(tuple(n.strip() for n in heading.split("|")), " ".join(body.split())))
    return tuple(out)


@cache
def _pattern() -> re.Pattern:
    # Longest spelling first, so that LDS.128 is found before LDS; whole words only, and case
    # kept, so that "tile" in a sentence is not the glossary's heading "tile" by accident.
    names = sorted({n for t in terms() for n in t.names}, key=len, reverse=True)
    return re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")


def _by_name() -> dict[str, Term]:
    return {n: t for t in terms() for n in t.names}


def find(text: str) -> list[Term]:
    """The terms `text` uses, in the order they first appear."""
    seen: dict[str, Term] = {}
    by_name = _by_name()
    for m in _pattern().finditer(text):
        term = by_name[m.group(1)]
        seen.setdefault(term.slug, term)
    return list(seen.values())


def lookup(name: str) -> Term | None:
    """The entry `name` names, as written or in the singular ("waves": wave); a shape class's key
    (`explain --shape` prints them: quarter-wave-aligned) names the entry of shape classes."""
    from ..policy.classes import CLASSES

    if name.strip().lower() in {c.key for c in CLASSES}:
        name = "shape class"
    for wanted in dict.fromkeys([name.strip().lower(), name.strip().lower().removesuffix("s")]):
        found = next((t for t in terms() if wanted in (n.lower() for n in t.names) or wanted == t.slug), None)
        if found is not None:
            return found
    return None


def closest(name: str) -> str | None:
    """The term's name nearest to a mistyped `name`, if one is near."""
    import difflib

    names = [n for t in terms() for n in t.names]
    near = difflib.get_close_matches(name.strip().lower(), [n.lower() for n in names], n=1)
    return next((n for n in names if near and n.lower() == near[0]), None)


def link_tokens(tokens: list, prefix: str = "") -> None:
    """Link the first appearance of each term in markdown-it's inline tokens (text and code spans)
    to its entry, in place; a term inside a link keeps that link."""
    from markdown_it.token import Token

    linked: set[str] = set()
    by_name = _by_name()
    for block in tokens:
        if block.type != "inline" or not block.children:
            continue
        out: list = []
        depth = 0
        for child in block.children:
            depth += child.type == "link_open"
            depth -= child.type == "link_close"
            if depth or child.type not in ("text", "code_inline"):
                out.append(child)
                continue
            out.extend(_linked(child, by_name, linked, prefix, Token))
        block.children = out


def _linked(child, by_name: dict[str, Term], linked: set[str], prefix: str, token) -> list:
    def opening(term: Term):
        t = token("link_open", "a", 1)
        t.attrs = {"href": f"{prefix}{PAGE}#{term.slug}", "class": "term", "title": term.text[:160]}
        return t

    if child.type == "code_inline":
        term = by_name.get(child.content)
        if term is None or term.slug in linked:
            return [child]
        linked.add(term.slug)
        return [opening(term), child, token("link_close", "a", -1)]
    out, last = [], 0
    for m in _pattern().finditer(child.content):
        term = by_name[m.group(1)]
        if term.slug in linked:
            continue
        linked.add(term.slug)
        before = token("text", "", 0)
        before.content = child.content[last:m.start()]
        word = token("text", "", 0)
        word.content = m.group(1)
        out += [before, opening(term), word, token("link_close", "a", -1)]
        last = m.end()
    if not out:
        return [child]
    rest = token("text", "", 0)
    rest.content = child.content[last:]
    return [*out, rest]
