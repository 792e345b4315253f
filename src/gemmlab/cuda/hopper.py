"""The host side of the wgmma rungs: pre-passes, workspace and TMA descriptors.

TF32 wgmma reads both shared-memory operands with the reduction index
contiguous. A (M×N, row-major) already is; B (N×K) is not, so every call
first writes Bᵀ, rounded to TF32, into the workspace (about 55 µs at the
performance shape). A is read in place by TMA where its rows can be
described (N % 4 == 0, a 16-byte aligned pointer); otherwise, or where the
rung wants both operands rounded before the product, a second pre-pass
copies A rounded into rows padded to a multiple of 4 floats.

Then the descriptors are encoded (cached by address and shape) and the main
kernel runs with ``(tma_a, tma_b, C, M, N, K)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from . import launch as cl
from .rung import Call, Kernel, Launch, Step
from .tma import matrix_map

#: The reduction step of a stage: one 128-byte row of floats, the span of the 128-byte swizzle.
STEP = 32
SWIZZLE_BYTES = 128
TRANSPOSE = Kernel("hopper_prepass.cu", "transpose_tf32", (256, 1))
TRANSPOSE_TILE = 64
ROUND_ROWS = Kernel("hopper_prepass.cu", "round_rows_tf32", (256, 1))
_ALIGN = 1024


def pitch(n: int) -> int:
    """Row length in floats of a pre-pass output: a multiple of 4, so rows are 16-byte aligned."""
    return -(-n // 4) * 4


def _up(nbytes: int) -> int:
    return -(-nbytes // _ALIGN) * _ALIGN


def stage_bytes(tile: tuple[int, int]) -> int:
    rows, cols = tile
    return (rows + cols) * STEP * 4


def dynamic_smem(tile: tuple[int, int], barriers_per_stage: int):
    """Shared bytes as a function of the macros: STAGES stages, the slack to align them
    to 1024 bytes, and the 8-byte mbarriers."""

    def smem(defines) -> int:
        stages = defines["STAGES"]
        return stages * stage_bytes(tile) + _ALIGN + 8 * barriers_per_stage * stages

    return smem


def a_in_place(a, b, c, m, n, k) -> bool:
    """TMA can read A where it lies."""
    return n % 4 == 0 and a.data_ptr() % 16 == 0


@dataclass(frozen=True)
class TmaOperands:
    """Host of a wgmma launch: Bᵀ always made by a pre-pass; A copied and rounded when ``copy_a``."""

    copy_a: bool

    def kernels(self, launch: Launch) -> tuple[Kernel, ...]:
        return (TRANSPOSE, ROUND_ROWS) if self.copy_a else (TRANSPOSE,)

    def workspace_bytes(self, launch: Launch, m: int, n: int, k: int) -> int:
        bt = _up(k * pitch(n) * 4)
        return bt + (_up(m * pitch(n) * 4) if self.copy_a else 0)

    def steps(self, launch: Launch, call: Call, workspace: torch.Tensor) -> list[Step]:
        m, n, k = call.m, call.n, call.k
        ld = pitch(n)
        bt = workspace.data_ptr()
        tt = TRANSPOSE_TILE
        steps = [Step(TRANSPOSE, (-(-k // tt), -(-ld // tt), 1),
                      (call.b.data_ptr(), bt, cl.i32(n), cl.i32(k), cl.i32(ld)))]
        if self.copy_a:
            a, a_pitch = bt + _up(k * ld * 4), ld * 4
            steps.append(Step(ROUND_ROWS, (-(-ld // 256), m, 1),
                              (call.a.data_ptr(), a, cl.i32(m), cl.i32(n), cl.i32(ld))))
        else:
            a, a_pitch = call.a.data_ptr(), n * 4
        rows, cols = launch.tile
        # In a cluster, each block loads its share of the B stage and multicasts it.
        share = cols // launch.kernel.cluster[0]
        tma_a = matrix_map(a, m, n, a_pitch, rows, STEP, SWIZZLE_BYTES)
        tma_b = matrix_map(bt, k, n, ld * 4, share, STEP, SWIZZLE_BYTES)
        args = (tma_a, tma_b, call.c.data_ptr(), cl.i32(m), cl.i32(n), cl.i32(k))
        return steps + [Step(launch.kernel, launch.grid(m, k), args)]
