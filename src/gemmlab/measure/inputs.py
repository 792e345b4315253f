"""The operands a measurement draws: zero-mean uniform values from a reported seed, never zeros,
which hide unwritten outputs and wrong indexing. Timings draw from LeetGPU's range, [-10, 10).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

#: LeetGPU's performance inputs are uniform in [-10, 10).
TIMING_LOW, TIMING_HIGH = -10.0, 10.0


def fresh_seed() -> int:
    """A seed nobody chose (32 bits from the OS), to be reported with what it drew."""
    return int.from_bytes(os.urandom(4), "little")


def uniform(shape: tuple[int, int], seed: int, device: torch.device, low: float = -1.0,
            high: float = 1.0) -> torch.Tensor:
    """A float32 matrix of `shape`, uniform in [low, high), the same for the same seed and device."""
    import torch

    g = torch.Generator(device=device)
    g.manual_seed(seed)
    t = torch.rand(shape, generator=g, device=device, dtype=torch.float32)
    return t.mul_(high - low).add_(low)


def timing_operands(shape: tuple[int, int, int], seed: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """A (M×N) and B (N×K) for a timing at `shape`: LeetGPU's timing range, seeds `seed` and `seed + 1`."""
    m, n, k = shape
    return (uniform((m, n), seed, device, TIMING_LOW, TIMING_HIGH),
            uniform((n, k), seed + 1, device, TIMING_LOW, TIMING_HIGH))


def result_bits(solve, shape: tuple[int, int, int], seed: int, device: torch.device) -> torch.Tensor:
    """C's raw bits (int32) from one call of `solve(A, B, C, M, N, K)` on `timing_operands(shape,
    seed)`, C filled with NaN first: what an experiment compares bit for bit between two builds,
    or two calls of one."""
    import torch

    m, n, k = shape
    a, b = timing_operands(shape, seed, device)
    c = torch.full((m, k), float("nan"), device=device)
    solve(a, b, c, m, n, k)
    torch.cuda.synchronize(device)
    return c.view(torch.int32).clone()
