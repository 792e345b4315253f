"""bigtile with A transposed by its own copies (A_T 2: 4-byte cp.async into a padded Aᵀ tile,
no pre-pass) against A_T 1 (the Aᵀ pre-pass) and `default`: judged on the standard cases and
on shapes with many tiles, compared bit for bit with `default` at the performance shape, then
timed as `gemmlab bench` times (measure(): cuBLAS FP32 interleaved) at each shape of SHAPES.

Usage: python driver.py '{"A_T": 2, "BK": 8, "STAGES": 3}' ...   (from the repository root)
A variant's other shapes (K % 4 != 0) run bigtile's padded launch, as the rung does.
"""
import dataclasses
import json
import sys

import torch

from gemmlab import problem, registry, runtime
from gemmlab.bench.run import measure
from gemmlab.judge.cases import Case, standard_cases, uniform
from gemmlab.judge.runner import run_case
from gemmlab.reference import Precision

runtime.configure()
base = registry.get("bigtile")
impls = [registry.get("default")]
for text in sys.argv[1:]:
    fast = base.launches[0].with_defines(json.loads(text))
    impls.append(dataclasses.replace(base, name=text, launches=(fast, base.launches[1])))
dev = torch.device("cuda")
SHAPES = ((4096, 96, 2048), (4000, 333, 4000), (2500, 1000, 4100), (8191, 6143, 4096), (8191, 6143, 4095))
cases = standard_cases(2026) + [Case(f"many-tiles-{m}x{n}x{k}", "custom", (m, n, k)) for m, n, k in SHAPES]
for impl in impls[1:]:
    bad = [r for r in (run_case(impl.solve, Precision(impl.precision), c, 2026 + i, dev)
                       for i, c in enumerate(cases)) if not r.passed]
    print(f"check {impl.name:44s} {'passed' if not bad else 'FAILED ' + str([(r.case, r.reason) for r in bad])}",
          flush=True)
m, n, k = problem.PERF_SHAPE
a, b = uniform((m, n), 5, dev, -1, 1), uniform((n, k), 6, dev, -1, 1)
ref = torch.empty(m, k, device=dev)
impls[0].solve(a, b, ref, m, n, k)
for impl in impls[1:]:
    c = torch.full((m, k), float("nan"), device=dev)
    impl.solve(a, b, c, m, n, k)
    torch.cuda.synchronize()
    print(f"bitwise {impl.name:44s} equal to default: {torch.equal(c, ref)}", flush=True)
TIMED = (problem.PERF_SHAPE, (2048, 2048, 2048), (4096, 4096, 4096), (8192, 6143, 4096), (8191, 6144, 4096),
         (1024, 1024, 1024), (8192, 8192, 8192), problem.PERF_SHAPE)
for shape in TIMED:
    rec = measure(impls, shape, 5, 50 if shape[0] <= 2048 else 20, False, 7)
    for r in rec["results"]:
        print(f"{shape} {r['name']:44s} {r['median_ms']:.4f} ms  vs cuBLAS {r.get('ratio_vs_cublas') or 0:.3f}  "
              f"{r['passed']} viol {r['figures'].get('leetgpu_violations')}  {r.get('kernel') or ''}"[:230], flush=True)
    print(rec["clocks_during_timing"], flush=True)
