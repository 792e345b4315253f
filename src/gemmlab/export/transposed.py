"""`transposed.TransposedA` in C++: Aᵀ (and a padded B) written into the workspace, then the kernel.

Call for call as `TransposedA.kernel_calls` plans them.
"""

from __future__ import annotations

from ..cuda import handoff, pad, transposed
from ..cuda.dispatch import Launch
from .host import kernel_launch, main_launch, split_lines
from .source import Variants


def body(launch: Launch, variants: Variants) -> list[str]:
    tile = transposed.TILE
    host = launch.host
    lines = ["// TransposedA: the kernel reads Aᵀ (N rows of pitch(M) floats) from the workspace",
             "const int m4 = (M + 3) / 4 * 4;  // pitch(M)"]
    if host.pad_b:
        lines += ["// ... and B copied into rows of pitch(K) floats, after Aᵀ",
                  "const int k4 = (K + 3) / 4 * 4;  // pitch(K)",
                  f"const size_t b_at = round_up((size_t)N * m4 * 4, {pad.ALIGN});",
                  "const size_t operands = b_at + (size_t)N * k4 * 4;"]
    else:
        lines += ["const size_t operands = (size_t)N * m4 * 4;"]
    if host.split:
        rows, cols = launch.tile
        slots = f"sm_count() * {int(launch.defines['MIN_BLOCKS'])}"
        tiles = f"const int tiles = ceil_div(K, {cols}) * ceil_div(M, {rows}), k_tiles = ceil_div(N, {launch.depth});"
        if host.tail:
            lines += [f"// split-K on a line of blocks (handoff.tail_plan): the tiles past whole waves of the {slots} "
                      "slots in more parts", tiles,
                      "int lead = 0, lead_parts = 1, tail_parts = 1;",
                      handoff.tail_call("tiles", "k_tiles", slots, launch.depth),
                      "const int blocks = lead * lead_parts + (tiles - lead) * tail_parts;",
                      "// a slot per block of the tiles that split (handoff.TailPlan.slot_count)",
                      "const int saved = (lead_parts > 1 ? lead * lead_parts : 0) + "
                      "(tail_parts > 1 ? (tiles - lead) * tail_parts : 0);"]
        else:
            lines += [f"// split-K (handoff.parts): parts per tile where the tiles leave the {slots} slots idle", tiles,
                      *split_lines(launch.depth, slots),
                      "const int saved = parts > 1 ? tiles * parts : 0;  // a slot per part; unsplit none"]
        lines += [f"const size_t work_at = round_up(operands, {pad.ALIGN});",
                  f"char* base = workspace(work_at + (size_t)saved * "
                  f"{handoff.slot_floats(launch.threads, transposed.ACCUMULATORS) * 4});",
                  f"unsigned* counters = handoff_counters({handoff.COUNTERS});",
                  "if (!base || !counters) return;", "float* work = (float*)(base + work_at);"]
    else:
        lines += ["char* base = workspace(operands);", "if (!base) return;"]
    lines += ["float* at = (float*)base;",
              "float* b = (float*)(base + b_at);" if host.pad_b else "const float* b = B;"]
    lines += kernel_launch(transposed.TRANSPOSE_FP32, variants,
                           f"dim3(ceil_div(N, {tile}), ceil_div(m4, {tile}))", "A, at, M, N, m4", "transpose_a")
    if host.pad_b:
        width = transposed.PAD_BLOCK_COLS
        lines += kernel_launch(transposed.PAD_COPY, variants, f"dim3(ceil_div(k4, {width}), N)",
                               "B, b, N, K, K, N, k4", "pad_b")
    operands = "at, b"
    if launch.defines.get("TMA_COPY"):  # the tiles by TMA: descriptors of Aᵀ and B, as TransposedA.kernel_calls
        rows, cols = launch.tile
        b_pitch = "k4" if host.pad_b else "K"
        lines += ["gemmlab::TmaDesc maps[2];",
                  f"if (!matrix_map(&maps[0], at, N, M, (size_t)m4 * 4, {launch.depth}, {rows}, "
                  "CU_TENSOR_MAP_SWIZZLE_NONE)) return;",
                  f"if (!matrix_map(&maps[1], b, N, K, (size_t){b_pitch} * 4, {launch.depth}, {cols}, "
                  "CU_TENSOR_MAP_SWIZZLE_NONE)) return;"]
        operands = "maps[0], maps[1]"
    if host.tail:
        lines += kernel_launch(launch.kernel, variants, "dim3(blocks)",
                               f"{operands}, C, M, N, K, work, counters, lead, lead_parts, tail_parts", "main")
    elif host.split:
        rows, cols = launch.tile
        grid = f"dim3(ceil_div(K, {cols}), ceil_div(M, {rows}), parts)"
        lines += kernel_launch(launch.kernel, variants, grid, f"{operands}, C, M, N, K, work, counters", "main")
    else:
        lines += main_launch(launch, variants, f"{operands}, C, M, N, K")
    return lines
