"""The host side of the wgmma rungs: pre-passes, workspace and TMA descriptors.

TF32 wgmma reads both shared-memory operands with the reduction index
contiguous. A (M×N, row-major) already is; B (N×K) is not, so every call
first writes Bᵀ into the workspace: rounded to TF32 (steps 4.3, 4.4), or split
into the 3xTF32 planes hi and lo (step 5.3). A is read in place by TMA where
its rows can be described (N % 4 == 0, a 16-byte aligned pointer); otherwise,
or where a rung wants it rounded before the product, a pre-pass copies it into
rows padded to a multiple of 4 floats (rounded, or as it is for 3xTF32, which
splits A itself).

Then the descriptors are encoded (cached by address and shape) and the main
kernel runs with ``(tma_a, tma_b…, C, M, N, K)``, and for 3xTF32 the flag, which
its consumers raise where A holds ±Inf or NaN or a value that rounds past
FLT_MAX. The 3xTF32 plan ends with a strict-FP32 kernel that does nothing
unless the flag was raised (by the split of B or by the main kernel).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import torch

from . import driver as cl
from . import handoff
from .dispatch import Call, Kernel, KernelCall, Launch
from .needs import Needs, When
from .pad import ALIGN, pitch, up  # the workspace's alignment and row pitch, as the other hosts
from .tma import matrix_map

#: The reduction depth of a stage: one 128-byte row of floats, the span of the 128-byte swizzle.
DEPTH = 32
SWIZZLE_BYTES = 128
_PREPASS = "prepass.cu"
# The TF32 roundings (cvt.rna.tf32) are sm_80's; the plain copies run anywhere.
TRANSPOSE = Kernel(_PREPASS, "transpose_tf32", (256, 1), needs=Needs.SM80)
TRANSPOSE_SPLIT = Kernel(_PREPASS, "transpose_split_tf32", (256, 1), needs=Needs.SM80)
TRANSPOSE_TILE = 64
ROUND_ROWS = Kernel(_PREPASS, "round_rows_tf32", (256, 1), needs=Needs.SM80)
PAD_ROWS = Kernel(_PREPASS, "pad_rows", (256, 1))
CLEAR_FLAG = Kernel(_PREPASS, "clear_flag", (1, 1))
SPECIAL = Kernel(_PREPASS, "special_fp32", (256, 1))
SPECIAL_BLOCKS = 1024  # a strided grid: blocks that find the flag clear return at once
#: hopper.cuh's swizzle_aligned starts the stages on the swizzle's 1024-byte period: the
#: dynamic shared memory asked for has that much slack.
SMEM_SLACK = 1024
#: The warp-specialised kernels' consumers (two warpgroups, threads 128–383): the team that meets in
#: splitk.cuh's tree where a call splits, and whose sums a part's slot holds.
CONSUMERS = 256
#: wgmma_3xtf32.cu's accumulators a consumer thread: 64 of its 128×128 tile.
ACCUMULATORS_3X = 64


def dynamic_smem(tile: tuple[int, int], barriers_per_stage: int, b_planes: int = 1):
    """Shared bytes as a function of the macros: STAGES stages of A and the B planes,
    the slack to align them to 1024 bytes, and the 8-byte mbarriers."""
    rows, cols = tile

    def smem(defines) -> int:
        stages = defines["STAGES"]
        stage = (rows + b_planes * cols) * DEPTH * 4
        return stages * stage + SMEM_SLACK + 8 * barriers_per_stage * stages

    return smem


def one_wave(launch: Launch) -> handoff.OneWave:
    """The split-K rule of a persistent wgmma launch with SPLIT: its tiles, depth and cluster."""
    return handoff.OneWave(launch.tile, launch.depth, launch.kernel.cluster[0])


class _OneWaveSplit:
    """What the two wgmma hosts share where their kernel splits (``split``): `handoff.OneWave`'s
    parts, a block an SM; their split scratch after their operands."""

    split: bool

    @property
    def label(self) -> str:
        return "split-K where the tiles leave SMs idle" if self.split else ""

    def parts(self, launch: Launch, m: int, n: int, k: int) -> int:
        """Parts per tile: `handoff.OneWave`'s, for the blocks the GPU holds at once (one an SM)."""
        return one_wave(launch).parts(m, n, k, cl.sms()) if self.split else 1

    @staticmethod
    def _after(operands: int, saved: int) -> int:
        """Workspace bytes: the operands, then the split's slots where there are any."""
        return up(operands) + saved if saved else operands


@dataclass(frozen=True)
class TmaOperands(_OneWaveSplit):
    """Host of a wgmma launch.

    ``a``: "in place" (TMA reads the caller's A), "round" (a rounded, padded copy)
    or "pad" (a padded copy as it is). ``b``: "round" (Bᵀ rounded to TF32) or
    "split" (Bᵀ as 3xTF32 planes hi and lo, and the special-values fallback).

    ``split`` (wgmma_3xtf32.cu's SPLIT 1, with ``b`` "split"): each tile's reduction in
    `parts` parts, units of work of the persistent grid, where the tiles leave SMs idle
    (`handoff.parts`, with no bound on a part's chain: 3xTF32 promotes every step of 32 in IEEE
    FP32, so its chains are N / 32 adds long). The kernel then takes scratch for the parts' sums
    (a slot of 256 × 64 floats a part, after the rest of the workspace), the hand-off counters
    and the parts, on a persistent grid of as many blocks as units, at most one an SM.
    """

    a: Literal["in place", "round", "pad"]
    b: Literal["round", "split"] = "round"
    split: bool = False

    def __post_init__(self):
        if self.split and self.b != "split":
            raise ValueError("TmaOperands: split-K is wgmma_3xtf32.cu's (b='split') only")

    @property
    def planes(self) -> int:
        """Planes of Bᵀ in the workspace."""
        return {"round": 1, "split": 2}[self.b]

    def kernels(self, launch: Launch) -> tuple[Kernel, ...]:
        out = (TRANSPOSE,) if self.b == "round" else (CLEAR_FLAG, TRANSPOSE_SPLIT, SPECIAL)
        return out + {"in place": (), "round": (ROUND_ROWS,), "pad": (PAD_ROWS,)}[self.a]

    def _layout(self, m: int, n: int, k: int) -> tuple[int, list[int], int]:
        """Offsets in the workspace: the flag, the B planes, the A copy, and the total."""
        plane = up(k * pitch(n) * 4)
        flag = ALIGN if self.b == "split" else 0
        b_at = [flag + i * plane for i in range(self.planes)]
        a_at = flag + self.planes * plane
        total = a_at + (up(m * pitch(n) * 4) if self.a != "in place" else 0)
        return a_at, b_at, total

    def _saved_bytes(self, launch: Launch, m: int, n: int, k: int) -> int:
        """A slot per part of every tile where the call splits; none where it does not."""
        parts = self.parts(launch, m, n, k)
        if parts == 1:
            return 0
        return one_wave(launch).units(m, k) * parts * handoff.slot_floats(CONSUMERS, ACCUMULATORS_3X) * 4

    def workspace_bytes(self, launch: Launch, m: int, n: int, k: int) -> int:
        return self._after(self._layout(m, n, k)[2], self._saved_bytes(launch, m, n, k))

    def kernel_calls(self, launch: Launch, call: Call, workspace: torch.Tensor) -> list[KernelCall]:
        m, n, k = call.m, call.n, call.k
        ld = pitch(n)
        base = workspace.data_ptr()
        a_at, b_at, _ = self._layout(m, n, k)
        tt = TRANSPOSE_TILE
        grid = (-(-k // tt), -(-ld // tt), 1)
        sizes = (cl.i32(n), cl.i32(k), cl.i32(ld))
        b_ptr = call.b.data_ptr()
        if self.b == "round":
            calls = [KernelCall(TRANSPOSE, grid, (b_ptr, base + b_at[0], *sizes))]
        else:
            calls = [KernelCall(CLEAR_FLAG, (1, 1, 1), (base,)),
                     KernelCall(TRANSPOSE_SPLIT, grid, (b_ptr, base + b_at[0], base + b_at[1], base, *sizes))]
        if self.a == "in place":
            a, a_pitch = call.a.data_ptr(), n * 4
        else:
            a, a_pitch = base + a_at, ld * 4
            copy = ROUND_ROWS if self.a == "round" else PAD_ROWS
            calls.append(KernelCall(copy, (-(-ld // 256), m, 1),
                              (call.a.data_ptr(), a, cl.i32(m), cl.i32(n), cl.i32(ld))))
        rows, cols = launch.tile
        # In a cluster, each block loads its share of the B stage and multicasts it.
        share = cols // launch.kernel.cluster[0]
        maps = [matrix_map(a, m, n, a_pitch, rows, DEPTH, SWIZZLE_BYTES)]
        maps += [matrix_map(base + at, k, n, ld * 4, share, DEPTH, SWIZZLE_BYTES) for at in b_at]
        flag = (base,) if self.b == "split" else ()
        if not self.split:
            calls.append(KernelCall(launch.kernel, launch.grid(m, k), (*maps, *call.gemm_args()[2:], *flag)))
        else:
            parts = self.parts(launch, m, n, k)
            tiles = one_wave(launch).units(m, k)
            work = base + up(self._layout(m, n, k)[2]) if parts > 1 else 0
            counters = handoff.counters(call.a.device, tiles * parts if parts > 1 else 0).data_ptr()
            # Persistent: as many blocks as units, at most one an SM (the solver trims it to what
            # the GPU holds at once).
            grid = (max(1, min(tiles * parts, cl.sms())), 1, 1)
            calls.append(KernelCall(launch.kernel, grid, (*maps, *call.gemm_args()[2:], *flag, work, counters,
                                                     cl.i32(parts))))
        if self.b == "split":
            tiles16 = -(-m // 16) * -(-k // 16)
            calls.append(KernelCall(SPECIAL, (min(tiles16, SPECIAL_BLOCKS), 1, 1), (base, *call.gemm_args())))
        return calls


#: Columns of B per TMA box of the swapped rung: the 128-byte swizzle's span of floats.
SWAP_BOX = SWIZZLE_BYTES // 4
#: The swapped rung's accumulators a consumer thread (a split part's sums: CONSUMERS × these).
SWAP_ACCUMULATORS = 128
#: When TMA can describe A's, or B's, rows where they lie: a 16-byte row pitch and address.
A_IN_PLACE = When(n=4, align=16, operands="A")
B_IN_PLACE = When(k=4, align=16, operands="B")


@dataclass(frozen=True)
class SwappedOperands(_OneWaveSplit):
    """Host of the swapped wgmma launch (wgmma_swap.cu, C made as Cᵀ = Bᵀ·Aᵀ).

    TMA reads A and B as they lie, through tensor maps of type TFLOAT32: the copy
    engine rounds every value to TF32 on its way into shared memory, so no pass
    rounds or transposes anything. ``padded``: an operand whose rows TMA cannot
    describe (not `A_IN_PLACE` or `B_IN_PLACE`) is first copied as it is into
    rows of ``pitch`` floats; the other is read where it lies.

    ``split`` (the kernel's SPLIT 1): each tile's reduction in `parts` parts, units of work of the
    persistent grid, where the tiles leave SMs idle (`handoff.parts`, with no bound on a part's
    chain: TF32's products are far from FP32's accuracy anyway). The kernel then takes scratch
    for the parts' sums (one slot of 256 × 128 floats a part, after any padded operands), the
    hand-off counters and the parts.
    """

    padded: bool = False
    split: bool = False

    @staticmethod
    def _units(launch: Launch, m: int, k: int) -> tuple[int, int]:
        """(tiles a cluster takes as one, as the kernel counts them; the blocks' own tiles of C)."""
        units = one_wave(launch).units(m, k)
        return units, units * launch.kernel.cluster[0]

    def _saved_bytes(self, launch: Launch, m: int, n: int, k: int) -> int:
        """A slot per part of every block's tile where the call splits; none where it does not."""
        parts = self.parts(launch, m, n, k)
        if parts == 1:
            return 0
        return self._units(launch, m, k)[1] * parts * handoff.slot_floats(CONSUMERS, SWAP_ACCUMULATORS) * 4

    def kernels(self, launch: Launch) -> tuple[Kernel, ...]:
        return (PAD_ROWS,) if self.padded else ()

    @staticmethod
    def _layout(m: int, n: int, k: int) -> tuple[int, int, int]:
        """Offsets of the padded A and B in the workspace, and its size (room for both)."""
        b_at = up(m * pitch(n) * 4)
        return 0, b_at, b_at + up(n * pitch(k) * 4)

    def _operand_bytes(self, m: int, n: int, k: int) -> int:
        return self._layout(m, n, k)[2] if self.padded else 0

    def workspace_bytes(self, launch: Launch, m: int, n: int, k: int) -> int:
        return self._after(self._operand_bytes(m, n, k), self._saved_bytes(launch, m, n, k))

    def kernel_calls(self, launch: Launch, call: Call, workspace: torch.Tensor | None) -> list[KernelCall]:
        m, n, k = call.m, call.n, call.k
        a, a_pitch, b, b_pitch = call.a.data_ptr(), n * 4, call.b.data_ptr(), k * 4
        calls = []

        def pad(src: int, at: int, rows: int, cols: int) -> int:
            """Copy a rows×cols operand into the workspace at `at`; its new row pitch."""
            ld = pitch(cols)
            calls.append(KernelCall(PAD_ROWS, (-(-ld // PAD_ROWS.block[0]), rows, 1),
                              (src, workspace.data_ptr() + at, cl.i32(rows), cl.i32(cols), cl.i32(ld))))
            return ld * 4

        if self.padded:
            a_at, b_at, _ = self._layout(m, n, k)
            args = (call.a, call.b, call.c, m, n, k)
            if not A_IN_PLACE(*args):
                a, a_pitch = workspace.data_ptr() + a_at, pad(a, a_at, m, n)
            if not B_IN_PLACE(*args):
                b, b_pitch = workspace.data_ptr() + b_at, pad(b, b_at, n, k)
        rows, _ = launch.tile
        # In a cluster, each block loads its share of the A tile and multicasts it.
        share = rows // launch.kernel.cluster[0]
        maps = (matrix_map(a, m, n, a_pitch, share, DEPTH, SWIZZLE_BYTES, tf32=True),
                matrix_map(b, n, k, b_pitch, DEPTH, SWAP_BOX, SWIZZLE_BYTES, tf32=True))
        if not self.split:
            calls.append(KernelCall(launch.kernel, launch.grid(m, k), (*maps, *call.gemm_args()[2:])))
            return calls
        parts = self.parts(launch, m, n, k)
        _, blocks = self._units(launch, m, k)
        work = workspace.data_ptr() + up(self._operand_bytes(m, n, k)) if parts > 1 else 0
        counters = handoff.counters(call.a.device, blocks * parts if parts > 1 else 0).data_ptr()
        # Persistent: as many blocks as units, at most one an SM, in whole clusters (the solver
        # trims it to what the GPU holds at once).
        cluster = launch.kernel.cluster[0]
        grid = max(cluster, min(blocks * parts, cl.sms()) // cluster * cluster)
        calls.append(KernelCall(launch.kernel, (grid, 1, 1), (*maps, *call.gemm_args()[2:], work, counters, cl.i32(parts))))
        return calls
