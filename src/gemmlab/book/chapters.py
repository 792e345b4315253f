"""The reading order of the ladder as the book uses it: chapters, the steps within each, and which
build is a variant of which. The book and `gemmlab tour` read the registry's chapters through
this module only (`registry.CHAPTERS`, `reading_order`, `Implementation.chapter`, `.step`,
`.ref`, `.variant_of`), so a change there is met here, in one place.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import registry
from ..registry import Implementation


@dataclass(frozen=True)
class ChapterWithSteps:
    """A registry chapter with its members, in the order a reader meets them."""

    number: int | None  # None: the unnumbered group (the baselines)
    title: str
    summary: str
    key: str
    members: tuple[Implementation, ...]

    @property
    def slug(self) -> str:
        return f"chapter-{self.key}"


def chapters() -> list[ChapterWithSteps]:
    """Every chapter that has members, in reading order, the unnumbered group last."""
    order = registry.reading_order()
    out = []
    for c in registry.CHAPTERS:
        members = tuple(i for i in order if i.chapter is not None and i.chapter.key == c.key)
        if members:
            out.append(ChapterWithSteps(c.number, c.title, c.summary, c.key, members))
    return out


def reading_order() -> list[Implementation]:
    return [impl for chapter in chapters() for impl in chapter.members]


def chapter_of(impl: Implementation) -> ChapterWithSteps:
    return next(c for c in chapters() if impl in c.members)


def reference(impl: Implementation) -> str:
    """"3.2": the chapter's number and the step within it; "" in the unnumbered group."""
    return impl.ref or ""


def variant_of(impl: Implementation) -> Implementation | None:
    """The implementation this one is another build of (float4-bk16 of float4), or None."""
    return registry.REGISTRY.get(impl.variant_of) if impl.variant_of else None


def previous(impl: Implementation) -> Implementation | None:
    """What this one is read against: what it declares it builds on, a variant against its original,
    else the nearest step before it in the reading order written in its language (None for the
    first of its language: a diff from CUDA to Triton would show two files, not a step)."""
    named = impl.builds_on or impl.variant_of
    if named:
        return registry.REGISTRY[named]
    order = reading_order()
    return next((x for x in reversed(order[:order.index(impl)]) if x.family == impl.family), None)


def following(impl: Implementation) -> Implementation | None:
    order = reading_order()
    i = order.index(impl)
    return order[i + 1] if i + 1 < len(order) else None
