"""The host half of an exported file: `CudaSolver`'s dispatch and launches, written in C++.

`solve` runs the first launch whose precondition holds (`When.cpp()`) and whose features the
loaded device code holds (``image_has``: the build may be for any target); the last launch is the
portable fallback (`document.plan`). Each launch is one ``static void launch_i(A, B, C, M, N, K)``:
a plain launch computes its grid (the tile grid, or a persistent one) and launches; a launch with a
`Host` gets the body of its kind, call for call as the kind's `kernel_calls` plans them: here
`PaddedOperands` and `SplitGrid`, `export.transposed` and `export.tma` the others.
"""

from __future__ import annotations

from ..cuda import handoff, pad
from ..cuda.dispatch import Kernel, Launch
from ..cuda.needs import Needs
from .source import Variants

GEMM_PARAMS = "const float* A, const float* B, float* C, int M, int N, int K"
GEMM_ARGS = "A, B, C, M, N, K"


def condition(launch: Launch) -> str | None:
    """The C++ test of a launch's precondition; None for the fallback."""
    parts = []
    needs = launch.all_needs
    if needs is not Needs.ANY:  # the loaded image holds its kernels' real code (a build for sm_80 has no TMA)
        parts.append(f"image_has({needs.bit})")
    if launch.when is not None:
        parts.append(launch.when.cpp())
    return " && ".join(parts) or None


def dim3(values) -> str:
    return "dim3({})".format(", ".join(str(v) for v in values))


def kernel_launch(kernel: Kernel, variants: Variants, grid: str, args: str, tag: str,
                  fit: bool = False) -> list[str]:
    """Lines that launch one kernel (raising its shared-memory limit once), returning on error;
    with ``fit``, also ask once how many blocks of it the GPU holds (``fit_{tag}``)."""
    ref, label = variants.ref(kernel), kernel.label
    lines = []
    if kernel.smem > 48 * 1024 or fit:
        lines.append(f'static const bool ready_{tag} = allow_smem({ref}, {kernel.smem}, "{label}");')
        lines.append(f"if (!ready_{tag}) return;")
    if fit:
        lines.append(f"static const int fit_{tag} = resident_blocks({ref}, {dim3(kernel.block)}, "
                     f"{kernel.smem}, {dim3(kernel.cluster)});")
    lines.append(f'if (!run("{label}", {ref}, {grid}, {dim3(kernel.block)}, {kernel.smem}, '
                 f"{dim3(kernel.cluster)}, {args})) return;")
    return lines


def main_launch(launch: Launch, variants: Variants, args: str) -> list[str]:
    """The rung's own kernel: on the tile grid, or persistent (`Launch.grid`, `CudaSolver._resident_grid`)."""
    rows, cols = launch.tile
    tiles = f"dim3(ceil_div(K, {cols}), ceil_div(M, {rows}))"
    if not launch.persistent:
        return kernel_launch(launch.kernel, variants, tiles, args, "main")
    x, y, z = launch.kernel.cluster
    grid = f"persistent_grid(ceil_div(K, {cols}) * ceil_div(M, {rows}), fit_main, {x * y * z})"
    return kernel_launch(launch.kernel, variants, grid, args, "main", fit=True)


def launch_function(index: int, launch: Launch, label: str, body: list[str]) -> str:
    lines = "\n".join(f"    {line}" for line in body)
    return (f"// launch {index}: {label}; when {launch.precondition}\n"
            f"static void launch_{index}({GEMM_PARAMS}) {{\n{lines}\n}}\n")


def solve_function(launches: tuple[Launch, ...], labels: list[str], own: int) -> str:
    """LeetGPU's entry point: the first launch whose precondition holds, the fallback last. The
    launches past the rung's `own` are the portable floor, which says once on stderr why it runs;
    a build with no device code for this GPU runs nothing, and says so."""
    if not launches or launches[-1].when is not None or launches[-1].all_needs is not Needs.ANY:
        raise ValueError("an exported file's last launch must be an unconditional, portable fallback")
    lines = ["    if (image_features() < 0) return;  // no device code for this GPU: said on stderr"]
    for i, launch in enumerate(launches):
        if i == own:
            lines.append("    floor_note();  // none of the rung's own launches is in this build for this call")
        test = condition(launch)
        if test is None:
            lines.append(f"    launch_{i}({GEMM_ARGS});  // {labels[i]}: always")
            break
        lines.append(f"    if ({test}) {{  // {labels[i]}: {launch.precondition}\n"
                     f"        launch_{i}({GEMM_ARGS});\n        return;\n    }}")
    body = "\n".join(lines)
    return ("// A, B and C are device pointers; the caller synchronises after the call.\n"
            f'extern "C" void solve({GEMM_PARAMS}) {{\n    using namespace gemmlab_host;\n'
            f"{body}\n}}\n")

def split_lines(depth: int, slots: str, chain: int = handoff.LONGEST_CHAIN) -> list[str]:
    """C++ that sets ``parts`` from ``tiles``, ``k_tiles``, N and K as `handoff.parts` does, from
    `handoff.fewest` with `chain`."""
    return [f"const int parts = {handoff.split_call('tiles', 'k_tiles', slots, depth, chain)};"]


def split_grid_body(launch: Launch, variants: Variants) -> list[str]:
    """`SplitGrid`: the tile grid with a third dimension, the split-K parts (`handoff.parts`), with
    scratch for the saved parts and the counters."""
    rows, cols = launch.tile
    slots = f"sm_count() * {int(launch.defines['MIN_BLOCKS'])}"
    lines = [f"// SplitGrid: parts per tile where the tiles leave the {slots} slots idle (handoff.parts)",
             f"const int tiles = ceil_div(K, {cols}) * ceil_div(M, {rows}), k_tiles = ceil_div(N, {launch.depth});",
             *split_lines(launch.depth, slots, launch.host.chain),
             "const int saved = parts > 1 ? tiles * parts : 0;  // a slot per part; unsplit none",
             f"float* work = saved ? (float*)workspace((size_t)saved * "
             f"{launch.host.slot_floats(launch) * 4}) : nullptr;",
             f"unsigned* counters = handoff_counters({handoff.COUNTERS});",
             "if ((saved && !work) || !counters) return;"]
    grid = f"dim3(ceil_div(K, {cols}), ceil_div(M, {rows}), parts)"
    return lines + kernel_launch(launch.kernel, variants, grid, "A, B, C, M, N, K, work, counters", "main")


def padded_body(launch: Launch, variants: Variants) -> list[str]:
    """`PaddedOperands`: A and B copied into 16-byte rows (the layout of `PaddedOperands.layout`),
    the kernel, C copied back."""
    width, align = pad.PAD_BLOCK_COLS, pad.ALIGN

    def copy(args: str, cols: str, rows: str, tag: str) -> list[str]:
        return kernel_launch(pad.PAD_COPY, variants, f"dim3(ceil_div({cols}, {width}), {rows})", args, tag)

    lines = ["// PaddedOperands: the kernel runs on copies in rows of a multiple of 4 floats",
             "const int n4 = (N + 3) / 4 * 4, k4 = (K + 3) / 4 * 4;  // pitch(N), pitch(K)",
             f"const size_t b_at = round_up((size_t)M * n4 * 4, {align});",
             f"const size_t c_at = b_at + round_up((size_t)n4 * k4 * 4, {align});",
             f"const size_t total = c_at + round_up((size_t)M * k4 * 4, {align});",
             "char* base = workspace(total);", "if (!base) return;",
             "float* a = (float*)base;", "float* b = (float*)(base + b_at);",
             "float* c = (float*)(base + c_at);"]
    lines += copy("A, a, M, N, N, M, n4", "n4", "M", "pad_a")
    lines += copy("B, b, N, K, K, n4, k4", "k4", "n4", "pad_b")
    # The padded problem, as the kernel sees it: N and K shadowed by their pitches.
    lines += ["{", "    const int N = n4, K = k4;"]
    lines += [f"    {line}" for line in main_launch(launch, variants, "a, b, c, M, N, K")]
    lines += ["}"]
    lines += copy("c, C, M, K, k4, M, K", "K", "M", "unpad_c")
    return lines
