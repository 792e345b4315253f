"""The cases a solution is judged on, and the inputs drawn for each.

Inputs are fresh for every case: zero-mean uniform values from a seed that
is reported, so any failure can be replayed. Never zeros: they hide unwritten
outputs and wrong indexing. Most cases draw from [-1, 1) like LeetGPU's
functional tests; the ``wide`` group draws from [-10, 10) like its timed
case, so a solution cannot pass by being right on one range only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import problem
from ..exits import UsageError

# The measurement layer draws every input; the judge's modules take these two from here.
from ..measure.inputs import fresh_seed as fresh_seed
from ..measure.inputs import uniform

if TYPE_CHECKING:  # imported where inputs are made: the command line lists the groups without it
    import torch

#: The study notes' nine correctness shapes (M, N, K).
NOTES_SHAPES = (
    (1, 1, 1), (2, 2, 2), (1, 3, 1), (17, 19, 23), (127, 129, 131),
    (64, 96, 128), (128, 128, 128), (129, 96, 132), (256, 96, 256),
)
#: The odd shapes among LeetGPU's public functional tests.
LEETGPU_SHAPES = (
    (1, 1, 1), (1, 5, 3), (5, 3, 1), (2, 3, 1), (8, 6, 10), (16, 12, 20), (32, 8, 16), (8, 16, 32),
)
#: One dimension at the limit, the others small: grid extents and index arithmetic.
EDGE_SHAPES = ((8192, 3, 5), (3, 8192, 5), (5, 3, 8192), (4, 8192, 4))
#: Checked with LeetGPU's timing distribution, U[-10, 10).
WIDE_SHAPES = ((17, 19, 23), (64, 96, 128), (129, 96, 132))
WIDE_LOW, WIDE_HIGH = -10.0, 10.0
#: Every case group, in the order the cases run.
GROUPS = ("example", "notes", "leetgpu", "edge", "random", "wide", "perf")


@dataclass(frozen=True)
class Case:
    name: str
    group: str  # one of GROUPS, or custom / timed
    shape: tuple[int, int, int]
    example: problem.Example | None = None
    low: float = -1.0
    high: float = 1.0
    gpu_only: bool = False


def random_shapes(count: int, seed: int, limit: int = 300) -> list[tuple[int, int, int]]:
    rng = random.Random(seed)
    return [tuple(rng.randint(1, limit) for _ in range(3)) for _ in range(count)]  # type: ignore[misc]


def standard_cases(seed: int, n_random: int = 3, perf: bool = True) -> list[Case]:
    out = [Case(e.name, "example", e.shape, example=e) for e in problem.EXAMPLES]
    out += [Case(f"notes-{m}x{n}x{k}", "notes", (m, n, k)) for m, n, k in NOTES_SHAPES]
    out += [Case(f"leetgpu-{m}x{n}x{k}", "leetgpu", (m, n, k)) for m, n, k in LEETGPU_SHAPES]
    out += [Case(f"edge-{m}x{n}x{k}", "edge", (m, n, k)) for m, n, k in EDGE_SHAPES]
    out += [Case(f"random-{m}x{n}x{k}", "random", (m, n, k)) for m, n, k in random_shapes(n_random, seed)]
    out += [Case(f"wide-{m}x{n}x{k}", "wide", (m, n, k), low=WIDE_LOW, high=WIDE_HIGH)
            for m, n, k in WIDE_SHAPES]
    if perf:
        out.append(Case("perf-8192x6144x4096", "perf", problem.PERF_SHAPE, gpu_only=True))
    return out


def check_selection(groups: list[str] | None, perf: bool) -> None:
    """UsageError where the groups asked for hold no case once the performance case is left out."""
    if groups and not perf and set(groups) <= {"perf"}:
        raise UsageError("--group perf is the performance case alone, and --no-perf (or --sanitize) "
                         "leaves it out: no case would run")


def timed_case(shape: tuple[int, int, int], index: int) -> Case:
    """A timed call: LeetGPU's timing inputs, judged like every other call."""
    return Case(f"timed-{index}", "timed", tuple(shape), low=WIDE_LOW, high=WIDE_HIGH)  # type: ignore[arg-type]


def make_inputs(case: Case, seed: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """A and B for a case: the published example, or fresh uniform values."""
    if case.example is not None:
        import torch

        a = torch.tensor(case.example.a, dtype=torch.float32, device=device)
        b = torch.tensor(case.example.b, dtype=torch.float32, device=device)
        return a, b
    m, n, k = case.shape
    return uniform((m, n), seed, device, case.low, case.high), uniform((n, k), seed + 1, device, case.low, case.high)
