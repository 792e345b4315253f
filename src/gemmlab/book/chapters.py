"""The reading order of the ladder: chapters, the steps within each, and which build is a variant
of which. The book and the terminal's `tour` read it here and nowhere else.

The registry is to carry chapters itself (issue 31: `chapter`, `step` and `variant_of` on each
implementation, `CHAPTERS` in reading order). Until it does, `_PROVISIONAL` below places each
implementation; an implementation it does not name (a new rung) goes into a last chapter in rung
order, so that it still appears. When the registry has chapters, this module reads them instead,
and no other module of the book changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import registry
from ..registry import Implementation


@dataclass(frozen=True)
class Chapter:
    number: int | None  # None: the unnumbered group (the baselines)
    title: str
    members: tuple[Implementation, ...]  # in reading order, each variant after what it varies

    @property
    def slug(self) -> str:
        return f"chapter-{self.number}" if self.number is not None else "chapter-baselines"


#: Provisional, until the registry carries chapters: (title, members in reading order); a member
#: written "variant<original" is a variant of that original. The last entry is unnumbered.
_PROVISIONAL: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("SIMT basics", ("naive", "naive-fma", "smem-16", "row-4", "tiling-1d", "tiling-2d")),
    ("Memory", ("float4", "float4-bk16<float4", "float4-128<float4", "double-buffer-64",
                "double-buffer-128<double-buffer-64", "cp-async")),
    ("Past cuBLAS in FP32", ("warptile", "bigtile", "splitk<bigtile", "tma<bigtile", "small", "default")),
    ("TF32 tensor cores", ("wmma-tf32", "mma-tf32", "wgmma-tma", "wgmma-ws", "wgmma-swap")),
    ("FP32-accurate tensor cores", ("triton-tf32x3", "triton-presplit", "wgmma-3xtf32")),
    ("Baselines and libraries", ("triton", "torch", "torch-tf32")),
)
#: The title of the chapter that holds what `_PROVISIONAL` does not name.
_MORE = "More rungs"


def _provisional() -> tuple[list[Chapter], dict[str, str]]:
    known = {impl.name: impl for impl in registry.by_rung()}
    out: list[Chapter] = []
    variants: dict[str, str] = {}
    placed: set[str] = set()
    for i, (title, entries) in enumerate(_PROVISIONAL):
        members = []
        for entry in entries:
            name, _, original = entry.partition("<")
            if name in known:
                members.append(known[name])
                placed.add(name)
                if original:
                    variants[name] = original
        number = None if i == len(_PROVISIONAL) - 1 else i + 1
        out.append(Chapter(number, title, tuple(members)))
    rest = tuple(impl for impl in known.values() if impl.name not in placed)
    if rest:
        out.insert(len(out) - 1, Chapter(len(out), _MORE, rest))
    return out, variants


def chapters() -> list[Chapter]:
    """Every chapter in reading order, the unnumbered group last; every implementation in one."""
    return [c for c in _provisional()[0] if c.members]


def reading_order() -> list[Implementation]:
    return [impl for chapter in chapters() for impl in chapter.members]


def chapter_of(impl: Implementation) -> Chapter:
    return next(c for c in chapters() if impl in c.members)


def reference(impl: Implementation) -> str:
    """"3.2": the chapter's number and the step within it; "" in the unnumbered group."""
    chapter = chapter_of(impl)
    if chapter.number is None:
        return ""
    return f"{chapter.number}.{chapter.members.index(impl) + 1}"


def variant_of(impl: Implementation) -> Implementation | None:
    """The implementation this one is another build of (float4-bk16 of float4), or None."""
    original = _provisional()[1].get(impl.name)
    return registry.REGISTRY.get(original) if original else None


def previous(impl: Implementation) -> Implementation | None:
    """What this one is read against: a variant against its original, else the one before it in
    the reading order (None for the very first)."""
    original = variant_of(impl)
    if original is not None:
        return original
    order = reading_order()
    i = order.index(impl)
    return order[i - 1] if i else None


def following(impl: Implementation) -> Implementation | None:
    order = reading_order()
    i = order.index(impl)
    return order[i + 1] if i + 1 < len(order) else None
