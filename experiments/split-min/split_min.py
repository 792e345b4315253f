"""Does a shorter least part (`cuda/handoff.SPLIT_MIN_N`) pay at tiny outputs over reductions of a few hundred? (GPU)

In seed 2038's draw (experiments/random-shapes/summary.json.gz#18-random-64-seed2038) `small` took 10–14 µs
at tiny outputs over reductions of 171–946 (15×226×292: 14.2 µs, cuBLAS 9.4), where reductions
under 100 took 4–5 µs: the split-K policy keeps at least SPLIT_MIN_N = 128 elements of N a part,
so a reduction of 226 (15 steps of BK 16) runs whole, one step after another, on a few blocks.

Prediction (written before any run): with SPLIT_MIN_N 32 such shapes run 1.3–1.6× faster than as
shipped (15×226×292 near 9 µs), with 64 about half that gain; where the tiles already fill the
GPU, or where the reduction is long enough to split as shipped, nothing moves (within 3 %); and
no shape leaves more elements outside LeetGPU's tolerance than as shipped.

Second run (after SPLIT_MIN_N_IDLE = 64 was installed for grids whose tiles leave slots idle):
KNOB=SPLIT_MIN_N_IDLE SETTINGS="128 64" RUNGS="default splitk small" with bigtile shapes of few
tiles, where the first run looked at `small`'s only; predicted: no shape more than 3 % slower
with 64 than with 128, 256³ and 300×2048×200 faster.

Each setting patches the module's constant (KNOB, default SPLIT_MIN_N) for the whole process
(the policy reads it at every plan), times fresh copies of the rungs RUNGS names (default:
`default` and `small`) beside cuBLAS as `gemmlab sweep` does
(bench.run.measure: interleaved, GPU time, each result checked against the float64 product), and
writes one JSON line per shape and setting to OUT.jsonl.
Usage (repository root, on a GPU): python experiments/split-min/split_min.py OUT.jsonl [MxNxK ...]
"""
import dataclasses
import json
import os
import sys

from gemmlab import registry, runtime
from gemmlab.bench.run import measure
from gemmlab.cuda import handoff

SHAPES = ["15x226x292", "22x171x16", "3x459x77", "2x685x946", "3x226x545", "7x213x106", "1x2709x91",
          "266x404x7", "64x300x512", "512x256x512", "1024x200x1024", "256x500x256",
          "159x2161x43", "2048x128x2048"]
KNOB = os.environ.get("KNOB", "SPLIT_MIN_N")
SETTINGS = tuple(int(x) for x in os.environ.get("SETTINGS", "128 64 32").split())  # as shipped first
RUNGS = os.environ.get("RUNGS", "default small").split()

runtime.configure()
out_path = sys.argv[1]
shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[2:] or SHAPES)]
shipped = getattr(handoff, KNOB)
with open(out_path, "a") as out:
    for shape in shapes:
        for least in SETTINGS:
            setattr(handoff, KNOB, least)
            try:
                # Fresh copies: a solver keeps each call's plan for the next call at the same operands.
                rec = measure([dataclasses.replace(registry.get(n)) for n in RUNGS],
                              shape, 3, 30, False, 7, energy=())
            finally:
                setattr(handoff, KNOB, shipped)
            line = {"shape": shape, "knob": KNOB, "split_min_n": least, "clocks": rec["clocks_during_timing"],
                    "results": {r["name"]: {"ms": r["median_ms"], "passed": r["passed"], "kernel": r.get("kernel"),
                                            "exact_violations": (r.get("figures") or {}).get("exact_violations")}
                                for r in rec["results"]}}
            out.write(json.dumps(line) + "\n")
            out.flush()
            t = line["results"]["torch"]["ms"]
            print(f"{'x'.join(map(str, shape)):15s} min {least:3d}  "
                  + " ".join(f"{n}={v['ms'] * 1e3:.1f}us({t / v['ms']:.2f})" for n, v in line["results"].items()
                             if v["ms"]), flush=True)
