"""`splitgrid.SplitGrid` in C++: the tile grid with a third dimension, the split-K parts.

Step for step as `SplitGrid.steps` plans a call: parts by `handoff.parts` (the same rule,
`split_parts`), scratch for the saved parts, the counters, then the kernel.
"""

from __future__ import annotations

from ..cuda import handoff
from ..cuda.dispatch import Launch
from .host import kernel_launch
from .source import Variants
from .transposed import split_lines


def body(launch: Launch, variants: Variants) -> list[str]:
    rows, cols = launch.tile
    slots = f"sm_count() * {int(launch.defines['MIN_BLOCKS'])}"
    lines = [f"// SplitGrid: parts per tile where the tiles leave the {slots} slots idle (handoff.parts)",
             f"const int tiles = ceil_div(K, {cols}) * ceil_div(M, {rows}), steps = ceil_div(N, {launch.step});",
             *split_lines(launch.step, slots, launch.host.chain),
             "const int saved = parts > 1 ? tiles * parts : 0;  // a slot per part; unsplit none",
             f"float* work = saved ? (float*)workspace((size_t)saved * "
             f"{launch.host.slot_floats(launch) * 4}) : nullptr;",
             f"unsigned* counters = handoff_counters({handoff.COUNTERS});",
             "if ((saved && !work) || !counters) return;"]
    grid = f"dim3(ceil_div(K, {cols}), ceil_div(M, {rows}), parts)"
    return lines + kernel_launch(launch.kernel, variants, grid, "A, B, C, M, N, K, work, counters", "main")
