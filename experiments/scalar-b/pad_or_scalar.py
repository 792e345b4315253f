"""Where B's padded copy costs more than 4-byte copies of B (GPU; about a minute).

A b-padded winner of an odd class first copies B into rows of pitch(K) floats (one streaming pass
over B, 8 bytes an element), then runs 16-byte copies. Its twin (`twins.scalar_twin`) reads B as
it lies by 4-byte cp.async: no pass, four times the copy instructions. The pass's share falls as
1/M; the copies' cost does not. Prediction (twins.SCALAR_B_ROWS): the twin wins below M ≈ 800,
by about 35 % at M = 116 (the pass moves 400 MB at 116×6278×7990, about 110 µs of 444).

For each shape: cuBLAS FP32, the class's b-padded winner, its scalar twin, and `default` (which
now runs the twin where M ≤ SCALAR_B_ROWS), GPU time per call, with each one's elements outside
LeetGPU's tolerance against the float64 product, and the SM clock.

Usage: python experiments/scalar-b/pad_or_scalar.py [--out FILE.json]
"""
import dataclasses
import json
import sys
from functools import partial
from statistics import median

import torch

from gemmlab.policy import twins
from gemmlab import launches as builders
from gemmlab import registry, runtime
from gemmlab.cuda.dispatch import CudaSolver
from gemmlab.measure.device import ClockSampler
from gemmlab.measure.inputs import uniform
from gemmlab.measure.timing import time_interleaved
from gemmlab.reference import error_figures, reference64
from gemmlab.policy import default

runtime.configure()
torch.backends.cuda.matmul.allow_tf32 = False  # cuBLAS FP32, as LeetGPU's check
dev = torch.device("cuda")
SHAPES = [(m, 6278, 7990) for m in (64, 116, 256, 512, 768, 1024, 1536)] + \
         [(m, 3001, 5001) for m in (128, 384, 640, 896)] + [(367, 2967, 661), (640, 4093, 2050)]


def winner_at(a, b, c, m, n, k):
    """The class winner `default` would reach at this shape (its launches named by a class key alone)."""
    return next(x for x in default.launches() if " " not in x.name and x.applies(a, b, c, m, n, k))


rows = []
for m, n, k in SHAPES:
    a, b = uniform((m, n), 1, dev, -10, 10), uniform((n, k), 2, dev, -10, 10)
    outs = {x: torch.empty(m, k, device=dev) for x in ("torch", "padded", "scalar", "default")}
    win = winner_at(a, b, outs["padded"], m, n, k)
    solvers = {"padded": CudaSolver((dataclasses.replace(win, when=None),)),
               "scalar": CudaSolver((dataclasses.replace(twins.scalar_twin(win), when=None),))}
    calls = {"torch": partial(torch.matmul, a, b, out=outs["torch"]),
             **{x: partial(s, a, b, outs[x], m, n, k) for x, s in solvers.items()},
             "default": partial(registry.get("default").solve, a, b, outs["default"], m, n, k)}
    with ClockSampler() as clocks:
        times, errors = time_interleaved(calls, outs, 5, 30, True)
    ref = reference64(a, b)
    clock = clocks.summary()
    row = {"shape": [m, n, k], "class_winner": win.name, "clocks": clock, "errors": errors}
    for x in calls:
        fig = error_figures(outs[x], ref)
        row[x] = {"median_us": median(times[x]) * 1e3, "exact_violations": fig.exact_violations,
                  "unwritten": fig.unwritten, "nonfinite": fig.nonfinite}
    rows.append(row)
    t = row["torch"]["median_us"]
    print(f"{m}x{n}x{k} [{win.name}] clock {clock.get('sm_clock_mhz')} MHz: " + "  ".join(
        f"{x} {row[x]['median_us']:.1f} µs ({t / row[x]['median_us']:.2f}×, {row[x]['exact_violations']} out,"
        f" {row[x]['unwritten']} unwritten)" for x in calls), flush=True)
if "--out" in sys.argv:
    with open(sys.argv[sys.argv.index("--out") + 1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)
