"""A results record as Markdown tables and PNG plots (matplotlib, Agg): nothing here measures, so
docs are regenerated from the JSON, never typed."""

from __future__ import annotations

from pathlib import Path

import matplotlib

from .. import docblocks
from ..measure.device import peak_for
from ..precision import Precision
from .results import CPU_NOTE, baseline_label, in_reading_order, kernel_label, step_of

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def markdown_table(record: dict) -> str:
    m, n, k = record["shape"]
    dev = record["device"]
    head = (f"{dev['name']} · {m}×{n}×{k} · {record['timing']} · median of {record['iters']} after "
            f"{record['warmup']} warm-ups · {record['date']}")
    lines = [f"_{head}_", ""]
    if record.get("platform") == "cpu":
        lines += [f"_{CPU_NOTE}_", ""]
    # The TF32 yardstick's column only where it ran: tf32 rows get their ratio to it.
    tf32 = any(r.get("ratio_vs_cublas_tf32") for r in record["results"])
    lines += [f"| step | name | precision | kernel | median ms | TFLOP/s | vs {baseline_label(record)} "
              + ("| vs cuBLAS TF32 " if tf32 else "") + "| of peak | rel. error | result |",
              "|---|---|---|---|---:|---:|---:|" + ("---:|" if tf32 else "") + "---:|---:|---|"]
    for r in in_reading_order(record["results"]):
        if "median_ms" not in r:
            lines.append(f"| {step_of(r)} | {r['name']} | {r['precision']} | {kernel_label(record, r)} "
                         f"| - | - | - |{' - |' if tf32 else ''} - | - | error: {r['reason']} |")
            continue
        frac = f"{100 * r['fraction_of_peak']:.0f} %" if r.get("fraction_of_peak") else "-"
        ratio = f"{r['ratio_vs_cublas']:.2f}×" if r.get("ratio_vs_cublas") else "-"
        tf32_ratio = r.get("ratio_vs_cublas_tf32") if r["precision"] == "tf32" else None
        tf32_cell = (f" {tf32_ratio:.2f}× |" if tf32_ratio else " - |") if tf32 else ""
        err = f"{r['figures']['rel_fro']:.1e}" if r.get("figures") else "-"
        result = "pass" if r["passed"] else f"FAIL: {r['reason']}"
        lines.append(f"| {step_of(r)} | {r['name']} | {r['precision']} | {kernel_label(record, r)} | "
                     f"{r['median_ms']:.2f} | {r['tflops']:.1f} | {ratio} |{tf32_cell} {frac} | {err} | {result} |")
    clocks = record.get("clocks_during_timing") or {}
    if clocks.get("samples"):
        c, w = clocks["sm_clock_mhz"], clocks["power_w"]
        lines += ["", f"During the timed calls (nvidia-smi, {clocks['samples']} samples): SM clock median "
                      f"{c['median']:.0f} MHz (min {c['min']:.0f}), power median {w['median']:.0f} W "
                      f"(max {w['max']:.0f})."]
    peaks = record.get("peaks_tflops") or {}
    if peaks.get("fp32"):
        lines += ["", f"Peaks derived from the device (SMs × per-SM rate × max clock): FP32 FMA "
                      f"{peaks['fp32']:.1f} TFLOP/s, TF32 tensor {peaks['tf32']:.0f} TFLOP/s; "
                      f"`fp32x3` is measured against a third of the TF32 peak "
                      f"({peaks['tf32'] / 3:.0f} TFLOP/s), since it issues three TF32 products."]
    return "\n".join(lines) + "\n"


#: The panels of the ladder plots, one per precision class, each with its own yardstick.
PANELS = (("fp32", "strict FP32", "torch"), ("tf32", "TF32", "torch-tf32"), ("fp32x3", "FP32-accurate (3xTF32)", "torch"))


def _panels(rows: list[dict]) -> list[tuple[str, str, list[dict], dict | None]]:
    """(precision, title, its rows, its yardstick's row) for each class that has rows, in PANELS order."""
    by_name = {r["name"]: r for r in rows}
    out = []
    for precision, title, yardstick in PANELS:
        mine = [r for r in rows if r["precision"] == precision and r["name"] != yardstick]
        if mine:
            out.append((precision, title, mine, by_name.get(yardstick)))
    return out


def ladder_figure(record: dict, value: str = "tflops"):
    """The ladder as horizontal bars, a panel per precision class with its own scale (TF32's bars,
    8× taller, would flatten strict FP32's), failed rows hatched."""
    from .colours import PRECISION

    rows = [r for r in in_reading_order(record["results"]) if "median_ms" in r]
    panels = _panels(rows)
    heights = [len(p[2]) + 1 for p in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 1.2 * len(panels) + 0.3 * sum(heights)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    peaks = record.get("peaks_tflops") or {}
    for ax, (precision, title, mine, base) in zip(axes[:, 0], panels, strict=True):
        names = [r["name"] for r in mine]
        bars = ax.barh(names, [r[value] for r in mine], color=PRECISION[precision], height=0.7)
        for bar, r in zip(bars.patches, mine, strict=True):
            if not r["passed"]:
                bar.set_hatch("//")
                bar.set_edgecolor("black")
        ax.invert_yaxis()
        if base:
            ax.axvline(base[value], color="black", ls="--", lw=1,
                       label=f"{baseline_label(record)} {'TF32' if precision == 'tf32' else 'FP32'} {base[value]:.3g}")
        peak = peak_for(Precision(precision), peaks) if value == "tflops" else None
        if peak:
            ax.axvline(peak, color="grey", ls=":", lw=1, label=f"peak {peak:.3g}")
        if value == "median_ms":
            ax.set_xscale("log")
        ax.set_title(title, loc="left", fontsize="medium")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    axes[-1, 0].set_xlabel("TFLOP/s" if value == "tflops" else "median ms (log)")
    fig.suptitle(f"{record['device']['name']} · {'×'.join(map(str, record['shape']))}"
                 + (" · hatched: failed its check" if any(not r["passed"] for r in rows) else ""))
    fig.tight_layout()
    return fig


def _save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_ladder(record: dict, out_dir: Path, stem: str = "ladder") -> list[Path]:
    return [_save(ladder_figure(record, value), out_dir / f"{stem}_{suffix}.png")
            for value, suffix in (("tflops", "tflops"), ("median_ms", "ms"))]


#: The most shape labels a sweep's x axis shows (turned 40°, they fit side by side at 11 inches).
LABELS_SHOWN = 16


def _precision_of(record: dict, name: str) -> str:
    return next((r["precision"] for p in record["points"] for r in p["results"] if r["name"] == name), "fp32")


def sweep_figure(record: dict):
    """TFLOP/s against shape, a panel per precision class (TF32's scale apart from FP32's)."""
    from . import colours

    points = record["points"]
    labels = [p["label"] for p in points]
    classes = [(precision, title, [n for n in record["names"] if _precision_of(record, n) == precision])
               for precision, title, _ in PANELS]
    classes = [c for c in classes if c[2]]
    fig, axes = plt.subplots(len(classes), 1, figsize=(11, 1.2 + 3.2 * len(classes)), sharex=True, squeeze=False)
    for ax, (_, title, names) in zip(axes[:, 0], classes, strict=True):
        palette = colours.distinct(len(names))
        for i, name in enumerate(names):
            ys = [next((r["tflops"] for r in p["results"] if r["name"] == name and "tflops" in r), float("nan"))
                  for p in points]
            ax.plot(range(len(labels)), ys, ls=colours.line_style(i), marker="o", ms=4, color=palette[i], label=name)
        ax.set_ylabel("TFLOP/s")
        ax.set_title(title, loc="left", fontsize="medium")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    shown = range(0, len(labels), -(-len(labels) // LABELS_SHOWN))
    # long labels stand upright: turned 40°, their boxes would overlap their neighbours'
    turn = 40 if max(map(len, labels)) <= 10 else 90
    axes[-1, 0].set_xticks(list(shown), [labels[i] for i in shown], rotation=turn, ha="right" if turn < 90 else "center")
    fig.suptitle(f"{record['device']['name']}: TFLOP/s against shape")
    fig.tight_layout()
    return fig


def random_figure(record: dict):
    """A random sweep: each implementation's ratio to cuBLAS against the output tiles and N."""
    from . import colours

    fig, axes = plt.subplots(1, 2, figsize=(14, 5), sharey=True)
    names = [n for n in record["names"] if n != "torch"]
    for colour, name in zip(colours.distinct(len(names)), names, strict=True):
        tiles, reduction, ratios = [], [], []
        for p in record["points"]:
            row = next((r for r in p["results"] if r["name"] == name), None)
            if row and row.get("ratio_vs_cublas"):
                m, n, k = p["shape"]
                tiles.append(m * k / 128 ** 2)
                reduction.append(n)
                ratios.append(row["ratio_vs_cublas"])
        axes[0].scatter(tiles, ratios, s=14, color=colour, label=name, alpha=0.8)
        axes[1].scatter(reduction, ratios, s=14, color=colour, alpha=0.8)
    for ax, xlabel in zip(axes, ("output tiles (M·K / 128²)", "reduction length N"), strict=True):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xlabel(xlabel)
    axes[0].set_ylabel("time of cuBLAS FP32 / time")
    r = record["random"]
    fig.suptitle(f"{record['device']['name']}: {r['n']} random shapes (seed {r['seed']}) against cuBLAS FP32")
    fig.legend(loc="upper left", bbox_to_anchor=(0.87, 0.9), fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, 0, 0.86, 1))
    return fig


def plot_random(record: dict, out_dir: Path, stem: str = "random") -> Path:
    return _save(random_figure(record), out_dir / f"{stem}.png")


def random_block(record: dict, plot: Path) -> str:
    """A random sweep's Markdown: what it was, the summary per implementation, its plot."""
    from . import summary

    r = record["random"]
    clocks = record["points"][-1].get("clocks_during_timing") or {}
    mhz = (clocks.get("sm_clock_mhz") or {}).get("median")
    head = (f"_{record['device']['name']} · {r['n']} random shapes, seed {r['seed']} "
            f"(bench/randomshapes.py) · GPU time, cuda-events, interleaved · {record['date']}"
            + (f" · SM clock median {mhz:.0f} MHz at the last shape" if mhz else "") + "_")
    return "\n".join([head, "", *summary.lines(summary.summarize(record)), "",
                      f"![ratio to cuBLAS against output tiles and N](docs/{plot.name})", ""])


def replace_block(text: str, block: str, tag: str = "results") -> str:
    """Replace what stands between `<!-- tag:begin -->` and `<!-- tag:end -->` (`gemmlab.docblocks`)."""
    return docblocks.replace(text, block, tag)


def design_table(record: dict) -> str:
    """The buffering study as its 2×2 design: median ms per (tile, buffers), and what was held equal."""
    by_name = {r["name"]: r for r in record["results"]}
    cells: dict[tuple[str, int], str] = {}
    for d in record.get("design", []):
        r = by_name.get(d["name"], {})
        cells[(d["buffers"], d["tile"])] = (
            f"{r['median_ms']:.2f} ms ({d['name']})" if "median_ms" in r else f"- ({d['name']})")
    tiles = sorted({t for _, t in cells})
    lines = ["| tile | single buffer | double buffer |", "|---|---|---|"]
    for t in tiles:
        lines.append(f"| {t}×{t} | {cells.get(('single', t), '-')} | {cells.get(('double', t), '-')} |")
    if record.get("controls"):
        lines += ["", f"_Held equal in every arm: {record['controls']}._"]
    return "\n".join(lines) + "\n"


def block_tag(record: dict) -> str:
    """The name of a record's `<!-- tag:begin -->` block: random (a sweep's), ladder or
    study_buffering (also its report's name)."""
    if record.get("study") == "sweep":
        return "random"
    return "study_buffering" if record.get("study") == "buffering" else "ladder"


def resources_table(record: dict) -> str:
    lines = ["", "| name | kernel | threads | regs | smem B | spills | occupancy |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in record["resources"]:
        lines.append(f"| {r['name']} | {r['kernel']} | {r['threads']} | {r['regs']} | {r['smem B']} | "
                     f"{r['spills']} | {r.get('occupancy', '-')} |")
    return "\n".join(lines) + "\n"


def document(record: dict) -> str:
    """The Markdown block of a bench or study record: design, ladder and resources tables."""
    table = markdown_table(record)
    if record.get("design"):
        table = design_table(record) + "\n" + table
    if record.get("resources"):
        table += resources_table(record)
    return table


def write_report(record: dict, out_dir: Path, stem: str) -> tuple[str, list[Path]]:
    """Write `stem`.md and its PNGs into out_dir; return the Markdown block and the paths."""
    table = document(record)
    pngs = plot_ladder(record, out_dir, stem=stem)
    md = out_dir / f"{stem}.md"
    md.write_text(table + "\n" + "\n".join(f"![{p.stem}]({p.name})" for p in pngs) + "\n")
    return table, [md, *pngs]


def write_sweep(record: dict, out_dir: Path, stem: str) -> tuple[str | None, list[Path]]:
    """A sweep's plot, and a random sweep's ratio plot and Markdown summary (`stem`-summary.md);
    return that summary (None for a fixed-shape sweep) and the paths."""
    paths = [_save(sweep_figure(record), out_dir / f"{stem}.png")]
    if not record.get("random"):
        return None, paths
    ratios = plot_random(record, out_dir, stem=f"{stem}-ratios")
    block = random_block(record, ratios)
    md = out_dir / f"{stem}-summary.md"
    md.write_text(block)
    return block, [*paths, ratios, md]
