"""Summary statistics of a list of timings (milliseconds)."""

from __future__ import annotations

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


def tflops(flop: int, ms: float) -> float:
    return flop / (ms * 1e-3) / 1e12
