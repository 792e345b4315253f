"""Summaries of timings (milliseconds), and how many calls a shape needs to be timed well."""

from __future__ import annotations

import math
import statistics


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

