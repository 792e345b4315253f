"""Time variants of one rung at a shape, beside torch.matmul.

    python scripts/tune.py float4 '{"MIN_BLOCKS": 5}' '{"MIN_BLOCKS": 6}' [--launch 0] [--shape M N K]
    python scripts/tune.py triton-presplit '{"rows": 128, "stages": 4}' '{"transpose_b": false}'

A developer's tool for choosing a rung's knobs. A CUDA variant overrides the
macros of one launch; a Triton variant overrides the solver's configuration
(`gemmlab.kernels.triton.TritonConfig`). Each variant is compiled,
checked against the float64 reference, and timed with CUDA events (median of
10 after 5 warm-ups, interleaved with cuBLAS). Prints a table; writes nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
from functools import partial

import torch

from gemmlab import problem, registry, runtime
from gemmlab.cuda.dispatch import CudaSolver
from gemmlab.measure.inputs import uniform
from gemmlab.measure.timing import is_small, time_interleaved, timed_calls
from gemmlab.reference import error_figures, reference64, strict_fp32


def main() -> None:
    runtime.configure()  # before CUDA initialises: keep ptxas reports
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("variants", nargs="*", default=["{}"])
    ap.add_argument("--launch", type=int, default=0)
    ap.add_argument("--shape", type=int, nargs=3, default=list(problem.PERF_SHAPE))
    args = ap.parse_args()
    m, n, k = args.shape
    impl = registry.get(args.name)
    a, b = uniform((m, n), 1, torch.device("cuda"), -10, 10), uniform((n, k), 2, torch.device("cuda"), -10, 10)
    ref = reference64(a, b)
    solvers = {"torch": lambda c: torch.matmul(a, b, out=c)}
    regs = {}
    for text in args.variants:
        if impl.family == "triton":
            solve = dataclasses.replace(impl.factory, config=impl.factory.config | json.loads(text))()
            solvers[text] = lambda c, solve=solve: solve(a, b, c, m, n, k)
            continue
        # The variant runs whatever the shape (when=None), through the rung's own host lifecycle.
        spec = dataclasses.replace(impl.launches[args.launch].with_defines(json.loads(text)), when=None)
        res = spec.compile().resources[spec.entry]
        regs[text] = f"{res.registers}/{res.spills}"
        solver = CudaSolver((spec,))
        solvers[text] = lambda c, solver=solver: solver(a, b, c, m, n, k)
    outs = {key: torch.empty(m, k, device="cuda") for key in solvers}
    with strict_fp32():  # for the torch.matmul baseline
        times, errors = time_interleaved({key: partial(f, outs[key]) for key, f in solvers.items()},
                                         outs, warmup=5, iters=timed_calls((m, n, k), 10), gpu=True,
                                         queue_ahead=is_small((m, n, k)))
    for key, error in errors.items():  # a configuration that does not fit is dropped
        print(f"{key}: dropped, {error[:200]}")
    print(f"{args.name} at {m}x{n}x{k}" + (f" launch {args.launch}" if impl.launches else ""))
    for key in times:
        ms = statistics.median(times[key])
        fig = error_figures(outs[key], ref)
        print(f"{key:40s} {ms:8.3f} ms  regs/spill {regs.get(key, '-')!s:>6}  norm_max {fig.norm_max:.2e}  "
              f"unwritten {fig.unwritten}")


if __name__ == "__main__":
    main()
