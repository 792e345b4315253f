"""Timing a solution in its own process without trusting it, and the baseline beside it.

Every timed call is a judged call: fresh inputs from LeetGPU's timing
distribution U[-10, 10) written into the same buffers (so a cache keyed on
addresses meets new values), C poisoned, the result checked.

Two clocks see each call. The judge's own runs from before it writes the
inputs to the answer's arrival (stamped by the kernel); less the harness's
overhead, which the yardstick measured in a process of its own before the
solution was loaded, it is what the call cost. The child's runs around
``solve`` alone: CUDA events on a GPU, the host clock on the CPU.

* On the CPU the figure is the judge's own: nothing in the solution's process
  can make it smaller.
* On a GPU the figure is the child's CUDA events (the same method as ``gemmlab
  bench``: a kernel's time, not the host's), and the judge's clock bounds it: a
  call is suspect when the judge saw more than the report explains by over
  ``CROSSCHECK_REL`` · report + ``CROSSCHECK_ABS_MS``. More than a quarter of
  suspect calls (two at least) is a timing disagreement. A busy host makes one
  too (the judge's clock counts time the OS gave other processes), so it is a
  rejection only where it holds in a re-time with the machine found quiet just
  before and after (`quiet`: calls that skip solve agree with the overhead);
  where every re-time is noisy the figure is withheld, never made a rejection.
  So a forger shaves at most the tolerance off each call (and `hygiene` flags a
  strict-FP32 time below the FMA floor of the clock the GPU ran at).
* On the CPU a disagreement cannot change the figure (the judge's own clock):
  it is a note.

The baseline, ``torch.matmul``, runs only after the solution's whole process
tree is gone: on a GPU in the judge's process by bench's timing loop, on the
CPU through the yardstick's harness with the same clock as the solution.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from functools import partial

import torch

from .. import problem
from ..measure.timing import summarize, tflops, time_interleaved
from ..reference import Precision, strict_fp32
from .cases import WIDE_HIGH, WIDE_LOW, timed_case, uniform
from .remote import Outcome, RemoteSolve
from .runner import CaseResult

#: A timed call is suspect when the judge's clock saw more than its reported time
#: plus the harness's overhead plus this tolerance (relative, and absolute in ms).
CROSSCHECK_REL = 0.10
CROSSCHECK_ABS_MS = {"cpu": 1.0, "cuda": 0.5}
#: More than this share of suspect calls, and at least MIN_SUSPECT of them, is a disagreement:
#: a few are scheduler noise, and one slow wake-up among three calls is never a verdict.
SUSPECT_SHARE = 0.25
MIN_SUSPECT = 2
#: On a GPU, a disagreement is timed again up to this many times, each between quiet checks.
RETIMES = 3
#: Calls that skip solve in one quiet check (`quiet`).
QUIET_CALLS = 10
#: How far one call's reported time may exceed the wall-clock time around it.
OVER_WALL_MS = 1.0


@dataclass
class TimedRun:
    timing: dict | None = None
    failure: str = ""
    results: list[CaseResult] = field(default_factory=list)
    notes: dict = field(default_factory=dict)  # the most L2 the solution pinned, over its calls
    withheld: str = ""  # why no figure is given (a GPU's re-times all noisy), where none is


def allowance_ms(reported: float, device: str) -> float:
    """How much more than its report (after the overhead) the judge may see around a call."""
    return CROSSCHECK_REL * reported + CROSSCHECK_ABS_MS[device]


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
    suspect = sum(w - overhead - t > allowance_ms(t, device) for t, w in zip(ms, walls, strict=True))
    if suspect > SUSPECT_SHARE * len(ms) and suspect >= MIN_SUSPECT:
        return (f"timing disagreement: in {suspect} of {len(ms)} timed calls the solution's process "
                f"reported less time than the judge measured around the call (median reported "
                f"{statistics.median(ms):.3f} ms, measured {statistics.median(walls) - overhead:.3f} ms "
                f"after {overhead:.3f} ms of harness overhead; the tolerance is "
                f"{100 * CROSSCHECK_REL:.0f} % + {CROSSCHECK_ABS_MS[device]:g} ms)")
    return ""


def judge_clock_figures(walls: list[float], overhead: float) -> list[float]:
    """The judge's own figure of each call: its clock less the harness's calibrated overhead."""
    return [max(w - overhead, 0.0) for w in walls]


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


def batch(remote: RemoteSolve, shape: tuple[int, int, int], warmup: int, iters: int, seed: int,
          precision: Precision, out: TimedRun) -> tuple[list[float], list[float]]:
    """(reported ms, judge's wall ms) of the counted timed calls; `out.failure` on a failure."""
    total = warmup + iters
    ms, walls = [], []
    for i in range(total):
        o = remote.call(timed_case(shape, i), seed + 2 * i, precision)
        if o.fault:
            out.failure = o.fault.message
            return [], []
        out.results.append(o.result)
        for key, value in o.notes.items():
            out.notes[key] = max(out.notes.get(key, 0), value)
        if not o.result.passed:
            out.failure = (f"timed call {i + 1} of {total} (inputs in [{WIDE_LOW:g}, {WIDE_HIGH:g}), "
                           f"the same buffers as the other timed calls): {o.result.reason}")
            return [], []
        if i >= warmup:
            ms.append(o.ms)
            walls.append(o.wall_ms)
    return ms, walls


def null_calls(remote: RemoteSolve, shape: tuple[int, int, int], calls: int, seed: int) -> list[Outcome] | str:
    """`calls` calls that skip solve (the harness alone), or why one failed."""
    out = []
    for i in range(calls):
        o = remote.call(timed_case(shape, -1 - i), seed, Precision.FP32, null=True)
        if o.fault or o.ms is None:
            return o.fault.message if o.fault else "a call that runs no solution code failed"
        out.append(o)
    return out


def overhead_of(remote: RemoteSolve, shape: tuple[int, int, int], calls: int, seed: int) -> float | str:
    """The harness's own cost per call (ms): the median wall time of calls that skip solve, or why
    it could not be measured."""
    done = null_calls(remote, shape, calls, seed)
    return done if isinstance(done, str) else statistics.median(o.wall_ms - o.ms for o in done)


def quiet(remote: RemoteSolve, shape: tuple[int, int, int], overhead: float, seed: int) -> bool:
    """Whether the machine is quiet now: `QUIET_CALLS` calls that skip solve (so nothing of the
    solution's runs in them, and the harness reports about nothing) agree with the calibrated
    overhead by the same test a timed call must pass. A busy host slows these as it slows every
    call; a forged report does not."""
    done = null_calls(remote, shape, QUIET_CALLS, seed)
    if isinstance(done, str):
        return False
    return crosscheck([0.0] * len(done), [o.wall_ms for o in done], overhead, remote.device.type) == ""


def timed_run(remote: RemoteSolve, shape: tuple[int, int, int], warmup: int, iters: int, seed: int,
              precision: Precision, overhead: float | None) -> TimedRun:
    """The solution's timed calls, cross-checked against the judge's clock less `overhead` (None:
    under a wrapper such as compute-sanitizer, where no figure means anything and none is checked).
    A disagreement is a note on the CPU (`out.notes`); on a GPU it is timed again between `quiet`
    checks, a rejection only where it holds with quiet on both sides, else withheld (`out.withheld`)."""
    out = TimedRun()
    device = remote.device.type
    gpu = device == "cuda"
    ms, walls = batch(remote, shape, warmup, iters, seed, precision, out)
    if out.failure:
        return out
    disagreement = crosscheck(ms, walls, overhead, device) if overhead is not None else ""
    if disagreement and not gpu:
        out.notes["disagreement"] = disagreement
    elif disagreement:
        noisy = 0
        for attempt in range(1, RETIMES + 1):
            before = quiet(remote, shape, overhead, seed + 7 * attempt)
            ms, walls = batch(remote, shape, warmup, iters, seed + 100_003 * attempt, precision, out)
            if out.failure:
                return out
            disagreement = crosscheck(ms, walls, overhead, device)
            if not disagreement:
                break
            if before and quiet(remote, shape, overhead, seed + 7 * attempt + 3):
                out.failure = disagreement + "; it held in a re-time with the machine quiet before and after"
                return out
            noisy += 1
        if disagreement:
            out.withheld = (f"timing withheld: the solution's reports and the judge's clock disagreed in "
                            f"{noisy + 1} timings, and the machine was busy around each re-time (calls "
                            f"that skip solve ran slow too), so no figure is sure; {disagreement}")
            return out
    figures = ms if gpu or overhead is None else judge_clock_figures(walls, overhead)
    stats = summarize(figures)
    out.timing = {
        "shape": list(shape), **stats, "times_ms": figures, "reported_ms": ms,
        # On CPU a call shorter than the harness's noise has a figure of 0 ms: no rate to speak of.
        "tflops": tflops(problem.flops(*shape), stats["median_ms"]) if stats["median_ms"] > 0 else None,
        "method": (f"CUDA events around each call, median of {iters} after {warmup} warm-ups" if gpu else
                   f"the judge's clock around each call less the harness's overhead (CPU figures), "
                   f"median of {iters} after {warmup} warm-ups"),
        "checked_calls": len(out.results),
        "outside_ms": statistics.median(walls) - (overhead or 0.0), "overhead_ms": overhead,
        "l2": {k: v for k, v in out.notes.items() if k != "disagreement"},
    }
    return out


def add_baseline(timing: dict, name: str, base_ms: float) -> None:
    # No rate, no ratio: a CPU median of 0 ms, or below the CPUs' floor (`isolate._no_rate_below`).
    timing.update(baseline=name, baseline_ms=base_ms,
                  ratio_vs_baseline=base_ms / timing["median_ms"] if timing["tflops"] is not None else None)
