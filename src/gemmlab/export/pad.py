"""`pad.PaddedOperands` in C++: A and B copied into 16-byte rows, the kernel, C copied back.

Step for step as `PaddedOperands.steps` plans a call, with its `layout`.
"""

from __future__ import annotations

from ..cuda import pad
from ..cuda.dispatch import Launch
from .host import kernel_launch, main_launch
from .source import Variants


def layout_lines() -> list[str]:
    """C++ that sets ``n4``, ``k4``, ``b_at``, ``c_at`` and ``total`` as `PaddedOperands.layout` does."""
    align = pad.ALIGN
    return [
        "const int n4 = (N + 3) / 4 * 4, k4 = (K + 3) / 4 * 4;  // pitch(N), pitch(K)",
        f"const size_t b_at = round_up((size_t)M * n4 * 4, {align});",
        f"const size_t c_at = b_at + round_up((size_t)n4 * k4 * 4, {align});",
        f"const size_t total = c_at + round_up((size_t)M * k4 * 4, {align});",
    ]


def body(launch: Launch, variants: Variants) -> list[str]:
    width = pad.PAD_BLOCK_COLS

    def copy(args: str, cols: str, rows: str, tag: str) -> list[str]:
        return kernel_launch(pad.PAD_COPY, variants, f"dim3(ceil_div({cols}, {width}), {rows})", args, tag)

    lines = ["// PaddedOperands: the kernel runs on copies in rows of a multiple of 4 floats",
             *layout_lines(), "char* base = workspace(total);", "if (!base) return;",
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
