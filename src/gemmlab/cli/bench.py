"""`gemmlab bench`, `gemmlab study` and `gemmlab sweep`: timings beside cuBLAS, written as records;
`gemmlab report`: a record as Markdown and plots, into docs/ and README when asked."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from .. import committed, jsonfile, registry, runtime
from ..bench.results import LATEST
from ..problem import PERF_SHAPE
from ..ui import machine, usage
from ..ui.errors import CannotRun, Tally, UsageError, guarded
from . import common
from .common import (
    SMALL_RULE,
    AsJson,
    Names,
    Seed,
    app,
    console,
    messages_console,
    results_record,
    tf32_on_cpu_note,
)


def bench_table(record: dict):
    from ..bench.results import baseline_label, in_reading_order, kernel_label, step_of

    m, n, k = record["shape"]
    base = baseline_label(record)
    # The TF32 yardstick's column only where it ran: tf32 rows get their ratio to it.
    tf32 = any(r.get("ratio_vs_cublas_tf32") for r in record["results"])
    joules = any(r.get("tflop_per_j") for r in record["results"])
    cols = ["step", "name", "precision", "kernel", "median ms", "min ms", "max ms", "TFLOP/s",
            f"vs {base}"] + (["vs cuBLAS TF32"] if tf32 else []) + ["of peak"] + (
            ["J/call", "TFLOP/J", "TFLOP/J vs cuBLAS"] if joules else []) + ["result"]
    table = common.table(f"{record['device']['name']} · {m}×{n}×{k} · {record['timing']} · "
                         f"{record['iters']} iterations after {record['warmup']} warm-ups", cols)
    for r in in_reading_order(record["results"]):
        head = [step_of(r), r["name"], r["precision"], kernel_label(record, r)]
        if "median_ms" not in r:
            table.add_row(*head, *["-"] * (len(cols) - 5), f"[red]ERROR {escape(r['reason'])}[/red]")
            continue
        ratio = r["ratio_vs_cublas"]
        ratio_tf32 = r.get("ratio_vs_cublas_tf32") if r["precision"] == "tf32" else None
        frac = r["fraction_of_peak"]
        table.add_row(
            *head, f"{r['median_ms']:.3f}", f"{r['min_ms']:.3f}", f"{r['max_ms']:.3f}",
            f"{r['tflops']:.2f}", f"{ratio:.2f}×" if ratio else "-",
            *([f"{ratio_tf32:.2f}×" if ratio_tf32 else "-"] if tf32 else []),
            f"{100 * frac:.0f}%" if frac else "-",
            *(_energy_cells(r) if joules else []),
            "[green]pass[/green]" if r["passed"] else f"[red]FAIL {escape(r['reason'])}[/red]",
        )
    return table


def _energy_cells(r: dict) -> list[str]:
    """J/call, TFLOP/J and TFLOP/J against the row's own yardstick (TF32 rows: cuBLAS TF32)."""
    j = (r.get("energy") or {}).get("joules_per_call")
    if not j:
        return ["-", "-", "-"]
    key = "ratio_tflop_per_j_vs_cublas_tf32" if r["precision"] == "tf32" else "ratio_tflop_per_j_vs_cublas"
    ratio = r.get(key)
    return [f"{j:.4g}", f"{r['tflop_per_j']:.3f}", f"{ratio:.2f}×" if ratio else "-"]


def record_tally(record: dict) -> Tally:
    """Passed and failed rows of a bench or study record, and what it skipped."""
    tally = Tally()
    for r in record["results"]:
        tally.add(bool(r["passed"]))
    for why in record.get("skipped", {}).values():
        tally.skip(why)
    return tally


def runnable_or_stop(impls: list[registry.Implementation], what: str):
    """What a measurement of `impls` times here (`bench.run.Lineup`); CannotRun, before anything
    runs or is written, when none of `impls` runs here."""
    from ..bench.run import lineup

    chosen = lineup(impls, runtime.default_device())
    if not any(i in chosen.runnable for i in impls):
        reasons = sorted({chosen.skipped[i.name] for i in impls})
        raise CannotRun(f"{what}: {'; '.join(reasons)}")
    return chosen


def finish(record: dict, path: Path, ui: Console, as_json: bool) -> None:
    """Table, where the record went, the summary line; the record on stdout with --json."""
    from ..bench import results

    ui.print(bench_table(record))
    for r in record["results"]:
        if "median_ms" in r and (note := tf32_on_cpu_note(r["name"], r["precision"], record.get("platform", ""))):
            ui.print(f"[yellow]{escape(note)}[/yellow]")
    clocks = record.get("clocks_during_timing") or {}
    if clocks.get("samples"):
        c, p = clocks["sm_clock_mhz"], clocks["power_w"]
        ui.print(f"during timing: SM clock {c['median']:.0f} MHz (min {c['min']:.0f}), "
                 f"power {p['median']:.0f} W (max {p['max']:.0f}), {clocks['samples']} samples")
    for name, why in record["skipped"].items():
        ui.print(f"[yellow]{name}: not run: {escape(why)}[/yellow]")
    ui.print(f"results: {path}")
    if record.get("platform") == "cpu":
        ui.print(f"[yellow]{results.CPU_NOTE}[/yellow]")
    tally = record_tally(record)
    ui.print(escape(tally.line()))
    if as_json:
        machine.emit(results.validate(record))
    raise typer.Exit(int(tally.exit_code()))


NO_GPU_BENCH = ("No CUDA GPU here: CPU figures, indicative only. Timing what runs on the CPU "
                "(torch, Triton through its interpreter) at a small shape; the baseline is CPU torch.")


@app.command(cls=usage.ShapeCommand)
@guarded
def bench(
    names: Names = None,
    shape: Annotated[str | None, typer.Option("--shape", metavar=usage.SHAPE_METAVAR,
        help=f"the shape, {usage.SHAPE_HELP} (default: {usage.shape_label(PERF_SHAPE)} on a GPU, 256x256x256 on a CPU)")] = None,
    warmup: Annotated[int, typer.Option(min=0, help="untimed calls of each implementation first")] = 5,
    iters: Annotated[int, typer.Option(min=1, help="timed calls of each implementation")] = 10,
    flush_l2: Annotated[bool, typer.Option("--flush-l2", help="overwrite 256 MiB before each timed call")] = False,
    seed: Seed = None,
    out: Annotated[Path, typer.Option(help="results folder (a DEVICE/DATE.json goes under it)")] = Path("results"),
    latest: Annotated[Path | None, typer.Option(help="also write the record here")] = None,
    csv: Annotated[Path | None, typer.Option(help="also write a CSV table here")] = None,
    energy: Annotated[bool, typer.Option("--energy/--no-energy",
        help="also read joules per call from NVML, two half-second blocks per implementation (GPU)")] = True,
    as_json: AsJson = False,
) -> None:
    """Time implementations side by side with the baseline (cuBLAS on a GPU); write JSON; exit 1 if any result is wrong."""
    from ..bench import results
    from ..bench.run import measure

    size = usage.shape(shape)
    impls = usage.names(names)
    usage.out_folder(out)
    for given, option, suffix in ((latest, "--latest", ".json"), (csv, "--csv", ".csv")):
        if given:
            usage.out_file(given, option, suffix)
    chosen = runnable_or_stop(impls, "none of these implementations runs here")
    ui = messages_console(as_json)
    if not runtime.has_gpu():
        ui.print(f"[yellow]{NO_GPU_BENCH}[/yellow]")
    common.record_notice([i.name for i in impls] if names else None, ui)
    bar, update = common.progress_bar(ui)
    with bar:
        record = measure(chosen, size, warmup, iters, flush_l2, seed, progress=update,
                         energy=None if energy else ())
    path = results.save(record, out)
    if latest:
        jsonfile.write(latest, path.read_text())
    if csv:
        results.write_csv(record, csv)
    finish(record, path, ui, as_json)


@app.command()
@guarded
def study(
    name: Annotated[str, typer.Argument(help="the study: buffering", metavar="NAME")] = "buffering",
    out: Annotated[Path, typer.Option(help="results folder (studies/DEVICE/DATE.json goes under it)")] = Path("results"),
    as_json: AsJson = False,
) -> None:
    """The notes' controlled comparison: single/double buffer × 64²/128² at BK=16 (GPU)."""
    from ..bench import results, studies

    if name != "buffering":
        raise UsageError(f"unknown study {name!r}; known: buffering")
    usage.out_folder(out)
    runnable_or_stop(list(studies.BUFFERING.values()), "the buffering study compares four CUDA kernels")
    ui = messages_console(as_json)
    bar, update = common.progress_bar(ui)
    with bar:
        record = studies.buffering(progress=update)
    path = results.save(record, out / "studies")
    finish(record, path, ui, as_json)


def sweep_table(record: dict) -> tuple:
    table, tally = common.table("TFLOP/s against shape", ["shape", *record["names"]]), Tally()
    for p in record["points"]:
        cells = []
        for n in record["names"]:
            r = next(r for r in p["results"] if r["name"] == n)
            tally.add(bool(r["passed"]))
            cells.append(f"{r['tflops']:.1f}" + ("" if r["passed"] else " FAIL") if "tflops" in r else "err")
        table.add_row(f"{p['label']} {'×'.join(map(str, p['shape']))}", *cells)
    return table, tally


@app.command(cls=usage.ShapeCommand)
@guarded
def sweep(
    names: Names = None,
    shape: Annotated[list[str] | None, typer.Option("--shape", metavar=usage.SHAPE_METAVAR,
        help=f"time at this shape instead of the sweep's own (repeatable), {usage.SHAPE_HELP}")] = None,
    out: Annotated[Path, typer.Option(help="results folder (DEVICE/sweep-DATE.json goes under it)")] = Path("results"),
    iters: Annotated[int, typer.Option(min=1, help=f"timed calls per implementation and shape ({SMALL_RULE})")] = 10,
    random: Annotated[int | None, typer.Option(
        "--random", min=1, metavar="N",
        help="time N shapes drawn at random (bench/randomshapes.py: log-uniform in [1, 8192]³, with "
             "long-reduction, small and large shares) instead of the fixed ones; summary per implementation")] = None,
    seed: Annotated[int | None, typer.Option(min=0, max=common.SEED_MAX,
        help="the random shapes' seed (with --random; default 1)")] = None,
    energy: Annotated[bool, typer.Option("--energy/--no-energy",
        help="also read joules per call from NVML, a half-second block per implementation and shape; "
             "with --random and no names, only default's and the baselines'")] = True,
    as_json: AsJson = False,
) -> None:
    """TFLOP/s against size (squares 256…8192, odd variants of the performance shape; GPU), or
    against N random shapes (--random N --seed S), with each implementation's geometric mean,
    minimum and 10th percentile of its ratio to cuBLAS."""
    from ..bench import results, studies, summary

    points = [(usage.shape_label(s), s) for s in usage.shapes(shape)] or None
    if random and points:
        raise UsageError("--random draws its own shapes; give --shape or --random, not both")
    if seed is not None and not random:
        raise UsageError("--seed chooses the shapes --random draws; without --random the sweep's shapes are fixed")
    default_names = studies.RANDOM_DEFAULT if random else studies.SWEEP_DEFAULT
    chosen = [i.name for i in usage.names(names)] if names else default_names
    usage.out_folder(out)
    if not runtime.has_gpu():
        raise CannotRun("no CUDA GPU: the sweep times shapes up to 8192³ and needs one")
    ui = messages_console(as_json)
    common.record_notice(chosen, ui)
    bar, update = common.progress_bar(ui)
    with bar:
        if random:
            which = (None if names else studies.OVERHEAD_NAMES) if energy else ()
            record = studies.random_sweep(chosen, random, 1 if seed is None else seed, iters=iters, progress=update, energy=which)
        else:
            record = studies.sweep(chosen, iters=iters, shapes=points, progress=update,
                                   energy=None if energy else ())
    path = results.save_sweep(record, out)
    table, tally = sweep_table(record)
    ui.print(table)
    if random:
        from rich.markdown import Markdown  # markdown-it: imported where a summary is shown

        ui.print(Markdown("\n".join(summary.lines(record["summary"]))))
    ui.print(f"results: {path}")
    ui.print(escape(tally.line()))
    if as_json:
        machine.emit(record)
    raise typer.Exit(int(tally.exit_code()))


@app.command()
@guarded
def report(
    record_path: Annotated[Path | None, typer.Argument(
        help=f"a results JSON (bench, study or sweep); default: the committed {LATEST}",
        metavar="RECORD", show_default=False)] = None,
    out: Annotated[Path | None, typer.Option(
        help="folder for the Markdown and PNGs (default: RECORD's name + '-report', beside it)")] = None,
    docs: Annotated[bool, typer.Option("--docs", help="write them into docs/, which README shows")] = False,
    readme: Annotated[Path | None, typer.Option(
        help="also rewrite this file's block for the record (e.g. README.md)")] = None,
) -> None:
    """Markdown table and plots from a results JSON; docs/ and README only when asked."""
    from ..bench import report as rep

    if record_path is None:
        record_path = committed.find(LATEST)
        if record_path is None:
            raise UsageError(f"no committed {LATEST} here (looked in {committed.root()}): give a RECORD")
    record, kind = results_record(record_path)
    if docs and out:
        raise UsageError("--docs and --out exclude each other: --docs means --out docs")
    # beside the record, but never inside an installed package: for the copy it carries, in results/ here
    folder = Path("results") if committed.is_shipped(record_path) else record_path.parent
    beside = folder / f"{record_path.stem}-report"
    target = usage.out_folder(Path("docs") if docs else out or beside)
    if kind == "sweep" and readme and not record.get("random"):
        raise UsageError("a fixed-shape sweep has no README block; its plot is the report")
    tag = rep.block_tag(record)
    text = usage.block_file(readme, tag) if readme else None
    with console.status(f"writing the report and its plots into {target}…"):
        block, written = (rep.write_sweep(record, target, record_path.stem) if kind == "sweep"
                          else rep.write_report(record, target, tag))
        if readme and text is not None:
            readme.write_text(rep.replace_block(text, block, tag=tag))
            written.append(readme)
    console.print("wrote " + ", ".join(map(str, written)))
