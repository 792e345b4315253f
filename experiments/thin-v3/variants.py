"""thin_rows with 1, 2 or 4 columns a lane, thin_cols with 1, 2 or 4 rows a warp, side by side with
cuBLAS FP32 at thin shapes the random records drew and a few large ones (GPU; about a minute).

Version 3 (a load of the short operand serving 4 columns or rows) took 3126×7755×4 from 0.69× to
1.13× cuBLAS and 6×3645×2740 from 0.65× to 1.08×, but lost where the outputs are few and the
reduction short (4×365×1580: 0.51×, against 0.71× for version 2): 4 times fewer blocks. COLS 1 and
ROWS 1 are version 2's loops. This run finds where each width pays, for `launches.thin_launches`.

Usage: python experiments/thin-v3/variants.py [--out FILE.json]
"""
import dataclasses
import json
import sys
from functools import partial
from statistics import median

import torch

from gemmlab import launches as builders
from gemmlab import runtime
from gemmlab.cuda.dispatch import CudaSolver
from gemmlab.measure.device import ClockSampler
from gemmlab.measure.inputs import uniform
from gemmlab.measure.timing import is_small, timed_calls
from gemmlab.measure.timing import time_interleaved
from gemmlab.reference import Precision, error_figures, references, verdict

runtime.configure()
torch.backends.cuda.matmul.allow_tf32 = False  # cuBLAS FP32, as LeetGPU's check
dev = torch.device("cuda")
ROWS_SHAPES = [(8, 2134, 50), (4, 365, 1580), (1, 1201, 400), (6, 3645, 2740), (8, 8192, 8192), (4, 409, 3657),
               (7, 438, 86), (4, 2980, 332), (2, 368, 352), (1, 3, 6242), (3, 2219, 168), (8, 4096, 1024),
               (2, 8192, 4096), (6, 1000, 8192), (1, 8192, 8192), (8, 300, 8192)]
COLS_SHAPES = [(3126, 7755, 4), (5057, 753, 4), (340, 4059, 7), (3194, 2590, 1), (8192, 8192, 8), (825, 679, 5),
               (2714, 53, 2), (931, 2741, 3), (1202, 1234, 2), (8192, 2048, 4), (1000, 8192, 8), (8192, 500, 3),
               (8192, 8192, 1), (300, 8192, 8)]
WIDTHS = (1, 2, 4)


def variant(which: str, width: int):
    # thin_rows with 4 columns a lane spills at 4 blocks an SM: 3 (launches.THIN_BLOCKS)
    return builders.thin_launch(which, width, 3 if (which, width) == ("rows", 4) else 4)


rows_out = []
for which, shapes in (("rows", ROWS_SHAPES), ("cols", COLS_SHAPES)):
    solvers = {f"{which}{w}": CudaSolver((dataclasses.replace(variant(which, w), when=None),)) for w in WIDTHS}
    for m, n, k in shapes:
        a, b = uniform((m, n), 1, dev, -1, 1), uniform((n, k), 2, dev, -1, 1)
        outs = {x: torch.empty(m, k, device=dev) for x in ("torch", *solvers)}
        calls = {"torch": partial(torch.matmul, a, b, out=outs["torch"]),
                 **{x: partial(s, a, b, outs[x], m, n, k) for x, s in solvers.items()}}
        with ClockSampler() as clocks:
            times, errors = time_interleaved(calls, outs, 5, timed_calls((m, n, k), 40), True,
                                             queue_ahead=is_small((m, n, k)))
        ref64, _, floor = references(a, b)
        row = {"shape": [m, n, k], "clocks": clocks.summary(), "errors": errors}
        for x in calls:
            ok, why = verdict(error_figures(outs[x], ref64, floor=floor), Precision.FP32)
            row[x] = {"median_us": median(times[x]) * 1e3, "verdict": why}
        rows_out.append(row)
        t = row["torch"]["median_us"]
        print(f"{m}x{n}x{k}: torch {t:.1f} µs  " + "  ".join(
            f"{x} {row[x]['median_us']:.1f} ({t / row[x]['median_us']:.2f}×{'' if row[x]['verdict'] == 'ok' else ' ' + row[x]['verdict']})"
            for x in solvers), flush=True)
if "--out" in sys.argv:
    with open(sys.argv[sys.argv.index("--out") + 1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "rows": rows_out}, f, indent=1)
