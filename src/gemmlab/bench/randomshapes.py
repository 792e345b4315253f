"""Shapes drawn at random, the set a claim about "every shape" is judged on (`gemmlab sweep --random`).

A tuner looks where it is told; users bring shapes nobody tuned. So N shapes are drawn,
reproducibly from a seed, from a mixture of `KINDS`: log-uniform over the whole range (most of
them small or skinny), long reductions over few output tiles (where one block per tile leaves most
SMs idle), small shapes (latency, launches, pre-passes) and large ones (throughput). Each dimension
is drawn log-uniformly and rounded, so odd sizes come as often as they would from a user.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import problem


@dataclass(frozen=True)
class Kind:
    name: str
    share: float  # of the N shapes drawn
    m: tuple[int, int]
    n: tuple[int, int]
    k: tuple[int, int]


HI = problem.MAX_DIM
KINDS: tuple[Kind, ...] = (
    Kind("log-uniform", 0.4, (1, HI), (1, HI), (1, HI)),
    Kind("long-reduction", 0.2, (32, 1024), (2048, HI), (32, 1024)),
    Kind("small", 0.2, (1, 512), (1, 512), (1, 512)),
    Kind("large", 0.2, (2048, HI), (2048, HI), (2048, HI)),
)


def counts(n: int) -> dict[str, int]:
    """How many of `n` shapes each kind gets: its share, rounded down, the rest to the first kind."""
    got = {kind.name: int(n * kind.share) for kind in KINDS}
    got[KINDS[0].name] += n - sum(got.values())
    return got


def _log_uniform(rng: np.random.Generator, lo: int, hi: int) -> int:
    return int(min(hi, max(lo, round(math.exp(rng.uniform(math.log(lo), math.log(hi + 1) - 1e-12))))))


def draw(n: int, seed: int) -> list[tuple[str, tuple[int, int, int]]]:
    """`n` (kind, (M, N, K)) pairs, the same for the same seed, kinds in KINDS order."""
    rng = np.random.default_rng(seed)
    shapes = []
    for kind in KINDS:
        for _ in range(counts(n)[kind.name]):
            shapes.append((kind.name, (_log_uniform(rng, *kind.m), _log_uniform(rng, *kind.n),
                                       _log_uniform(rng, *kind.k))))
    return shapes
