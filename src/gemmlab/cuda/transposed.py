"""The host side of a launch that reads Aᵀ: one pre-pass writes A (M×N) transposed.

bigtile's A_T path wants, for each reduction index, a thread's 8 values of A
as two 16-byte loads: that is a row of Aᵀ. So every call first writes Aᵀ,
N rows of pitch(M) floats (zeros in the padding), into the workspace, and the
kernel runs with ``(Aᵀ, B, C, M, N, K)``. Aᵀ is the workspace's, hence always
aligned and in rows of a multiple of 4: the kernel's A side needs nothing of
the caller's shape or pointer. At the performance shape the pass moves 2 × 128
MB, about 1 % of the product's time.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from . import launch as cl
from .hopper import TRANSPOSE_TILE as TILE  # the pre-pass file's square tile
from .rung import Call, Kernel, Launch, Step

TRANSPOSE_FP32 = Kernel("hopper_prepass.cu", "transpose_fp32", (256, 1))


def pitch(x: int) -> int:
    """A row length in floats rounded up to a multiple of 4 (16 bytes)."""
    return -(-x // 4) * 4


@dataclass(frozen=True)
class TransposedA:
    """Host of a launch whose kernel reads Aᵀ from the workspace."""

    label = "Aᵀ pre-pass"

    def kernels(self, launch: Launch) -> tuple[Kernel, ...]:
        return (TRANSPOSE_FP32,)

    def workspace_bytes(self, launch: Launch, m: int, n: int, k: int) -> int:
        return n * pitch(m) * 4

    def steps(self, launch: Launch, call: Call, workspace: torch.Tensor) -> list[Step]:
        m, n = call.m, call.n
        at = workspace.data_ptr()
        # The transpose reads its source as "N×K" rows: here A's M rows of N.
        grid = (-(-n // TILE), -(-pitch(m) // TILE), 1)
        return [
            Step(TRANSPOSE_FP32, grid, (call.a.data_ptr(), at, cl.i32(m), cl.i32(n), cl.i32(pitch(m)))),
            Step(launch.kernel, launch.grid(m, call.k), (at, *call.gemm_args()[1:])),
        ]
