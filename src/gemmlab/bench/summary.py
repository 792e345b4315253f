"""What a sweep record says about each implementation across its shapes: the figures the issues'
targets are stated in (geometric mean, minimum, 10th percentile of the ratio to cuBLAS, the worst
shape by size, the accuracy count against cuBLAS's, and `default` against the best other rung).

Computed from the record's own rows, never stored by hand: `gemmlab report` prints them, and
`gemmlab sweep --random` adds them to the record it writes.
"""

from __future__ import annotations

import math
import statistics

from .. import registry

#: Outputs (M·K) from which a shape counts as "outputs ≥ 256×256".
LARGE_OUTPUTS = 256 * 256


def _row(point: dict, name: str) -> dict | None:
    return next((r for r in point["results"] if r["name"] == name), None)


def _timed(row: dict | None) -> bool:
    return bool(row) and row.get("passed") and row.get("median_ms") is not None


def _percentile(values: list[float], q: float) -> float:
    """The q-quantile by linear interpolation between order statistics (numpy's default)."""
    ordered = sorted(values)
    at = q * (len(ordered) - 1)
    lo = math.floor(at)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (at - lo)


def _outputs(point: dict) -> int:
    m, _, k = point["shape"]
    return m * k


def _strict(name: str) -> bool:
    impl = registry.REGISTRY.get(name)
    return bool(impl) and impl.precision == registry.FP32 and name != registry.BASELINE


def summarize(record: dict) -> dict[str, dict]:
    """Per implementation (the baseline left out): its figures over the record's points."""
    base = registry.BASELINE
    out: dict[str, dict] = {}
    for name in record["names"]:
        if name == base:
            continue
        ratios, worst_large, small_gap, worse_accuracy, failed = [], None, None, [], []
        for p in record["points"]:
            row, ref = _row(p, name), _row(p, base)
            if row and not row.get("passed"):
                failed.append(p["label"])
            if not (_timed(row) and _timed(ref)):
                continue
            ratio = ref["median_ms"] / row["median_ms"]
            ratios.append(ratio)
            if _outputs(p) >= LARGE_OUTPUTS:
                if worst_large is None or ratio < worst_large[0]:
                    worst_large = (ratio, p["label"])
            else:
                gap_us = (row["median_ms"] - ref["median_ms"]) * 1e3
                if small_gap is None or gap_us > small_gap[0]:
                    small_gap = (gap_us, p["label"])
            ours = row.get("figures", {}).get("exact_violations")
            theirs = ref.get("figures", {}).get("exact_violations")
            if ours is not None and theirs is not None and ours > theirs:
                worse_accuracy.append({"label": p["label"], "ours": ours, "cublas": theirs})
        if not ratios:
            out[name] = {"points": 0, "failed": failed}
            continue
        out[name] = {
            "points": len(ratios),
            "geomean": math.exp(statistics.fmean(math.log(r) for r in ratios)),
            "min": min(ratios),
            "p10": _percentile(ratios, 0.1),
            "worst_outputs_ge_256x256": {"ratio": worst_large[0], "label": worst_large[1]} if worst_large else None,
            "worst_gap_us_outputs_lt_256x256": {"us": small_gap[0], "label": small_gap[1]} if small_gap else None,
            "accuracy_worse_than_cublas": worse_accuracy,
            "failed": failed,
        }
    if "default" in out and out["default"].get("points"):
        out["default"]["vs_best_other_strict"] = _against_best(record, "default")
    for entry in record.get("host_overhead", []):
        for name, figures in entry.items():
            if name != "shape" and name in out:
                out[name].setdefault("host_overhead_us", []).append(
                    {"shape": entry["shape"], "us": figures["overhead_ms"] * 1e3})
    if base in record["names"] and record.get("host_overhead"):  # the baseline's own, to compare with
        out[base] = {"host_overhead_us": [{"shape": e["shape"], "us": e[base]["overhead_ms"] * 1e3}
                                          for e in record.get("host_overhead", []) if base in e]}
    return out


def _against_best(record: dict, name: str) -> dict:
    """How far `name` runs behind the fastest other strict-FP32 rung of each point: the worst
    point's slowdown (time / best other's time − 1), where the best other is faster."""
    worst = {"slowdown": 0.0, "label": None, "best": None}
    for p in record["points"]:
        row = _row(p, name)
        if not _timed(row):
            continue
        others = [r for r in p["results"] if r["name"] != name and _strict(r["name"]) and _timed(r)]
        if not others:
            continue
        best = min(others, key=lambda r: r["median_ms"])
        slowdown = row["median_ms"] / best["median_ms"] - 1
        if slowdown > worst["slowdown"]:
            worst = {"slowdown": slowdown, "label": p["label"], "best": best["name"]}
    return worst


def lines(summary: dict[str, dict]) -> list[str]:
    """One Markdown table of the summary, for `gemmlab report` and the sweep's own output."""
    out = ["| implementation | shapes | geomean | min | p10 | worst ≥ 256² outputs | worst gap < 256² (µs) "
           "| shapes less accurate than cuBLAS |", "|---|---:|---:|---:|---:|---|---|---:|"]
    for name, s in summary.items():
        if name == registry.BASELINE:
            continue
        if not s.get("points"):
            out.append(f"| {name} | 0 | - | - | - | - | - | - |")
            continue
        wl, sg = s["worst_outputs_ge_256x256"], s["worst_gap_us_outputs_lt_256x256"]
        out.append(f"| {name} | {s['points']} | {s['geomean']:.3f} | {s['min']:.3f} | {s['p10']:.3f} | "
                   + (f"{wl['ratio']:.3f} ({wl['label']})" if wl else "-") + " | "
                   + (f"{sg['us']:+.1f} ({sg['label']})" if sg else "-") + f" | {len(s['accuracy_worse_than_cublas'])} |")
    overheads = [f"{name} " + ", ".join(f"{'×'.join(map(str, o['shape']))}: {o['us']:.1f}"
                                        for o in s["host_overhead_us"])
                 for name, s in summary.items() if s.get("host_overhead_us")]
    if overheads:
        out += ["", "Host overhead of a Python call (µs, per-call time minus GPU time): " + "; ".join(overheads) + "."]
    if summary.get("default", {}).get("vs_best_other_strict"):
        b = summary["default"]["vs_best_other_strict"]
        if b["label"]:
            out += ["", f"`default` at its worst against the fastest other strict-FP32 rung: "
                        f"{100 * b['slowdown']:.1f} % behind {b['best']} at {b['label']}."]
    return out
