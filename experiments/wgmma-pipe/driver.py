"""Knob variants of a rung: judged on the standard cases and on shapes with more tiles than SMs
(SHAPES below), then timed as `gemmlab bench` times (its measure(): cuBLAS FP32 and TF32
interleaved, 50 calls, two seeds), then once at each of EXTRA shapes.

Usage: python driver.py NAME '{"PIPE": 1}' '{"PIPE": 2}' ...   (the launch as it is runs as "base")
"""
import dataclasses
import json
import sys

import torch

from gemmlab import registry, runtime
from gemmlab.bench.run import measure
from gemmlab.judge.cases import Case, standard_cases
from gemmlab.judge.runner import run_case
from gemmlab.reference import Precision

runtime.configure()
name = sys.argv[1]
base = registry.get(name)
impls = [registry.get("torch-tf32"), dataclasses.replace(base, name="base")]
for text in sys.argv[2:]:
    defs = json.loads(text)
    impls.append(dataclasses.replace(base, name=text, launches=tuple(x.with_defines(defs) for x in base.launches)))
SHAPES = ((4096, 96, 2048), (4000, 333, 4000), (2500, 1000, 4100), (8191, 6143, 4095))
EXTRA = ((2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192))
dev = torch.device("cuda")
cases = standard_cases(2026) + [Case(f"many-tiles-{m}x{n}x{k}", "custom", (m, n, k)) for m, n, k in SHAPES]
for impl in impls[1:]:
    bad = [r for r in (run_case(impl.solve, Precision(impl.precision), c, 2026 + i, dev)
                       for i, c in enumerate(cases)) if not r.passed]
    print(f"check {impl.name:40s} {'passed' if not bad else 'FAILED ' + str([(r.case, r.reason) for r in bad])}", flush=True)
for rep in range(2):
    rec = measure(impls, None, 5, 50, False, 7 + rep)
    for r in rec["results"]:
        print(f"rep {rep} {r['name']:40s} {r['median_ms']:.4f} ms  vs TF32 {r.get('ratio_vs_cublas_tf32') or 0:.3f}  "
              f"{r['passed']} {r['figures']['norm_max']:.3e}", flush=True)
    print(rec["clocks_during_timing"], flush=True)
for shape in EXTRA:
    rec = measure(impls, shape, 5, 20, False, 9)
    for r in rec["results"]:
        print(f"{shape} {r['name']:40s} {r['median_ms']:.4f} ms  vs TF32 {r.get('ratio_vs_cublas_tf32') or 0:.3f}  "
              f"{r['passed']}", flush=True)
    print(rec["clocks_during_timing"], flush=True)
