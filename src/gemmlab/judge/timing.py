"""Timing a solution in its own process without trusting it, and the baseline beside it.

Every timed call is a judged call: fresh inputs from LeetGPU's timing
distribution U[-10, 10) written into the same buffers (so a cache keyed on
addresses meets new values), C poisoned, the result checked. The figure is
the child's own (CUDA events around each call on a GPU, the host clock on
the CPU: the same method as ``gemmlab bench``), and it is cross-checked with
the wall-clock time the judge measures around each request, less the
harness's own overhead measured by calls that skip ``solve``. The baseline,
``torch.matmul``, is timed in the judge's process by bench's one timing loop.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import partial

import torch

from .. import problem
from ..bench.run import time_interleaved
from ..bench.stats import summarize, tflops
from ..reference import Precision, strict_fp32
from .cases import WIDE_HIGH, WIDE_LOW, timed_case, uniform
from .remote import RemoteSolve
from .runner import CaseResult

#: Calls that skip solve, to measure what the harness itself costs per call.
NULL_CALLS = 3
#: How far the child's median may fall below what the judge measured from outside.
CROSSCHECK_REL = 0.10
CROSSCHECK_ABS_MS = 0.5
#: How far one call's reported time may exceed the wall-clock time around it.
OVER_WALL_MS = 1.0


@dataclass
class TimedRun:
    timing: dict | None = None
    failure: str = ""
    results: list[CaseResult] | None = None


def crosscheck(ms: list[float], walls: list[float], overhead: float) -> str:
    """'' if the child's figures agree with the judge's clock, else the disagreement in words."""
    for i, (t, w) in enumerate(zip(ms, walls, strict=True)):
        if t > w + OVER_WALL_MS:
            return (f"timing disagreement: timed call {i + 1} reported {t:.3f} ms, but the whole "
                    f"request took {w:.3f} ms")
    reported, outside = statistics.median(ms), statistics.median(walls) - overhead
    if reported < (1 - CROSSCHECK_REL) * outside - CROSSCHECK_ABS_MS:
        return (f"timing disagreement: the solution's process reported a median of {reported:.3f} ms "
                f"per call, but the judge measured {outside:.3f} ms per call from outside "
                f"({overhead:.3f} ms of harness overhead removed)")
    return ""


def baseline(shape: tuple[int, int, int], device: torch.device, warmup: int, iters: int,
             seed: int) -> tuple[str, float]:
    """(name, median ms) of torch.matmul in strict FP32 at the same shape and inputs' range."""
    m, n, k = shape
    a = uniform((m, n), seed, device, WIDE_LOW, WIDE_HIGH)
    b = uniform((n, k), seed + 1, device, WIDE_LOW, WIDE_HIGH)
    c = torch.empty((m, k), dtype=torch.float32, device=device)
    gpu = device.type == "cuda"
    with strict_fp32():
        times, errors = time_interleaved({"matmul": partial(torch.matmul, a, b, out=c)}, {"matmul": c},
                                         warmup, iters, gpu)
    name = "cuBLAS (torch.matmul, TF32 off)" if gpu else "CPU torch (torch.matmul)"
    return name, summarize(times["matmul"])["median_ms"]


def timed_run(remote: RemoteSolve, shape: tuple[int, int, int], warmup: int, iters: int, seed: int,
              precision: Precision) -> TimedRun:
    out = TimedRun(results=[])
    overheads = []
    for i in range(NULL_CALLS):
        o = remote.call(timed_case(shape, -1 - i), seed, precision, null=True)
        if o.fault or o.ms is None:
            return TimedRun(failure=o.fault.message if o.fault else "the harness failed a call "
                                                                     "that runs no solution code")
        overheads.append(o.wall_ms - o.ms)
    total = warmup + iters
    ms, walls = [], []
    for i in range(total):
        o = remote.call(timed_case(shape, i), seed + 2 * i, precision)
        if o.fault:
            out.failure = o.fault.message
            return out
        out.results.append(o.result)
        if not o.result.passed:
            out.failure = (f"timed call {i + 1} of {total} (inputs in [{WIDE_LOW:g}, {WIDE_HIGH:g}), "
                           f"the same buffers as the other timed calls): {o.result.reason}")
            return out
        if i >= warmup:
            ms.append(o.ms)
            walls.append(o.wall_ms)
    overhead = statistics.median(overheads)
    out.failure = crosscheck(ms, walls, overhead)
    stats = summarize(ms)
    name, base_ms = baseline(shape, remote.device, warmup, iters, seed + 7919)
    out.timing = {
        "shape": list(shape), **stats, "times_ms": ms,
        "tflops": tflops(problem.flops(*shape), stats["median_ms"]),
        "method": (f"CUDA events around each call, median of {iters} after {warmup} warm-ups"
                   if remote.device.type == "cuda" else
                   f"host clock around each call (CPU figures), median of {iters} after {warmup} warm-ups"),
        "checked_calls": total,
        "outside_ms": statistics.median(walls) - overhead, "overhead_ms": overhead,
        "baseline": name, "baseline_ms": base_ms, "ratio_vs_baseline": base_ms / stats["median_ms"]
        if stats["median_ms"] > 0 else None,
    }
    return out
