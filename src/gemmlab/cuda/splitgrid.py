"""The host side of a launch that splits each tile's reduction across grid z, operands in place.

The `small` rung's kernel reads A and B where they lie and takes two more arguments than
``(A, B, C, M, N, K)``: scratch for the parts' sums and the hand-off counters (`handoff`). The
grid is the tile grid with a third dimension, the parts (`handoff.parts` for MIN_BLOCKS blocks
per SM; 1 where the tiles fill the GPU, and then nothing is saved).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

from . import driver as cl
from . import handoff
from .dispatch import Call, Kernel, Launch, Step

#: Accumulators per thread of the `small` kernel (4×4): what a split part saves.
ACCUMULATORS = 16


def policy(launch: Launch, m: int, n: int, k: int, chain: int = handoff.LONGEST_CHAIN) -> tuple[int, ...]:
    """What the split policy is given: tiles, reduction steps, resident slots (MIN_BLOCKS blocks
    per SM), the step, and the least parts (`handoff.fewest`)."""
    slots = cl.sms() * int(launch.defines["MIN_BLOCKS"])
    across, down = launch.tiles(m, k)
    return across * down, -(-n // launch.step), slots, launch.step, handoff.fewest(n, k, chain)


@dataclass(frozen=True)
class SplitGrid:
    """Host of a launch whose kernel splits the reduction over grid z and reads A and B in place;
    each part saves `accumulators` floats a thread (`small` 16, `mma-split` 32)."""

    accumulators: int = ACCUMULATORS
    #: The threads whose sums a part saves, the block's first (`thin`'s sums sit in a few); 0: all.
    savers: int = 0
    #: The longest chain a part sums where N or K is odd (`handoff.fewest`); 0: unbounded (TF32).
    chain: int = handoff.LONGEST_CHAIN
    label = "split-K where the tiles leave SMs idle"

    def slot_floats(self, launch: Launch) -> int:
        """Floats of one part's saved sums (its slot in the scratch)."""
        return handoff.slot_floats(self.savers or launch.threads, self.accumulators)

    def parts(self, launch: Launch, m: int, n: int, k: int) -> int:
        return handoff.parts(*policy(launch, m, n, k, self.chain))

    def kernels(self, launch: Launch) -> tuple[Kernel, ...]:
        return ()

    def workspace_bytes(self, launch: Launch, m: int, n: int, k: int) -> int:
        across, down = launch.tiles(m, k)
        parts = self.parts(launch, m, n, k)
        saved = across * down * parts if parts > 1 else 0
        return saved * self.slot_floats(launch) * 4

    def steps(self, launch: Launch, call: Call, workspace: torch.Tensor | None) -> list[Step]:
        m, n, k = call.m, call.n, call.k
        across, down, _ = launch.grid(m, k)
        parts = self.parts(launch, m, n, k)
        work = workspace.data_ptr() if workspace is not None else 0
        counters = handoff.counters(call.a.device, across * down * parts if parts > 1 else 0).data_ptr()
        return [Step(launch.kernel, (across, down, parts), (*call.gemm_args(), work, counters))]
