"""Timing a solution in its own process without trusting it, and the baseline beside it.

Every timed call is a judged call: fresh inputs from LeetGPU's timing
distribution U[-10, 10) written into the same buffers (so a cache keyed on
addresses meets new values), C poisoned, the result checked. The figure is
the child's own (CUDA events around each call on a GPU, the host clock on
the CPU: the same method as ``gemmlab bench``), and it is cross-checked with
the wall-clock time the judge measures around each request, less the
harness's own overhead measured by calls that skip ``solve``. The baseline,
``torch.matmul``, is timed on a GPU in the judge's process by bench's one timing
loop; on the CPU, where the fresh inputs of every call cost the solution about as
much as its product at the timing shape, it is itself a solution timed through
the same harness (``isolate.cpu_baseline``).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import torch

from .. import problem
from ..measure.stats import summarize, tflops
from ..measure.timing import time_interleaved
from ..reference import Precision, strict_fp32
from .cases import WIDE_HIGH, WIDE_LOW, timed_case, uniform
from .remote import RemoteSolve
from .runner import CaseResult

#: Calls that skip solve, to measure what the harness itself costs per call.
NULL_CALLS = 3
#: A timed call is suspect when the judge's clock saw more than its reported time
#: plus the harness's overhead plus this tolerance (relative, and absolute in ms).
CROSSCHECK_REL = 0.10
CROSSCHECK_ABS_MS = {"cpu": 1.0, "cuda": 0.5}
#: More than this share of suspect calls is a disagreement (a few are scheduler noise).
SUSPECT_SHARE = 0.25
#: A disagreement is measured again with fresh calls before it is a verdict.
ATTEMPTS = 2
#: How far one call's reported time may exceed the wall-clock time around it.
OVER_WALL_MS = 1.0


@dataclass
class TimedRun:
    timing: dict | None = None
    failure: str = ""
    results: list[CaseResult] = field(default_factory=list)


def crosscheck(ms: list[float], walls: list[float], overhead: float, device: str = "cpu") -> str:
    """'' if the child's figures agree with the judge's clock, else the disagreement in words.

    Noise only ever makes the judge's clock see more; a forged figure makes
    every call look short. So a call is suspect when the judge saw more than
    the report explains, and only a share of suspect calls above what noise
    gives is a disagreement.
    """
    for i, (t, w) in enumerate(zip(ms, walls, strict=True)):
        if t > w + OVER_WALL_MS:
            return (f"timing disagreement: timed call {i + 1} reported {t:.3f} ms, but the whole "
                    f"request took {w:.3f} ms")
    suspect = sum(w - overhead - t > CROSSCHECK_REL * t + CROSSCHECK_ABS_MS[device]
                  for t, w in zip(ms, walls, strict=True))
    if suspect > SUSPECT_SHARE * len(ms):
        return (f"timing disagreement: in {suspect} of {len(ms)} timed calls the solution's process "
                f"reported less time than the judge measured around the call (median reported "
                f"{statistics.median(ms):.3f} ms, measured {statistics.median(walls) - overhead:.3f} ms "
                f"after {overhead:.3f} ms of harness overhead)")
    return ""


def in_process_baseline(shape: tuple[int, int, int], device: torch.device, warmup: int, iters: int,
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
    return baseline_name(gpu), summarize(times["matmul"])["median_ms"]


def baseline_name(gpu: bool) -> str:
    return "cuBLAS (torch.matmul, TF32 off)" if gpu else "CPU torch (torch.matmul)"


def _batch(remote: RemoteSolve, shape: tuple[int, int, int], warmup: int, iters: int, seed: int,
           precision: Precision, out: TimedRun) -> tuple[list[float], list[float], float]:
    """(reported ms, judge's wall ms, harness overhead ms) of the timed calls; `out.failure` on a failure."""
    overheads = []
    for i in range(NULL_CALLS):
        o = remote.call(timed_case(shape, -1 - i), seed, precision, null=True)
        if o.fault or o.ms is None:
            out.failure = o.fault.message if o.fault else "the harness failed a call that runs no solution code"
            return [], [], 0.0
        overheads.append(o.wall_ms - o.ms)
    total = warmup + iters
    ms, walls = [], []
    for i in range(total):
        o = remote.call(timed_case(shape, i), seed + 2 * i, precision)
        if o.fault:
            out.failure = o.fault.message
            return [], [], 0.0
        out.results.append(o.result)
        if not o.result.passed:
            out.failure = (f"timed call {i + 1} of {total} (inputs in [{WIDE_LOW:g}, {WIDE_HIGH:g}), "
                           f"the same buffers as the other timed calls): {o.result.reason}")
            return [], [], 0.0
        if i >= warmup:
            ms.append(o.ms)
            walls.append(o.wall_ms)
    return ms, walls, min(overheads)


def measure_calls(remote: RemoteSolve, shape: tuple[int, int, int], warmup: int, iters: int, seed: int,
                  precision: Precision) -> list[float]:
    """The reported times of a trusted solution's timed calls (the CPU baseline's); [] on a failure."""
    ms, _, _ = _batch(remote, shape, warmup, iters, seed, precision, TimedRun())
    return ms


def timed_run(remote: RemoteSolve, shape: tuple[int, int, int], warmup: int, iters: int, seed: int,
              precision: Precision, baseline: Callable | None = None) -> TimedRun:
    """The solution's timed calls, cross-checked, and the baseline's median beside them: timed by
    ``baseline(remote, shape, warmup, iters, seed)`` where given (the CPU's: through the same
    harness), else in this process (`in_process_baseline`)."""
    out = TimedRun()
    gpu = remote.device.type == "cuda"
    for attempt in range(ATTEMPTS):
        ms, walls, overhead = _batch(remote, shape, warmup, iters, seed + 100_003 * attempt, precision, out)
        if out.failure:
            return out
        disagreement = crosscheck(ms, walls, overhead, remote.device.type)
        if not disagreement:
            break
    out.failure = disagreement
    stats = summarize(ms)
    times = baseline(remote, shape, warmup, iters, seed + 7919) if baseline is not None else []
    if times:
        name, base_ms = baseline_name(gpu), summarize(times)["median_ms"]
    else:
        name, base_ms = in_process_baseline(shape, remote.device, warmup, iters, seed + 7919)
    out.timing = {
        "shape": list(shape), **stats, "times_ms": ms,
        "tflops": tflops(problem.flops(*shape), stats["median_ms"]),
        "method": (f"CUDA events around each call, median of {iters} after {warmup} warm-ups" if gpu else
                   f"host clock around each call (CPU figures), median of {iters} after {warmup} warm-ups"),
        "checked_calls": len(out.results),
        "outside_ms": statistics.median(walls) - overhead, "overhead_ms": overhead,
        "baseline": name, "baseline_ms": base_ms,
        "ratio_vs_baseline": base_ms / stats["median_ms"] if stats["median_ms"] > 0 else None,
    }
    return out
