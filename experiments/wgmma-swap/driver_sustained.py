"""Scratch (not committed): wgmma-swap variants beside cuBLAS TF32 and wgmma-ws."""
import json, statistics, sys
from functools import partial
import torch
from gemmlab import registry, runtime
from gemmlab.bench.run import time_interleaved
from gemmlab.bench.device_info import ClockSampler
from gemmlab.cuda.dispatch import CudaSolver
from gemmlab.judge.cases import uniform
from gemmlab.reference import error_figures, reference64

runtime.configure()
dev = torch.device("cuda")
m, n, k = map(int, sys.argv[1].split("x"))
variants = [json.loads(v) for v in sys.argv[2:]] or [{}]
a, b = uniform((m, n), 1, dev, -10, 10), uniform((n, k), 2, dev, -10, 10)
solvers = {"torch-tf32": registry.get("torch-tf32")._solve}
impl = registry.get("wgmma-swap")
for defs in variants:
    solvers["swap " + json.dumps(defs)] = CudaSolver(tuple(l.with_defines(defs) for l in impl.launches))
calls = {key: (lambda c, s=s: s(a, b, c, m, n, k)) for key, s in solvers.items()}
outs = {key: torch.empty(m, k, device=dev) for key in calls}
for rnd in range(2):
    with ClockSampler() as cs:
        times, errors = time_interleaved({kk: partial(f, outs[kk]) for kk, f in calls.items()},
                                         outs, warmup=5, iters=30, gpu=True)
    print(errors, cs.summary())
    t0 = statistics.median(times["torch-tf32"])
    for key in times:
        ms = statistics.median(times[key])
        print(f"round {rnd} {key:40s} {ms:7.4f} ms  vs cuBLAS TF32 {t0/ms:5.3f}", flush=True)
ref = reference64(a, b)
for key in outs:
    print(key, "norm_max", f"{error_figures(outs[key], ref).norm_max:.3e}")
