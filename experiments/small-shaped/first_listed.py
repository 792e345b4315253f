"""Why the implementation listed first after cuBLAS reads slower at tiny shapes (GPU; seconds).

On the H200 (2026-12-02, f4798d7) `gemmlab bench X Y Z --shape 152x2x74` read whichever of
default, small and thin came first 0.55 µs slower (5.5 µs against 4.93), the same kernel in all
three. The timing loop rotates the order each round, so the place in a round is not it. What is
left that follows the list: the order of the warm-ups and the order the outputs C are allocated.
Here the two are set apart: the warm-up order is the dict's, the allocation order given.

Usage: python experiments/small-shaped/first_listed.py
"""
from functools import partial
from statistics import median

import torch

from gemmlab import registry
from gemmlab.measure.timing import time_interleaved

m, n, k = 152, 2, 74
gen = torch.Generator(device="cuda").manual_seed(1)
a = torch.rand(m, n, device="cuda", generator=gen) - 0.5
b = torch.rand(n, k, device="cuda", generator=gen) - 0.5
names = ["torch", "default", "small", "thin"]
for warm, alloc in ((names, names), (names, ["torch", "thin", "small", "default"]),
                    (["torch", "thin", "small", "default"], names)):
    outs = {x: torch.empty(m, k, device="cuda") for x in alloc}
    calls = {x: partial(registry.get(x).solve, a, b, outs[x], m, n, k) for x in warm}
    times, _ = time_interleaved(calls, outs, 5, 80, True, queue_ahead=True)
    print("warm-up", warm[1:], "alloc", alloc[1:], " ".join(f"{x} {median(times[x]) * 1e3:.2f}" for x in names))
