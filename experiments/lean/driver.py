"""Knob variants of bigtile / splitk (e.g. LEAN 1: whole tiles' copies from running pointers)
against `default`: judged on the standard cases and on shapes with many tiles, compared bit
for bit with `default` at the performance shape, then timed as `gemmlab bench` times
(measure(): cuBLAS FP32 interleaved, median) at each shape of TIMED.

Usage (from the repository root): python driver.py 'bigtile:{"BK": 8, "LEAN": 1}' 'splitk:{"LEAN": 1}' ...
A variant replaces the knobs of both launches of the rung (B as it lies, B's padded copy);
'bigtile#0:{...}' replaces those of launch 0 only (the padded launch stays the rung's).
Shapes to time, as MxNxK, on stdin (default: TIMED below).
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
impls = [registry.get("default")]
for arg in sys.argv[1:]:
    rung, text = arg.split(":", 1)
    rung, _, only = rung.partition("#")
    base = registry.get(rung)
    knobs = json.loads(text)
    launches = tuple(x.with_defines(knobs) if only in ("", str(i)) else x for i, x in enumerate(base.launches))
    impls.append(dataclasses.replace(base, name=arg, launches=launches))
dev = torch.device("cuda")
SHAPES = ((4096, 96, 2048), (4000, 333, 4000), (2500, 1000, 4100), (8191, 6143, 4096), (8191, 6143, 4095),
          (1000, 2000, 3000), (129, 4100, 257))
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
TIMED = [tuple(int(x) for x in s.split("x")) for s in
         (sys.stdin.read().split() if not sys.stdin.isatty() else [])] or [
    problem.PERF_SHAPE, (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), problem.PERF_SHAPE]
for shape in TIMED:
    rec = measure(impls, shape, 5, 50 if shape[0] * shape[2] <= 2048 * 2048 else 20, False, 7)
    for r in rec["results"]:
        print(f"{shape} {r['name']:44s} {r['median_ms']:.4f} ms  vs cuBLAS {r.get('ratio_vs_cublas') or 0:.3f}  "
              f"{r['passed']} viol {r['figures'].get('leetgpu_violations')}  {r.get('kernel') or ''}"[:230], flush=True)
    print(rec["clocks_during_timing"], flush=True)
