"""Preludes: launches `default` runs before every class's winner, where their own precondition
holds and C has at least a calibrated number of elements.

A prelude is a kernel for a kind of shape across the classes (`short`: N ≤ 32, micro and many-waves
alike), so it has no space and no class to win: it earns a floor on sweeps instead (`floor`), and
one no sweep has timed is not in the record (kernels/cuda/short.md, experiments/README.md#short-floor).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from .. import launches as builders
from ..cuda.dispatch import Launch, same_build
from ..cuda.needs import When
from ..measure.timing import geomean

#: The rungs whose first launch can be a prelude, by name: how to build that launch.
PRELUDES: dict[str, Callable[[], Launch]] = {"short": builders.short_launch, "gemv": builders.gemv_launch}


#: The shapes a designed sweep (`gemmlab tune` with no names) times each prelude at, beside `default`:
#: 2^10 to 2^26 outputs, few rows and many, aligned and odd, since random draws seldom hold them at size.
FLOOR_SHAPES: dict[str, tuple[str, ...]] = {
    "short": ("128x8x128", "256x16x256", "512x24x512", "1024x4x1024", "1024x32x1024", "700x30x3000",
              "3000x5x700", "2048x22x2048", "4096x12x4096", "3237x1x5791", "5675x22x5060", "8192x32x8192"),
    "gemv": ("64x16x1", "2x4663x1", "13x2667x1", "296x473x1", "80x1057x1", "1024x1024x1", "7086x638x1",
             "4096x4096x1", "3000x7001x1", "8045x7676x1", "8192x8192x1", "16x8192x1"),
}


def own(rung: str) -> Launch:
    return PRELUDES[rung]()


def applies(launch: Launch, m: int, n: int, k: int) -> bool:
    """Whether `launch`'s own precondition holds at the shape (a prelude's is about the shape alone:
    no alignment, so no tensors are needed)."""
    when = launch.when
    if when is None:
        return True
    if not isinstance(when, When) or when.align:
        raise ValueError(f"a prelude's precondition must be a When on the shape alone, not {when}")
    return when(None, None, None, m, n, k)


def _floor_rows(rows: list[tuple[int, int, float, str]], margin: float, min_points: int) -> dict | None:
    """The floor over `rows` (outputs, reduction, speedup, label), sorted by outputs: where the
    prelude led by more than `margin` from there up, with at least `min_points` rows."""
    first = len(rows)
    while first > 0 and rows[first - 1][2] > 1 + margin:
        first -= 1
    above = rows[first:]
    if len(above) < min_points:
        return None
    return {"outputs": above[0][0], "points": len(above),
            "speedup_geomean": geomean(s for _, _, s, _ in above),
            "slowest": min(s for _, _, s, _ in above),
            "below": [{"label": label, "outputs": o, "speedup": s} for o, _, s, label in rows[:first]]}


def floor(points: list[dict], rung: str, margin: float, min_points: int, incumbent: str = "default") -> dict | None:
    """The fewest outputs (M·K) from which `rung` beat `incumbent` by more than `margin` at every sweep
    point its launch applies to (at least `min_points`), under the longest reduction N where such a
    floor exists, so a kernel that loses at its own bound keeps the reductions where it leads; and the
    evidence. None where no floor holds, or where `rung` failed anywhere. Points where `incumbent`
    ran `rung`'s own kernel say nothing and are left out."""
    launch = own(rung)
    rows = []
    for p in points:
        m, n, k = p["shape"]
        if not applies(launch, m, n, k):
            continue
        results = {r["name"]: r for r in p["results"]}
        mine, other = results.get(rung), results.get(incumbent)
        if mine is None or other is None:
            continue
        if not (mine.get("passed") and mine.get("median_ms")):
            return None
        if same_build(mine.get("kernel"), other.get("kernel")):
            continue
        if other.get("passed") and other.get("median_ms"):
            rows.append((m * k, n, other["median_ms"] / mine["median_ms"], p.get("label", str(p["shape"]))))
    rows.sort(key=lambda r: r[0])
    for longest in sorted({n for _, n, _, _ in rows}, reverse=True):
        found = _floor_rows([r for r in rows if r[1] <= longest], margin, min_points)
        if found is not None:
            return {"launch": launch.name, "reduction": longest, **found,
                    "longer": [{"label": label, "reduction": n, "speedup": s}
                               for _, n, s, label in rows if n > longest]}
    return None


def launches(record: dict | None) -> tuple[Launch, ...]:
    """The record's preludes as launches, each under its own precondition, its floor and its longest
    reduction (where the record has one), named "prelude " and its rung."""
    out = []
    for rung, entry in ((record or {}).get("preludes") or {}).items():
        launch = own(rung)
        when = launch.when or When()
        bounds = [x for x in (when.reduction, entry.get("reduction", 0)) if x]  # 0: any N
        when = dataclasses.replace(when, outputs=int(entry["outputs"]), reduction=min(bounds, default=0))
        out.append(dataclasses.replace(launch, when=when, name=f"prelude {rung}"))
    return tuple(out)
