"""The host side of a launch that reads Aᵀ: one pre-pass writes A (M×N) transposed.

bigtile's A_T path wants, for each reduction index, a thread's 8 values of A
as two 16-byte loads: that is a row of Aᵀ. So every call first writes Aᵀ,
N rows of pitch(M) floats (zeros in the padding), into the workspace, and the
kernel runs with ``(Aᵀ, B, C, M, N, K)``. Aᵀ is the workspace's, hence always
aligned and in rows of a multiple of 4: the kernel's A side needs nothing of
the caller's shape or pointer. At the performance shape the pass moves 2 × 201
MB (A is 8192×6144), a small share of the product's time (bigtile.md).

With ``pad_b`` the plan also copies B into rows of pitch(K) floats (pad.cu's
pad_copy; zeros in the padding, which only ever lands in columns of C that are
not stored), so that the kernel's 16-byte copies serve any K: a K that is not a
multiple of 4 costs one more streaming pass, not the 4-byte copies' issue slots.

With the kernel's TMA_COPY 1 (the `tma` rung, bigtile_tma.md) the tiles
come by TMA: the kernel takes descriptors of Aᵀ and of B (or its padded copy) in place of
their pointers, boxes of BK rows by the tile's width, unswizzled (the layout the copies write).

With ``split`` (bigtile's SPLIT 1) the grid has a third dimension, the parts
each tile's reduction is split into (`handoff.parts`, 1 where the tiles fill
the GPU), and the kernel takes two more arguments: scratch for the parts'
sums (one slot per part, after the operands) and the hand-off counters.
With ``tail`` too (SPLIT 2, no rung runs it yet: experiments/tail-split) the
grid is a line of blocks whose tiles need not all have as many parts
(`handoff.tail_plan`: the last wave's tiles in more parts), and the kernel
takes the plan's three numbers after the counters (export/host_tail.cuh is
the plan in C++).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

from . import driver as cl
from . import handoff
from .dispatch import Call, Kernel, KernelCall, Launch
from .hopper import TRANSPOSE_TILE as TILE  # the pre-pass file's square tile
from .pad import PAD_BLOCK_COLS, PAD_COPY, pitch, up
from .tma import matrix_map

TRANSPOSE_FP32 = Kernel("prepass.cu", "transpose_fp32", (256, 1))
#: Accumulators per thread of bigtile (8×16): what a split part saves.
ACCUMULATORS = 128


@dataclass(frozen=True)
class TransposedA:
    """Host of a launch whose kernel reads Aᵀ (and, with ``pad_b``, a padded B) from the workspace."""

    pad_b: bool = False
    split: bool = False
    tail: bool = False  # with split: a line of blocks, the last wave's tiles in more parts (SPLIT 2)

    @property
    def label(self) -> str:
        text = "Aᵀ, padded B pre-passes" if self.pad_b else "Aᵀ pre-pass"
        # Split only where the tiles do not fill the GPU (handoff.parts): say so, since the label
        # is shown beside timings at shapes (the performance shape) that run unsplit.
        text += ", split-K where the tiles leave SMs idle" if self.split else ""
        return text + (", the last wave's tiles in more parts" if self.split and self.tail else "")

    @staticmethod
    def parts(launch: Launch, m: int, n: int, k: int) -> int:
        """Split-K parts per tile (SPLIT 1): the policy, `handoff.parts`."""
        return handoff.parts(*handoff.policy(launch, m, n, k))

    @staticmethod
    def plan(launch: Launch, m: int, n: int, k: int) -> handoff.TailPlan:
        """Split-K parts of the line of blocks (SPLIT 2): the policy, `handoff.tail_plan`."""
        return handoff.tail_plan(*handoff.policy(launch, m, n, k))

    def kernels(self, launch: Launch) -> tuple[Kernel, ...]:
        return (TRANSPOSE_FP32, PAD_COPY) if self.pad_b else (TRANSPOSE_FP32,)

    @staticmethod
    def layout(m: int, n: int, k: int) -> tuple[int, int]:
        """Byte offset of the padded B in the workspace (Aᵀ at 0), and the size with it."""
        b_at = up(n * pitch(m) * 4)
        return b_at, b_at + n * pitch(k) * 4

    def operand_bytes(self, m: int, n: int, k: int) -> int:
        return self.layout(m, n, k)[1] if self.pad_b else n * pitch(m) * 4

    def workspace_bytes(self, launch: Launch, m: int, n: int, k: int) -> int:
        if not self.split:
            return self.operand_bytes(m, n, k)
        if self.tail:
            saved = self.plan(launch, m, n, k).slot_count
        else:
            across, down = launch.tiles(m, k)
            parts = self.parts(launch, m, n, k)
            saved = across * down * parts if parts > 1 else 0  # a slot per part; unsplit none
        return up(self.operand_bytes(m, n, k)) + saved * handoff.slot_floats(launch.threads, ACCUMULATORS) * 4

    def kernel_calls(self, launch: Launch, call: Call, workspace: torch.Tensor) -> list[KernelCall]:
        m, n, k = call.m, call.n, call.k
        at = workspace.data_ptr()
        # The transpose reads its source as "N×K" rows: here A's M rows of N.
        grid = (-(-n // TILE), -(-pitch(m) // TILE), 1)
        calls = [KernelCall(TRANSPOSE_FP32, grid, (call.a.data_ptr(), at, cl.i32(m), cl.i32(n), cl.i32(pitch(m))))]
        b = call.b.data_ptr()
        if self.pad_b:
            b_pad = at + self.layout(m, n, k)[0]
            cols = pitch(k)
            calls.append(KernelCall(PAD_COPY, (-(-cols // PAD_BLOCK_COLS), n, 1),
                              (b, b_pad, *map(cl.i32, (n, k, k, n, cols)))))
            b = b_pad
        operands = (at, b)
        if launch.defines.get("TMA_COPY"):  # the tiles by TMA: descriptors of Aᵀ and of B (or its copy)
            rows, cols = launch.tile
            operands = (matrix_map(at, n, m, pitch(m) * 4, launch.depth, rows, swizzle_bytes=0),
                        matrix_map(b, n, k, (pitch(k) if self.pad_b else k) * 4, launch.depth, cols,
                                   swizzle_bytes=0))
        if not self.split:
            calls.append(KernelCall(launch.kernel, launch.grid(m, k), (*operands, *call.gemm_args()[2:])))
            return calls
        work = at + up(self.operand_bytes(m, n, k))
        if self.tail:
            plan = self.plan(launch, m, n, k)
            counters = handoff.counters(call.a.device, plan.slot_count).data_ptr()
            numbers = map(cl.i32, (plan.lead, plan.lead_parts, plan.tail_parts))
            calls.append(KernelCall(launch.kernel, (plan.blocks, 1, 1),
                              (*operands, *call.gemm_args()[2:], work, counters, *numbers)))
            return calls
        across, down, _ = launch.grid(m, k)
        parts = self.parts(launch, m, n, k)
        counters = handoff.counters(call.a.device, across * down * parts if parts > 1 else 0).data_ptr()
        calls.append(KernelCall(launch.kernel, (across, down, parts), (*operands, *call.gemm_args()[2:], work, counters)))
        return calls
