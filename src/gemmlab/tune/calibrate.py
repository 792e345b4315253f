"""Calibrate `default`'s dispatch on shapes nobody chose: random-shape sweeps (`gemmlab sweep --random`).

`gemmlab tune` picks each class's winner at one representative shape, so a winner can fit its
representative and miss the class (the many-waves classes' winners, picked at 8192×6144×4096, ran
behind the `tma` rung's own launch at other shapes of those classes: experiments/README.md#random-shapes). A random
sweep times every strict-FP32 rung at many shapes of each class, `default` (the installed record's
winners) among them. Calibration reads those rows: per class, each rung is compared with
`default` over the shapes where both were timed (at least MIN_POINTS of them), by the geometric
mean of each one's ratio to cuBLAS FP32 there; where a rung with a search space beats `default`
by more than MARGIN, its own launch for that class's layout becomes the class's winner. So
sweeps that timed different rungs (a rung added after an earlier draw) still pool their shapes:
each rung is judged on the shapes it ran, against `default` on the same ones. A rung wrong at
any shape it ran is never chosen. A prelude rung (policy/preludes.py: no space, a kernel for a kind
of shape across the classes) is judged instead on every sweep shape its launch applies to: the
record keeps the fewest outputs from which it beat `default` at each of them (`preludes.floor`),
or drops it; designed sweeps (`gemmlab sweep --shape …`, such as experiments/gpu_session.sh's short-floor) count
for preludes too, whose kind of shape a draw seldom holds at size, never for the classes. A class
whose winner was inherited from another (the odd-n classes, from the odd ones when the layout was
split) and that has fewer than MIN_POINTS shapes of its own follows its source where calibration
changes the source's winner to another build: the same rung, its own launch for the inheriting class's layout
(b-in-place where only N is odd), the launch that rung ran at such shapes in the sweeps.
No GPU time: the figures are the sweep's. The record keeps,
per class, what was compared and what was chosen (``calibration``), so the choice can be
re-read and re-made.
"""

from __future__ import annotations

from datetime import UTC, datetime

from ..measure.timing import geomean
from ..policy import preludes
from ..policy.classes import BY_KEY, CLASSES, classify, representatives
from ..policy.spaces import SPACES

#: The fewest sweep shapes of a class that calibration acts on.
MIN_POINTS = 3
#: How much faster (in geometric mean) a rung must be than `default` to replace its winner.
MARGIN = 0.01
INCUMBENT = "default"


def _ratios(points: list[dict], name: str) -> list[float] | None:
    """cuBLAS time / `name`'s time at each point; None if `name` did not pass at every one."""
    out = []
    for p in points:
        rows = {r["name"]: r for r in p["results"]}
        row, ref = rows.get(name), rows.get("torch")
        if not (row and ref and row.get("passed") and row.get("median_ms") and ref.get("median_ms")):
            return None
        out.append(ref["median_ms"] / row["median_ms"])
    return out


def scores(points: list[dict], names: list[str]) -> dict[str, float]:
    """Each name's geometric-mean ratio to cuBLAS over `points` (names that failed anywhere left out)."""
    out = {}
    for name in names:
        ratios = _ratios(points, name)
        if ratios:
            out[name] = geomean(ratios)
    return out


def _pairs(points: list[dict], name: str) -> list[tuple[float, float]] | None:
    """(`default`'s ratio to cuBLAS, `name`'s) at each point where both were timed and passed;
    None where `name` failed at a point it ran."""
    out = []
    for p in points:
        rows = {r["name"]: r for r in p["results"]}
        row, incumbent, ref = rows.get(name), rows.get(INCUMBENT), rows.get("torch")
        if row is None:
            continue
        if not (row.get("passed") and row.get("median_ms")):
            return None
        if incumbent and incumbent.get("passed") and incumbent.get("median_ms") and ref and ref.get("median_ms"):
            out.append((ref["median_ms"] / incumbent["median_ms"], ref["median_ms"] / row["median_ms"]))
    return out


def compared(points: list[dict], names: list[str]) -> dict[str, dict]:
    """Each name judged against `default` over the points where both ran (at least MIN_POINTS):
    its geometric-mean ratio to cuBLAS there, and `default`'s over the same points."""
    out = {}
    for name in names:
        pairs = _pairs(points, name)
        if pairs and len(pairs) >= MIN_POINTS:
            out[name] = {"points": len(pairs), "geomean": geomean([b for _, b in pairs]),
                         "default": geomean([a for a, _ in pairs])}
    return out


def _winner(rung: str, cls_key: str) -> dict | None:
    """The class's winner entry for `rung`'s own launch at the class's layout (as the tuner names one);
    None where that launch is not one its space tunes (small's 4-byte twins at an odd N: a record
    can name only a tunable launch, so such a rung cannot win the class by calibration)."""
    from .search import launch_at

    name = launch_at(rung, representatives()[BY_KEY[cls_key]]).name
    space = SPACES[rung]
    if name not in space.launches:
        return None
    knobs = space.current(name)
    built = space.build(name, knobs)
    host = getattr(built.host, "label", "")
    return {"rung": rung, "launch": name, "knobs": knobs,
            "kernel": built.kernel.label + (f" ({host})" if host else "")}


def _knobs(winner: dict) -> dict | None:
    """A winner's knobs as its space reads them now (absent and retired ones at their values)."""
    space, knobs = SPACES.get(winner.get("rung")), winner.get("knobs")
    return space.knobs_of(knobs) if space and isinstance(knobs, dict) else knobs


def _same_build(winner: dict, current: dict) -> bool:
    return _knobs(winner) == _knobs(current) and all(winner.get(k) == current.get(k)
                                                     for k in ("rung", "launch", "kernel"))


def calibrate(record: dict, sweeps: list[dict], rungs: list[str], digest=None) -> dict:
    """`record` with the classes' winners replaced where the sweeps say a rung's own launch is
    faster than `default` over the class's shapes. `digest(launch)` names the cubin a new winner
    builds into (the tuner's `cubin` field), where the caller can compile for the record's GPU."""
    sms = record["gpu"]["sm_count"]
    leading = [r for r in rungs if r in preludes.PRELUDES]
    rungs = [r for r in rungs if r not in preludes.PRELUDES]
    names = [INCUMBENT, *rungs]
    entries = {}
    out = dict(record, classes={k: dict(v) for k, v in record["classes"].items()})
    found = dict(record.get("preludes") or {})
    every = [p for s in sweeps for p in s["points"]]  # preludes: designed sweeps (short-floor) too
    drawn = [s for s in sweeps if s.get("random")]  # classes: only shapes nobody chose
    for rung in leading:
        if not any(r["name"] == rung for p in every for r in p["results"]):
            continue  # no sweep timed it: the record's entry (or its absence) stands
        entry = preludes.floor(every, rung, MARGIN, MIN_POINTS, INCUMBENT)
        if entry is None:
            found.pop(rung, None)
        else:
            found[rung] = entry
    if found:
        out["preludes"] = found
    else:
        out.pop("preludes", None)
    for cls in CLASSES:
        points = [p for s in drawn for p in s["points"] if classify(*p["shape"], sms) == cls]
        entry = {"points": len(points), "scores": {}, "chosen": None}
        entries[cls.key] = entry
        current = out["classes"].get(cls.key)
        if len(points) < MIN_POINTS or not current or not current.get("winner"):
            continue
        got = scores(points, names)
        entry["scores"] = got
        if INCUMBENT not in got:  # default wrong or untimed at a shape of the class: nothing to weigh
            continue
        against = {n: c for n, c in compared(points, rungs).items() if _winner(n, cls.key) is not None}
        entry["compared"] = against
        best = max(against, key=lambda n: against[n]["geomean"] / against[n]["default"], default=None)
        if best and against[best]["geomean"] > against[best]["default"] * (1 + MARGIN):
            winner = _winner(best, cls.key)
            if digest:
                winner["cubin"] = digest(SPACES[best].build(winner["launch"], winner["knobs"]))
            if winner.get("cubin") is None and _same_build(winner, current["winner"]):
                winner["cubin"] = current["winner"].get("cubin")  # chosen again: the GPU's build stands
            current["winner"] = winner | {"calibrated": {"geomean": against[best]["geomean"],
                                                         "replaced": against[best]["default"],
                                                         "points": against[best]["points"]}}
            entry["chosen"] = best
    # A class that inherited its winner, without evidence of its own, follows its source where the
    # source's winner changed (where it stands, the inherited launch may be timed evidence; see
    # few-waves-odd-n, by its former name medium-odd-n in experiments/README.md).
    for cls in CLASSES:
        current, entry = out["classes"].get(cls.key), entries[cls.key]
        source = (current or {}).get("inherited")
        chosen = entries.get(source, {}).get("chosen")
        changed = chosen and not _same_build(out["classes"][source]["winner"], record["classes"][source]["winner"])
        if changed and entry["points"] < MIN_POINTS:
            winner = _winner(chosen, cls.key)  # the rung's own launch for this class's layout
            if winner is None or _same_build(winner, current["winner"]):
                continue
            if digest:
                winner["cubin"] = digest(SPACES[chosen].build(winner["launch"], winner["knobs"]))
            current["winner"] = winner
            entry["chosen"] = chosen
            entry["followed"] = source
    out["calibration"] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "sweeps": [{"date": s["date"], "seed": (s.get("random") or {}).get("seed"), "n": len(s["points"]),
                    "random": bool(s.get("random"))} for s in sweeps],
        "min_points": MIN_POINTS, "margin": MARGIN, "rungs": [*rungs, *leading], "classes": entries,
        "preludes": {r: found.get(r) for r in leading},  # what the record holds after it
    }
    return out
