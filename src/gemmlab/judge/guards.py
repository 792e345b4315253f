"""Guard bytes around every buffer the solution can reach: filled before each call, read after it.

The pattern is a fresh random 32-bit word per call, drawn by the judge, so a
solution can neither know it in advance nor pass by writing back a constant it
guessed. A changed guard word is a write outside the solution's buffers, and
the verdict names the buffer, the side and how far from the buffer's edge the
first changed float is (the nearest to the buffer: for a row past C's end,
0 floats past its last element).
"""

from __future__ import annotations

import os

import torch

from .arena import TITLES, Layout, Region


def fresh_pattern() -> int:
    """A random int32 word (as a signed value, for torch's int32 fill)."""
    return int.from_bytes(os.urandom(4), "little", signed=True)


def _slices(lay: Layout):
    for region in lay.regions.values():
        yield region, "before", region.guard_before
        yield region, "after", region.guard_after


def fill(arena: torch.Tensor, lay: Layout, pattern: int) -> None:
    words = arena.view(torch.int32)
    for _, _, (start, end) in _slices(lay):
        words[start:end].fill_(pattern)


def describe(region: Region, side: str, changed: torch.Tensor, start: int, shape) -> str:
    """One guard's damage in words. `changed` holds the changed positions, as offsets into the guard."""
    count = int(changed.numel())
    name = TITLES[region.name]
    if side == "after":
        first = int(changed.min())  # distance past the last element
        where = f"{first} float{'s' if first != 1 else ''} past its last element"
        if region.name == "C":
            m, _, k = shape
            where += f" (C[{m + first // k}][{first % k}] if C had more rows)"
        return f"wrote past the end of {name}: {count} float(s) of the guard after it changed, the first {where}"
    guard_len = region.offset - start
    nearest = guard_len - int(changed.max())  # 1 = the float just before the first element
    return (f"wrote before the start of {name}: {count} float(s) of the guard before it changed, the "
            f"nearest {nearest} float{'s' if nearest != 1 else ''} before its first element")


def check(arena: torch.Tensor, lay: Layout, pattern: int) -> str:
    """'' when every guard holds the pattern, else the first damaged guard in words (C's first)."""
    words = arena.view(torch.int32)
    found = []
    for region, side, (start, end) in _slices(lay):
        changed = (words[start:end] != pattern).nonzero().flatten()
        if changed.numel():
            found.append((region.name != "C", describe(region, side, changed.cpu(), start, lay.shape)))
    # C's own guards first (a stable sort): the off-by-one that runs past C is the common case.
    return "; ".join(text for _, text in sorted(found, key=lambda f: f[0]))
