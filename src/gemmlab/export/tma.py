"""`hopper.TmaOperands` and `hopper.SwappedOperands` in C++: the wgmma rungs' workspace,
pre-passes and TMA descriptors, written from the host object's fields and hopper's constants
call for call as its `kernel_calls` plans them: the workspace as `TmaOperands._layout` lays it out, B
and A prepared (rounded, split into 3xTF32 planes, or padded), the descriptors, the main kernel
(persistent over the split-K units where it splits), and for 3xTF32 the strict-FP32 kernel that
runs only where the inputs held specials.
"""

from __future__ import annotations

from ..cuda import handoff, hopper
from ..cuda.dispatch import Launch
from .host import dim3, kernel_launch, main_launch
from .source import Variants

#: `cuda/tma.py`'s swizzle spans, as the driver's enumerators.
SWIZZLE = {0: "CU_TENSOR_MAP_SWIZZLE_NONE", 32: "CU_TENSOR_MAP_SWIZZLE_32B",
           64: "CU_TENSOR_MAP_SWIZZLE_64B", 128: "CU_TENSOR_MAP_SWIZZLE_128B"}


def layout_lines(host: hopper.TmaOperands) -> list[str]:
    """C++ that sets ``ld``, ``b_at[]``, ``a_at`` and ``total`` as `TmaOperands._layout` does."""
    align = hopper.ALIGN
    planes = host.planes
    flag = align if host.b == "split" else 0
    a_copy = f"round_up((size_t)M * ld * 4, {align})" if host.a != "in place" else "0"
    return [
        "const int ld = (N + 3) / 4 * 4;  // pitch(N): rows of a multiple of 4 floats",
        f"const size_t plane = round_up((size_t)K * ld * 4, {align});",
        f"size_t b_at[{planes}];",
        f"for (int i = 0; i < {planes}; ++i) b_at[i] = {flag} + i * plane;",
        f"const size_t a_at = {flag} + {planes} * plane;",
        f"const size_t total = a_at + {a_copy};",
    ]


def _b_calls(host: hopper.TmaOperands, variants: Variants) -> list[str]:
    tt = hopper.TRANSPOSE_TILE
    grid = f"dim3(ceil_div(K, {tt}), ceil_div(ld, {tt}))"
    if host.b == "round":
        return kernel_launch(hopper.TRANSPOSE, variants, grid,
                             "B, (float*)(base + b_at[0]), N, K, ld", "transpose")
    return (kernel_launch(hopper.CLEAR_FLAG, variants, dim3((1, 1, 1)), "(int*)base", "clear")
            + kernel_launch(hopper.TRANSPOSE_SPLIT, variants, grid,
                            "B, (float*)(base + b_at[0]), (float*)(base + b_at[1]), (int*)base, N, K, ld",
                            "split"))


def _a_calls(host: hopper.TmaOperands, variants: Variants) -> list[str]:
    if host.a == "in place":
        return ["const float* a = A;", "const size_t a_pitch = (size_t)N * 4;"]
    copy = hopper.ROUND_ROWS if host.a == "round" else hopper.PAD_ROWS
    width = copy.block[0]
    return (["const float* a = (const float*)(base + a_at);", "const size_t a_pitch = (size_t)ld * 4;"]
            + kernel_launch(copy, variants, f"dim3(ceil_div(ld, {width}), M)",
                            "A, (float*)(base + a_at), M, N, ld", "copy_a"))


def _maps(launch: Launch, planes: int) -> list[str]:
    rows, cols = launch.tile
    share = cols // launch.kernel.cluster[0]  # in a cluster, each block multicasts its share of B
    depth, swizzle = hopper.DEPTH, SWIZZLE[hopper.SWIZZLE_BYTES]
    lines = [f"gemmlab::TmaDesc maps[{1 + planes}];",
             f"if (!matrix_map(&maps[0], a, M, N, a_pitch, {rows}, {depth}, {swizzle})) return;"]
    lines += [f"if (!matrix_map(&maps[{1 + i}], base + b_at[{i}], K, N, (size_t)ld * 4, {share}, {depth}, "
              f"{swizzle})) return;" for i in range(planes)]
    return lines


def _split_lines(launch: Launch) -> list[str]:
    """C++ that sets ``tiles``, ``parts`` and ``saved`` as `TmaOperands.parts` and `_saved_bytes` do."""
    wave = hopper.one_wave(launch)  # one block a unit: the units are the tiles
    slot = handoff.slot_floats(hopper.CONSUMERS, hopper.ACCUMULATORS_3X) * 4
    return [f"const int tiles = {wave.cpp_units()};",
            f"const int parts = {wave.cpp_parts('tiles')};",
            f"const size_t saved = parts > 1 ? (size_t)tiles * parts * {slot} : 0;"]


def _split_launch(launch: Launch, variants: Variants, work_at: str, units: str, cluster: int,
                  args: str) -> list[str]:
    """Split-K's end: the scratch at `work_at`, the counters, then the persistent grid over the
    `units` (each in `parts`)."""
    return [f"float* work = saved ? (float*)(base + {work_at}) : nullptr;",
            f"unsigned* counters = parts > 1 ? handoff_counters({handoff.COUNTERS}) : nullptr;",
            "if (parts > 1 && !counters) return;",
            *kernel_launch(launch.kernel, variants, f"persistent_grid({units} * parts, fit_main, {cluster})",
                           f"{args}, work, counters, parts", "main", fit=True)]


def body(launch: Launch, variants: Variants) -> list[str]:
    host: hopper.TmaOperands = launch.host  # type: ignore[assignment]
    planes = host.planes
    lines = [f"// {type(host).__name__}(a={host.a!r}, b={host.b!r}, split={host.split!r})", *layout_lines(host)]
    if host.split:
        lines += _split_lines(launch)
        lines += [f"char* base = workspace(saved ? round_up(total, {hopper.ALIGN}) + saved : total);"]
    else:
        lines += ["char* base = workspace(total);"]
    lines += ["if (!base) return;"]
    lines += _b_calls(host, variants) + _a_calls(host, variants) + _maps(launch, planes)
    maps = ", ".join(f"maps[{i}]" for i in range(1 + planes))
    flag = ", (int*)base" if host.b == "split" else ""  # 3xTF32: its consumers flag A's specials
    if not host.split:
        lines += main_launch(launch, variants, f"{maps}, C, M, N, K{flag}")
    else:  # the scratch after the rest of the workspace
        lines += _split_launch(launch, variants, f"round_up(total, {hopper.ALIGN})", "tiles", 1,
                               f"{maps}, C, M, N, K{flag}")
    if host.b == "split":
        blocks = f"dim3(std::min(ceil_div(M, 16) * ceil_div(K, 16), {hopper.SPECIAL_BLOCKS}))"
        lines += kernel_launch(hopper.SPECIAL, variants, blocks, "(const int*)base, A, B, C, M, N, K",
                               "special")
    return lines


def swapped_body(launch: Launch, variants: Variants) -> list[str]:
    """`hopper.SwappedOperands.kernel_calls` in C++: A and B as they lie (or padded copies of them),
    through TFLOAT32 descriptors that round on the way in, then the kernel."""
    host: hopper.SwappedOperands = launch.host  # type: ignore[assignment]
    rows, _ = launch.tile
    share = rows // launch.kernel.cluster[0]  # in a cluster, each block multicasts its share of A
    depth, box, swizzle = hopper.DEPTH, hopper.SWAP_BOX, SWIZZLE[hopper.SWIZZLE_BYTES]
    lines = [f"// {type(host).__name__}(padded={host.padded!r}, split={host.split!r})"]
    if host.split:  # as SwappedOperands.parts: the tiles a cluster takes as one, over the clusters resident
        cluster, wave = launch.kernel.cluster[0], hopper.one_wave(launch)
        lines += [f"const int units = {wave.cpp_units()}, blocks = units * {cluster};",
                  f"const int parts = {wave.cpp_parts('units')};",
                  f"const size_t saved = parts > 1 ? (size_t)blocks * parts * "
                  f"{handoff.slot_floats(hopper.CONSUMERS, hopper.SWAP_ACCUMULATORS) * 4} : 0;"]
    if host.padded:  # as SwappedOperands.kernel_calls: copy only an operand TMA cannot describe
        align, width = hopper.ALIGN, hopper.PAD_ROWS.block[0]
        room = f"saved ? round_up(operands, {align}) + saved : operands" if host.split else "operands"
        lines += ["const int lda = (N + 3) / 4 * 4, ldb = (K + 3) / 4 * 4;  // pitch(): multiples of 4 floats",
                  f"const size_t b_at = round_up((size_t)M * lda * 4, {align});",
                  f"const size_t operands = b_at + round_up((size_t)N * ldb * 4, {align});",
                  f"char* base = workspace({room});",
                  "if (!base) return;",
                  f"const bool copy_a = !({hopper.A_IN_PLACE.cpp()});",
                  f"const bool copy_b = !({hopper.B_IN_PLACE.cpp()});",
                  "const float* a = copy_a ? (const float*)base : A;",
                  "const float* b = copy_b ? (const float*)(base + b_at) : B;",
                  "const size_t a_pitch = (size_t)(copy_a ? lda : N) * 4, b_pitch = (size_t)(copy_b ? ldb : K) * 4;",
                  "if (copy_a) {"]
        lines += ["    " + x for x in kernel_launch(hopper.PAD_ROWS, variants, f"dim3(ceil_div(lda, {width}), M)",
                                                   "A, (float*)a, M, N, lda", "copy_a")]
        lines += ["}", "if (copy_b) {"]
        lines += ["    " + x for x in kernel_launch(hopper.PAD_ROWS, variants, f"dim3(ceil_div(ldb, {width}), N)",
                                                   "B, (float*)b, N, K, ldb", "copy_b")]
        lines += ["}"]
    else:
        lines += ["const float* a = A;", "const float* b = B;",
                  "const size_t a_pitch = (size_t)N * 4, b_pitch = (size_t)K * 4;"]
        if host.split:
            lines += ["char* base = saved ? workspace(saved) : nullptr;", "if (saved && !base) return;"]
    lines += ["gemmlab::TmaDesc maps[2];",
              f"if (!matrix_map(&maps[0], a, M, N, a_pitch, {share}, {depth}, {swizzle}, true)) return;",
              f"if (!matrix_map(&maps[1], b, N, K, b_pitch, {depth}, {box}, {swizzle}, true)) return;"]
    if not host.split:
        return lines + main_launch(launch, variants, "maps[0], maps[1], C, M, N, K")
    # The scratch after any padded operands.
    work_at = f"round_up(operands, {hopper.ALIGN})" if host.padded else "0"
    return lines + _split_launch(launch, variants, work_at, "blocks", cluster, "maps[0], maps[1], C, M, N, K")
