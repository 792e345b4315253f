"""The one timing loop: implementations interleaved call by call, each call timed on its own,
between its own pair of CUDA events (without a GPU, the host clock), so that clock and thermal
drift fall on all of them alike. bench, the judge's in-process baseline and the tuner time here.
Beside it: how many calls a shape needs to be timed well, and the summaries of what it timed.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def summarize(times_ms: list[float]) -> dict[str, float]:
    if not times_ms:
        raise ValueError("no timings")
    return {
        "median_ms": statistics.median(times_ms),
        "mean_ms": statistics.fmean(times_ms),
        "min_ms": min(times_ms),
        "max_ms": max(times_ms),
    }


def geomean(values) -> float:
    """The geometric mean of positive figures (ratios to a yardstick)."""
    return math.exp(statistics.fmean(math.log(v) for v in values))


def tflops(flop: int, ms: float) -> float:
    return flop / (ms * 1e-3) / 1e12


#: Shapes below this many multiply-adds run in tens of microseconds, where a few calls are
#: noise: their timings take at least SMALL_ITERS calls (the sweep, the tuner).
SMALL_WORK = 2048 ** 3
SMALL_ITERS = 50


def is_small(shape: tuple[int, int, int]) -> bool:
    m, n, k = shape
    return m * n * k < SMALL_WORK


def timed_calls(shape: tuple[int, int, int], iters: int) -> int:
    """How many calls to time at this shape when `iters` are asked for."""
    return max(iters, SMALL_ITERS) if is_small(shape) else iters


#: At small shapes a call's host side can take longer than its kernels, and be counted as the
#: GPU's time: there each timed call is queued behind a spin on the GPU (`torch.cuda._sleep`),
#: long enough for the host to enqueue the events and the call before the GPU reaches them.
QUEUE_AHEAD_CYCLES = 2_000_000


def round_orders(count: int) -> list[list[int]]:
    """The orders of a cycle of timed rounds over `count` implementations: a balanced Latin square
    (Williams's design), in which each takes each place and follows each other one equally often,
    over `count` rounds (twice `count` where it is odd). Which call comes just before matters, not
    only the place (experiments/README.md#small-shaped): a plain rotation would keep the cycle."""
    first, low, high = [0], 1, count - 1
    while len(first) < count:
        first.append(low)
        low += 1
        if len(first) < count:
            first.append(high)
            high -= 1
    rows = [[(x + r) % count for x in first] for r in range(count)]
    return rows + [row[::-1] for row in rows] if count % 2 else rows or [[]]


def time_interleaved(
    calls: dict[str, Callable[[], None]],
    outputs: dict[str, torch.Tensor],
    warmup: int,
    iters: int,
    gpu: bool,
    before_each: Callable[[], object] | None = None,
    progress: Callable[[str], None] | None = None,
    queue_ahead: bool = False,
) -> tuple[dict[str, list[float]], dict[str, str]]:
    """(milliseconds per call, error per call whose warm-up raised; that call is dropped). The
    others' outputs are poisoned, so that what is judged afterwards was written by the timed calls.
    `queue_ahead`: for small shapes (`stats.is_small`), see QUEUE_AHEAD_CYCLES."""
    import torch

    from ..reference import poison_

    errors: dict[str, str] = {}
    for name, call in calls.items():
        if progress:
            progress(f"warm-up {name}")
        try:
            for _ in range(warmup):
                call()
            if gpu:
                torch.cuda.synchronize()
        except Exception as exc:
            errors[name] = f"{type(exc).__name__}: {exc}"
    live = {name: call for name, call in calls.items() if name not in errors}
    for name in live:
        poison_(outputs[name])
    marks: dict[str, list] = {name: [] for name in live}
    names = list(live)
    orders = round_orders(len(names))
    for it in range(iters):
        if progress:
            progress(f"timed round {it + 1}/{iters}")
        for name in (names[i] for i in orders[it % len(orders)]):
            call = live[name]
            if before_each is not None:
                before_each()
            if gpu:
                if queue_ahead:
                    torch.cuda._sleep(QUEUE_AHEAD_CYCLES)
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                call()
                end.record()
                marks[name].append((start, end))
            else:
                t0 = time.perf_counter()
                call()
                marks[name].append((time.perf_counter() - t0) * 1e3)
    if gpu:
        torch.cuda.synchronize()
        return {name: [s.elapsed_time(e) for s, e in m] for name, m in marks.items()}, errors
    return marks, errors
