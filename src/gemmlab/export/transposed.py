"""`transposed.TransposedA` in C++: Aᵀ written into the workspace, then the kernel reads it.

Step for step as `TransposedA.steps` plans a call.
"""

from __future__ import annotations

from ..cuda import transposed
from ..cuda.rung import Launch
from .host import kernel_launch, main_launch
from .source import Variants


def body(launch: Launch, variants: Variants) -> list[str]:
    tile = transposed.TILE
    lines = ["// TransposedA: the kernel reads Aᵀ (N rows of pitch(M) floats) from the workspace",
             "const int m4 = (M + 3) / 4 * 4;  // pitch(M)",
             "float* at = (float*)workspace((size_t)N * m4 * 4);", "if (!at) return;"]
    lines += kernel_launch(transposed.TRANSPOSE_FP32, variants,
                           f"dim3(ceil_div(N, {tile}), ceil_div(m4, {tile}))", "A, at, M, N, m4", "transpose_a")
    lines += main_launch(launch, variants, "at, B, C, M, N, K")
    return lines
