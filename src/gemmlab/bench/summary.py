"""What a sweep record says about each implementation across its shapes, in the figures the issues'
targets are stated in: the geometric mean, minimum and 10th percentile of its ratio to cuBLAS, the
worst shape by size, the accuracy count against cuBLAS's, and `default` against the best other
rung. Computed from the record's own rows, never stored by hand."""

from __future__ import annotations

import math

from .. import registry
from ..cuda.dispatch import same_build
from ..measure.timing import geomean

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


def yardstick(name: str, names: list[str]) -> str:
    """What `name` is compared with: cuBLAS TF32 for a TF32 rung where the record timed it, else
    cuBLAS FP32 (strict FP32 and 3xTF32 both promise FP32's accuracy)."""
    impl = registry.REGISTRY.get(name)
    tf32 = impl is not None and impl.precision == registry.Precision.TF32
    return registry.TF32_BASELINE if tf32 and registry.TF32_BASELINE in names else registry.BASELINE


def _joules(row: dict | None) -> float | None:
    return ((row or {}).get("energy") or {}).get("joules_per_call")


def summarize(record: dict) -> dict[str, dict]:
    """Per implementation (the baselines left out): its figures over the record's points, each
    against its yardstick (`yardstick`)."""
    base = registry.BASELINE
    out: dict[str, dict] = {}
    for name in record["names"]:
        if name in (base, registry.TF32_BASELINE):
            continue
        against = yardstick(name, record["names"])
        ratios, worst_large, small_gap, worse_accuracy, failed = [], None, None, [], []
        energy_ratios = []
        for p in record["points"]:
            row, ref = _row(p, name), _row(p, against)
            if row and not row.get("passed"):
                failed.append(p["label"])
            if not (_timed(row) and _timed(ref)):
                continue
            ratio = ref["median_ms"] / row["median_ms"]
            ratios.append(ratio)
            if _joules(row) and _joules(ref):  # TFLOP/J ours over theirs: their joules over ours
                energy_ratios.append(_joules(ref) / _joules(row))
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
            out[name] = {"against": against, "points": 0, "failed": failed}
            continue
        out[name] = {
            "against": against,
            "points": len(ratios),
            "geomean": geomean(ratios),
            "tflop_per_j": {"points": len(energy_ratios), "geomean": geomean(energy_ratios),
                            "min": min(energy_ratios)} if energy_ratios else None,
            "min": min(ratios),
            "p10": _percentile(ratios, 0.1),
            "worst_outputs_ge_256x256": {"ratio": worst_large[0], "label": worst_large[1]} if worst_large else None,
            "worst_gap_us_outputs_lt_256x256": {"us": small_gap[0], "label": small_gap[1]} if small_gap else None,
            "accuracy_worse_than_cublas": worse_accuracy,
            "failed": failed,
        }
    if "default" in out and out["default"].get("points"):
        out["default"]["vs_best_other_strict"] = _against_best(record, "default")
        out["default"]["vs_best_other_kernel"] = _against_best(record, "default", other_kernels=True)
    for entry in record.get("host_overhead", []):
        for name, figures in entry.items():
            if name != "shape" and name in out:
                out[name].setdefault("host_overhead_us", []).append(_overhead(entry["shape"], figures))
    if base in record["names"] and record.get("host_overhead"):  # the baseline's own, to compare with
        out[base] = {"host_overhead_us": [_overhead(e["shape"], e[base])
                                          for e in record.get("host_overhead", []) if base in e]}
    return out


def _overhead(shape: list[int], figures: dict) -> dict:
    """One shape's host overhead in µs, and of it the host's own time where the record has it
    (the earliest records do not)."""
    out = {"shape": shape, "us": figures["overhead_ms"] * 1e3}
    if figures.get("host_ms") is not None:
        out["host_us"] = figures["host_ms"] * 1e3
    return out


#: How far `default` may run behind another strict-FP32 rung at a shape (issue 27).
BEHIND_LIMIT = 0.03


def _against_best(record: dict, name: str, other_kernels: bool = False) -> dict:
    """How far `name` runs behind the fastest other strict-FP32 rung of each point: the worst
    slowdown (time / best other's time − 1) and how many points are past BEHIND_LIMIT. With
    `other_kernels`, only rungs that ran another kernel count: two rungs running one kernel differ
    by the timing's noise, not by dispatch."""
    worst = {"slowdown": 0.0, "label": None, "best": None, "past_limit": 0}
    for p in record["points"]:
        row = _row(p, name)
        if not _timed(row):
            continue
        others = [r for r in p["results"] if r["name"] != name and _strict(r["name"]) and _timed(r)
                  and not (other_kernels and same_build(r.get("kernel"), row.get("kernel")))]
        if not others:
            continue
        best = min(others, key=lambda r: r["median_ms"])
        slowdown = row["median_ms"] / best["median_ms"] - 1
        worst["past_limit"] += slowdown > BEHIND_LIMIT
        if slowdown > worst["slowdown"]:
            worst |= {"slowdown": slowdown, "label": p["label"], "best": best["name"]}
    return worst


def lines(summary: dict[str, dict]) -> list[str]:
    """One Markdown table of the summary, for `gemmlab report` and the sweep's own output."""
    out = ["| implementation | against | shapes | geomean | min | p10 | worst ≥ 256² outputs | worst gap < 256² (µs) "
           "| shapes less accurate | TFLOP/J geomean (shapes) |", "|---|---|---:|---:|---:|---:|---|---|---:|---|"]
    for name, s in summary.items():
        if name in (registry.BASELINE, registry.TF32_BASELINE):
            continue
        if not s.get("points"):
            out.append(f"| {name} | {s['against']} | 0 | - | - | - | - | - | - | - |")
            continue
        wl, sg, tj = s["worst_outputs_ge_256x256"], s["worst_gap_us_outputs_lt_256x256"], s.get("tflop_per_j")
        out.append(f"| {name} | {s['against']} | {s['points']} | {s['geomean']:.3f} | {s['min']:.3f} | {s['p10']:.3f} | "
                   + (f"{wl['ratio']:.3f} ({wl['label']})" if wl else "-") + " | "
                   + (f"{sg['us']:+.1f} ({sg['label']})" if sg else "-") + f" | {len(s['accuracy_worse_than_cublas'])} | "
                   + (f"{tj['geomean']:.3f} ({tj['points']})" if tj else "-") + " |")
    overheads = [f"{name} " + ", ".join(f"{'×'.join(map(str, o['shape']))}: {o['us']:.1f}"
                                        + (f" (host {o['host_us']:.1f})" if "host_us" in o else "")
                                        for o in s["host_overhead_us"])
                 for name, s in summary.items() if s.get("host_overhead_us")]
    if overheads:
        hosts = any("host_us" in o for s in summary.values() for o in s.get("host_overhead_us", []))
        out += ["", "Host overhead of a Python call (µs, per-call time minus GPU time"
                + ("; in brackets, the host's own time a call" if hosts else "") + "): " + "; ".join(overheads) + "."]
    best = summary.get("default", {}).get("vs_best_other_strict")
    if best and best["label"]:
        other = summary["default"]["vs_best_other_kernel"]
        out += ["", f"`default` at its worst against the fastest other strict-FP32 rung: {_behind(best)}"
                + (f"; against rungs that ran another kernel than `default` there: {_behind(other)}."
                   if other["label"] else "; no rung that ran another kernel was faster.")]
    return out


def _behind(worst: dict) -> str:
    return (f"{100 * worst['slowdown']:.1f} % behind {worst['best']} at {worst['label']} "
            f"({worst['past_limit']} shapes more than {100 * BEHIND_LIMIT:.0f} % behind)")
