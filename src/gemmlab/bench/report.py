"""Turn a results record into Markdown tables and PNG plots (matplotlib, Agg).

Nothing here measures: every figure comes from the JSON that `gemmlab bench`
(or a study or sweep) wrote, so docs can be regenerated and never typed.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

from .. import docblocks
from .results import baseline_label, kernel_label

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _rows(record: dict) -> list[dict]:
    return sorted(record["results"], key=lambda r: (r["rung"], r["name"]))


CPU_NOTE = "CPU figures, indicative only: CPU timings vary widely between identical runs."


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
    lines += [f"| rung | name | precision | kernel | median ms | TFLOP/s | vs {baseline_label(record)} "
              + ("| vs cuBLAS TF32 " if tf32 else "") + "| of peak | rel. error | result |",
              "|---:|---|---|---|---:|---:|---:|" + ("---:|" if tf32 else "") + "---:|---:|---|"]
    for r in _rows(record):
        if "median_ms" not in r:
            lines.append(f"| {r['rung']} | {r['name']} | {r['precision']} | {kernel_label(record, r)} "
                         f"| - | - | - |{' - |' if tf32 else ''} - | - | error: {r['reason']} |")
            continue
        frac = f"{100 * r['fraction_of_peak']:.0f} %" if r.get("fraction_of_peak") else "-"
        ratio = f"{r['ratio_vs_cublas']:.2f}×" if r.get("ratio_vs_cublas") else "-"
        tf32_ratio = r.get("ratio_vs_cublas_tf32") if r["precision"] == "tf32" else None
        tf32_cell = (f" {tf32_ratio:.2f}× |" if tf32_ratio else " - |") if tf32 else ""
        err = f"{r['figures']['rel_fro']:.1e}" if r.get("figures") else "-"
        result = "pass" if r["passed"] else f"FAIL: {r['reason']}"
        lines.append(f"| {r['rung']} | {r['name']} | {r['precision']} | {kernel_label(record, r)} | "
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


def plot_ladder(record: dict, out_dir: Path, stem: str = "ladder") -> list[Path]:
    rows = [r for r in _rows(record) if "median_ms" in r]
    names = [r["name"] for r in rows]
    colors = ["tab:green" if r["passed"] else "tab:red" for r in rows]
    base = next((r for r in rows if r["name"] == record["baseline"]), None)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []

    fig, ax = plt.subplots(figsize=(10, 5))
    ax.bar(names, [r["tflops"] for r in rows], color=colors)
    if base:
        ax.axhline(base["tflops"], color="tab:blue", ls="--", label=f"{baseline_label(record)} FP32 {base['tflops']:.1f}")
    fp32_peak = (record.get("peaks_tflops") or {}).get("fp32")
    if fp32_peak:
        ax.axhline(fp32_peak, color="black", ls=":", label=f"FP32 FMA peak {fp32_peak:.1f}")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"{record['device']['name']} · {'×'.join(map(str, record['shape']))}")
    ax.tick_params(axis="x", rotation=60)
    ax.legend()
    fig.tight_layout()
    paths.append(out_dir / f"{stem}_tflops.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(10, 5))
    ax.bar(names, [r["median_ms"] for r in rows], color=colors)
    ax.set_ylabel("median ms (log)")
    ax.set_yscale("log")
    ax.tick_params(axis="x", rotation=60)
    fig.tight_layout()
    paths.append(out_dir / f"{stem}_ms.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths


def plot_sweep(record: dict, out_dir: Path, stem: str = "sweep") -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(10, 5))
    points = record["points"]
    labels = [p["label"] for p in points]
    # Ten colours repeat past ten lines: each further ten get another line style and marker,
    # so that no two lines of the legend look alike.
    styles = [("-", "o"), ("--", "s"), (":", "^")]
    for i, name in enumerate(record["names"]):
        ys = [next((r["tflops"] for r in p["results"] if r["name"] == name and "tflops" in r), float("nan"))
              for p in points]
        ls, marker = styles[i // 10 % len(styles)]
        ax.plot(labels, ys, ls=ls, marker=marker, label=name)
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"{record['device']['name']}: TFLOP/s against shape")
    ax.tick_params(axis="x", rotation=60)
    ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    path = out_dir / f"{stem}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_random(record: dict, out_dir: Path, stem: str = "random") -> Path:
    """A random sweep: each implementation's ratio to cuBLAS against the output tiles (M·K in
    128×128 tiles) and against the reduction length N, one colour per implementation."""
    out_dir.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    names = [n for n in record["names"] if n != "torch"]
    colours = plt.get_cmap("tab20")(range(len(names)))
    for colour, name in zip(colours, names, strict=True):
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
    axes[0].legend(fontsize="small", ncol=2)
    fig.tight_layout()
    path = out_dir / f"{stem}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


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
    """The name of the report and of its `<!-- tag:begin -->` block: ladder or study_buffering."""
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
