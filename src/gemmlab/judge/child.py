"""The child process that runs a user's solution: `python -m gemmlab.judge.child FILE …`.

It prints one JSON object per line, prefixed with ``@gemmlab ``, as results
arrive, so the parent keeps everything that finished before a crash or hang.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from .. import runtime

runtime.configure()

import torch  # noqa: E402

from .. import problem  # noqa: E402
from ..reference import (  # noqa: E402
    Precision,
    strict_fp32,
)
from .cases import Case, fresh_seed, standard_cases, uniform  # noqa: E402
from .runner import judge, run_case  # noqa: E402
from .userfile import SolutionError, load  # noqa: E402

PREFIX = "@gemmlab "


def emit(kind: str, **data) -> None:
    print(PREFIX + json.dumps({"kind": kind, **data}, default=str), flush=True)


def _timed(fn, device) -> float:
    if device.type == "cuda":
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e)
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def time_solution(solve, shape, device, warmup: int, iters: int, seed: int) -> dict:
    """Fresh inputs for every timed call; cuBLAS timed the same way in the same loop."""
    m, n, k = shape
    c = torch.empty(m, k, device=device)
    c_ref = torch.empty(m, k, device=device)
    mine, base = [], []
    for i in range(warmup + iters):
        a = uniform((m, n), seed + 2 * i, device, -10, 10)
        b = uniform((n, k), seed + 2 * i + 1, device, -10, 10)
        t = _timed(lambda a=a, b=b: solve(a, b, c, m, n, k), device)
        with strict_fp32():
            t_ref = _timed(lambda a=a, b=b: torch.matmul(a, b, out=c_ref), device)
        if i >= warmup:
            mine.append(t)
            base.append(t_ref)
    med, med_ref = statistics.median(mine), statistics.median(base)
    return {"shape": list(shape), "median_ms": med, "min_ms": min(mine), "max_ms": max(mine),
            "cublas_ms": med_ref, "ratio_vs_cublas": med_ref / med,
            "tflops": problem.flops(m, n, k) / (med * 1e-3) / 1e12}


def recheck(solve, shape, device, seed: int, precision: Precision) -> dict:
    """After the timed calls: new inputs once more, so cached or skipped work shows."""
    r = run_case(solve, precision, Case("recheck", "recheck", tuple(shape)), seed, device)
    return {"passed": r.passed, "reason": r.reason, "seed": seed,
            "figures": r.figures.to_dict() if r.figures else None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--framework")
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--no-perf", action="store_true")
    ap.add_argument("--groups", default="")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--time-shape", type=int, nargs=3, default=None)
    args = ap.parse_args()

    device = runtime.default_device()
    seed = fresh_seed() if args.seed is None else args.seed
    precision = Precision(args.precision)
    try:
        framework, solve = load(args.file, args.framework)
    except SolutionError as exc:
        emit("error", message=str(exc))
        emit("done", passed=False)
        return
    emit("start", framework=framework, device=runtime.gpu_name(), seed=seed)
    cases = standard_cases(seed, perf=not args.no_perf)
    if args.groups:
        cases = [c for c in cases if c.group in args.groups.split(",")]
    j = judge(args.file, solve, precision, cases, device, seed,
              on_result=lambda r: emit("case", **r.to_dict()))
    if not j.passed:
        emit("done", passed=False)
        return
    shape = tuple(args.time_shape) if args.time_shape else (
        problem.PERF_SHAPE if device.type == "cuda" else (128, 128, 128))
    timing = time_solution(solve, shape, device, args.warmup, args.iters, seed + 1000)
    emit("timing", **timing)
    again = recheck(solve, shape, device, seed + 5000, precision)
    emit("recheck", **again)
    emit("done", passed=again["passed"])


if __name__ == "__main__":
    main()
