"""The `gemmlab` command line: list, explain, check, inspect, bench, report, study, sweep, judge, new, export, tune.

Every command exits 0 (passed), 1 (failed), 2 (usage error, found before
anything runs or is written) or 3 (could not run here), with a one-line reason
for 2 and 3 (`gemmlab.exits`). With `--json`, stdout holds only the JSON
document and every message goes to stderr.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.table import Table

from . import __version__, registry, runtime
from .bench.results import LATEST
from .bench.stats import SMALL_ITERS, SMALL_WORK
from .blame import blame
from .cuda.rung import ARCH_SPECIFIC_CC, builds_for, needs
from .exits import Exit
from .judge.cases import Case, fresh_seed, standard_cases
from .judge.runner import Judgement, judge
from .tune import default as tuned_default
from .tune.classes import CLASSES
from .tune.search import MIN_ITERS
from .tune.spaces import SPACES
from .ui import helpfmt, machine, usage
from .ui.errors import CannotRun, UsageError, guarded, one_line_parse_errors
from .ui.tally import Tally

helpfmt.install()
one_line_parse_errors()


def progress_bar(con: Console | None = None):
    """A rich progress bar and the `progress(message, done, total)` callback that drives it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=con or console, transient=True)
    task = bar.add_task("starting", total=None)

    def update(message: str, done: int, total: int) -> None:
        bar.update(task, description=message, completed=done, total=total)

    return bar, update


#: The timing rule for small shapes, in words (bench.stats.timed_calls decides it).
_SMALL_RULE = f"at least {SMALL_ITERS} below {round(SMALL_WORK ** (1 / 3))}³"

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_show_locals=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="LeetGPU's FP32 matrix multiplication: the ladder, the judge, the benchmark.")


def _width(stream) -> int | None:
    """A terminal's own width (or $COLUMNS); 200 columns for logs, so tables do not fold."""
    return None if stream.isatty() or os.environ.get("COLUMNS") else 200


console = Console(width=_width(sys.stdout))
#: Where a `--json` command's tables and messages go, so that stdout holds only JSON.
side = Console(stderr=True, width=_width(sys.stderr))

Names = Annotated[list[str] | None, typer.Argument(help="implementation names (default: all)",
                                                   metavar="NAME", show_default=False)]
AsJson = Annotated[bool, typer.Option("--json", help="print the result as JSON on stdout; "
                                                     "messages go to stderr")]
Seed = Annotated[int | None, typer.Option(help="seed of the inputs (default: fresh, and reported)")]
CPU_NOTE = ("CPU timings are indicative only: identical CPU runs have differed fiftyfold; "
            "compare implementations on a GPU.")


def _ui(as_json: bool) -> Console:
    return side if as_json else console


def _show_version(value: bool) -> None:
    if value:
        print(f"gemmlab {__version__}")
        raise typer.Exit(int(Exit.PASSED))


@app.callback()
def _options(
    version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                          help="print the version and exit")] = False,
) -> None:
    """LeetGPU's FP32 matrix multiplication: the ladder, the judge, the benchmark."""
    runtime.configure()  # before any command touches CUDA or Triton


@app.command("list")
@guarded
def list_(as_json: AsJson = False) -> None:
    """The registry: every rung, its family, precision class and idea."""
    if as_json:
        machine.emit([machine.implementation(i) for i in registry.by_rung()])
        return
    table = Table(title="gemmlab implementations",
                  caption="gemmlab explain NAME|RUNG: sources and launches; --json: every field")
    table.add_column("rung", justify="right")
    table.add_column("name", no_wrap=True)
    table.add_column("family")
    table.add_column("precision")
    table.add_column("idea", ratio=1, overflow="fold")
    for impl in registry.by_rung():
        aliases = registry.aliases_of(impl.name)
        name = impl.name + "".join(f" [bold]= {a}[/bold]" for a in aliases)
        if impl.name == tuned_default.NAME:
            name += f" [bold]= {escape(tuned_default.mark())}[/bold]"
        table.add_row(str(impl.rung), name, impl.family, impl.precision, impl.summary)
    console.print(table)


def facts_table(impl: registry.Implementation) -> Table:
    facts = Table(show_header=False, title=f"{impl.name}: facts")
    facts.add_column(overflow="fold")  # kernel labels carry the knobs that tell launches apart: never cut
    facts.add_column(overflow="fold")
    facts.add_row("family / rung / precision", f"{impl.family} / {impl.rung} / {impl.precision}")
    facts.add_row("compute capability", "{}.{}".format(*impl.min_cc) + (" only" if impl.min_cc == ARCH_SPECIFIC_CC
                                                                      else " or later"))
    facts.add_row("sources", ", ".join(impl.sources))
    if impl.tile:
        r, c, s = impl.tile
        facts.add_row("tile of C, reduction step", f"{r}×{c}, {s}")
        facts.add_row("FLOP per global byte per tile", f"{impl.intensity:.1f}")
    if impl.name == tuned_default.NAME:
        facts.add_row("tune record", tuned_default.plan()[1])
        facts.add_row("builds", tuned_default.build_check())
    for launch in impl.launches:
        facts.add_row(f"kernel {impl.launch_label(launch)}",
                      f"block {launch.block}, tile {launch.tile}; "
                      + (f"when {launch.requires}" if launch.when else "always (fallback)"))
    return facts


@app.command()
@guarded
def explain(
    name: Annotated[str, typer.Argument(help="an implementation name, or a rung number for all "
                                              "the implementations on that rung",
                                         metavar="NAME|RUNG")],
    as_json: AsJson = False,
) -> None:
    """The idea behind an implementation, its data path, intensity and preconditions."""
    impls = usage.rung_or_name(name)
    if as_json:
        machine.emit([machine.explanation(i) for i in impls])
        return
    shown: set[str] = set()
    for impl in impls:
        if impl.doc not in shown:  # the implementations of one rung may share their notes
            console.print(Markdown(impl.explanation()))
            shown.add(impl.doc)
        console.print(facts_table(impl))


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return "inf" if math.isinf(x) else f"{x:.2e}"


_STATUS = {"pass": "[green]pass[/green]", "fail": "[red]FAIL[/red]", "error": "[red]ERROR[/red]",
           "skip": "[yellow]skip[/yellow]"}


CASE_COLUMNS = ("case", "M×N×K", "seed", "result", "max abs", "norm max", "rel fro",
                "LeetGPU 1e-4 fails", "unwritten", "ms", "note")


def cases_table(title: str, rows: list[dict]) -> Table:
    """One row per judged case (the dicts of `CaseResult.to_dict`), for check and judge alike."""
    # "ms" is one call's wall time, so a launch's first call carries its compile and planning:
    # say so where the figure is shown (timings are `gemmlab bench`'s job).
    table = Table(title=title, caption="ms: the one judged call, wall time; a kernel's first call "
                                       "includes its compile and set-up (gemmlab bench times)")
    for col in CASE_COLUMNS:
        table.add_column(col, overflow="fold")
    for r in rows:
        f = r.get("figures") or {}
        if r["status"] != "pass":
            note = r["reason"]
        elif f.get("leetgpu_violations"):
            note = (f"fails LeetGPU's 1e-4 check on {f['leetgpu_violations']} of {f['numel']}; "
                    f"{f.get('exact_violations', '-')} against the float64 product")
        else:
            note = ""
        table.add_row(
            r["case"], "×".join(map(str, r["shape"])), str(r["seed"]), _STATUS[r["status"]],
            _fmt(f.get("max_abs")), _fmt(f.get("norm_max")), _fmt(f.get("rel_fro")),
            str(f.get("leetgpu_violations", "-")), str(f.get("unwritten", "-")),
            f"{r['seconds'] * 1e3:.2f}" if r.get("seconds") is not None else "-", escape(note),
        )
    return table


def judgement_table(j: Judgement, where: str = "") -> Table:
    return cases_table(f"{j.name} ({j.precision}) on {where or j.device}",
                       [r.to_dict() for r in j.results])


#: The case groups `--group` accepts, in the order the cases run.
CASE_GROUPS = list(dict.fromkeys(c.group for c in standard_cases(0)))


def select_cases(seed: int, groups: list[str] | None, shape: list[int] | None, perf: bool) -> list[Case]:
    if shape:
        m, n, k = shape
        return [Case(f"custom-{m}x{n}x{k}", "custom", (m, n, k), gpu_only=False)]
    cases = standard_cases(seed, perf=perf)
    if groups:
        cases = [c for c in cases if c.group in groups]
    return cases


def where_it_runs(impl: registry.Implementation, device) -> str:
    """The device, and on a CPU how a Triton rung got there (its interpreter)."""
    if device.type == "cpu" and impl.family is registry.Family.TRITON:
        return "cpu, through the Triton interpreter"
    return str(device)


def _judge_with_progress(impl: registry.Implementation, cases: list[Case], device, seed: int,
                         ui: Console) -> Judgement:
    bar, update = progress_bar(ui)
    done = 0

    def on_result(r) -> None:
        nonlocal done
        done += 1
        update(f"judging {impl.name}: {r.case} done", done, len(cases))

    with bar:
        update(f"judging {impl.name}", 0, len(cases))
        return judge(impl.name, impl.solve, impl.precision, cases, device, seed, on_result=on_result)


def _outcome(j: Judgement) -> tuple[str, str]:
    """(passed | failed | not run, why) for one implementation's judgement."""
    if j.failed:
        return "failed", f"{len(j.failed)} of {len(j.results)} cases failed"
    if any(r.passed for r in j.results):
        return "passed", ""
    reasons = sorted({r.reason for r in j.results if r.status == "skip"})
    return "not run", "; ".join(reasons) or "no case ran"


@app.command()
@guarded
def check(
    names: Names = None,
    seed: Seed = None,
    group: Annotated[list[str] | None, typer.Option("--group",
        metavar="GROUP", help="only this case group (repeatable): " + ", ".join(CASE_GROUPS))] = None,
    shape: Annotated[tuple[int, int, int] | None, typer.Option("--shape",
        metavar="M N K", help="one custom shape instead of the case groups")] = None,
    perf: Annotated[bool, typer.Option(help="include the 8192×6144×4096 case (GPU)")] = True,
    sanitize: Annotated[bool, typer.Option(
        help="run compute-sanitizer (memcheck, racecheck, synccheck) over the CUDA kernels instead")] = False,
    as_json: AsJson = False,
) -> None:
    """Judge implementations on every case; exit 1 if any case fails, 3 if none could run."""
    impls = usage.names(names)
    shape = usage.shape(shape)
    groups = usage.groups(group, CASE_GROUPS)
    if shape and groups:
        raise UsageError("--shape and --group exclude each other: a custom shape is one case")
    if sanitize:
        if as_json:
            raise UsageError("--sanitize has no --json output")
        _sanitize_impls(impls)
        return
    ui = _ui(as_json)
    device = runtime.default_device()
    seed = fresh_seed() if seed is None else seed
    cases = select_cases(seed, groups, list(shape) if shape else None, perf)
    ui.print(f"device: {runtime.gpu_name()} · base seed {seed} · {len(cases)} case{'s' if len(cases) != 1 else ''}")
    tally, report = Tally(), []
    for impl in impls:
        ok, why = impl.can_run_on(device)
        entry = {"name": impl.name, "precision": str(impl.precision), "cases": []}
        if ok:
            j = _judge_with_progress(impl, cases, device, seed, ui)
            ui.print(judgement_table(j, where_it_runs(impl, device)))
            status, why = _outcome(j)
            entry["cases"] = [r.to_dict() for r in j.results]
        else:
            ui.print(f"[yellow]{impl.name}: not run: {escape(why)}[/yellow]")
            status = "not run"
        tally.skip(why) if status == "not run" else tally.add(status == "passed")
        report.append(entry | {"status": status, "reason": why})
    ui.print(escape(tally.line()))
    if as_json:
        machine.emit({"device": runtime.gpu_name(), "seed": seed, "implementations": report,
                      "summary": tally.to_dict()})
    raise typer.Exit(int(tally.exit_code()))


def bench_table(record: dict) -> Table:
    from .bench.results import baseline_label, kernel_label

    m, n, k = record["shape"]
    base = baseline_label(record)
    # The TF32 yardstick's column only where it ran: tf32 rows get their ratio to it.
    tf32 = any(r.get("ratio_vs_cublas_tf32") for r in record["results"])
    table = Table(title=f"{record['device']['name']} · {m}×{n}×{k} · {record['timing']} · "
                        f"{record['iters']} iterations after {record['warmup']} warm-ups")
    cols = ["rung", "name", "precision", "kernel", "median ms", "min ms", "max ms", "TFLOP/s",
            f"vs {base}"] + (["vs cuBLAS TF32"] if tf32 else []) + ["of peak", "result"]
    for col in cols:
        table.add_column(col, overflow="fold")
    for r in sorted(record["results"], key=lambda r: (r["rung"], r["name"])):
        head = [str(r["rung"]), r["name"], r["precision"], kernel_label(record, r)]
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
            "[green]pass[/green]" if r["passed"] else f"[red]FAIL {escape(r['reason'])}[/red]",
        )
    return table


def record_tally(record: dict) -> Tally:
    """Passed and failed rows of a bench or study record, and what it skipped."""
    tally = Tally()
    for r in record["results"]:
        tally.add(bool(r["passed"]))
    for why in record.get("skipped", {}).values():
        tally.skip(why)
    return tally


def runnable_or_stop(impls: list[registry.Implementation], what: str) -> None:
    """Raise CannotRun, before anything runs or is written, when none of `impls` can run here."""
    device = runtime.default_device()
    verdicts = [impl.can_run_on(device) for impl in impls]
    if not any(ok for ok, _ in verdicts):
        reasons = sorted({why for _, why in verdicts})
        raise CannotRun(f"{what}: {'; '.join(reasons)}")


def finish(record: dict, path: Path, ui: Console, as_json: bool) -> None:
    """Table, where the record went, the summary line; the record on stdout with --json."""
    from .bench import results

    ui.print(bench_table(record))
    clocks = record.get("clocks_during_timing") or {}
    if clocks.get("samples"):
        c, p = clocks["sm_clock_mhz"], clocks["power_w"]
        ui.print(f"during timing: SM clock {c['median']:.0f} MHz (min {c['min']:.0f}), "
                 f"power {p['median']:.0f} W (max {p['max']:.0f}), {clocks['samples']} samples")
    for name, why in record["skipped"].items():
        ui.print(f"[yellow]{name}: not run: {escape(why)}[/yellow]")
    ui.print(f"results: {path}")
    if record.get("platform") == "cpu":
        ui.print(f"[yellow]{CPU_NOTE}[/yellow]")
    tally = record_tally(record)
    ui.print(escape(tally.line()))
    if as_json:
        machine.emit(results.validate(record))
    raise typer.Exit(int(tally.exit_code()))


NO_GPU_BENCH = ("No CUDA GPU here: CPU figures, indicative only. Timing what runs on the CPU "
                "(torch, Triton through its interpreter) at a small shape; the baseline is CPU torch.")


@app.command()
@guarded
def bench(
    names: Names = None,
    shape: Annotated[tuple[int, int, int] | None, typer.Option("--shape",
        metavar="M N K", help="the shape (default: 8192 6144 4096 on a GPU, 256 256 256 on a CPU)")] = None,
    warmup: Annotated[int, typer.Option(min=0, help="untimed calls of each implementation first")] = 5,
    iters: Annotated[int, typer.Option(min=1, help="timed calls of each implementation")] = 10,
    flush_l2: Annotated[bool, typer.Option("--flush-l2", help="overwrite 256 MiB before each timed call")] = False,
    seed: Seed = None,
    out: Annotated[Path, typer.Option(help="results folder (a DEVICE/DATE.json goes under it)")] = Path("results"),
    latest: Annotated[Path | None, typer.Option(help="also write the record here")] = None,
    csv: Annotated[Path | None, typer.Option(help="also write a CSV table here")] = None,
    as_json: AsJson = False,
) -> None:
    """Time implementations side by side with the baseline (cuBLAS on a GPU); write JSON; exit 1 if any result is wrong."""
    from .bench import results
    from .bench.run import run

    impls = usage.names(names)
    shape = usage.shape(shape)
    usage.out_folder(out)
    for given, option in ((latest, "--latest"), (csv, "--csv")):
        if given:
            usage.out_file(given, option)
    runnable_or_stop(impls, "none of these implementations runs here")
    ui = _ui(as_json)
    if not runtime.has_gpu():
        ui.print(f"[yellow]{NO_GPU_BENCH}[/yellow]")
    bar, update = progress_bar(ui)
    with bar:
        record = run([i.name for i in impls] if names else None, shape, warmup, iters, flush_l2,
                     seed, progress=update)
    path = results.save(record, out)
    if latest:
        latest.parent.mkdir(parents=True, exist_ok=True)
        latest.write_text(path.read_text())
    if csv:
        results.write_csv(record, csv)
    finish(record, path, ui, as_json)


def nvrtc_archs() -> list[int] | None:
    """The sm_XY numbers this NVRTC can target, or None where NVRTC cannot be asked."""
    try:
        from cuda.bindings import nvrtc

        err, archs = nvrtc.nvrtcGetSupportedArchs()
        return [int(a) for a in archs] if int(err) == 0 else None
    except Exception:  # no cuda-bindings, or no NVRTC library: inspect says so when it compiles
        return None


def _inspect_rows(impls: list[registry.Implementation], arch: str | None, ui: Console) -> list[dict]:
    from .bench.inspect import inspect_launches
    from .cuda.tools import ToolMissing

    rows: list[dict] = []
    bar, update = progress_bar(ui)
    with bar:
        for i, impl in enumerate(impls):
            update(f"compiling and disassembling {impl.name}", i, len(impls))
            try:
                rows += inspect_launches([impl], arch)
            except ToolMissing as exc:
                raise CannotRun(str(exc)) from None
            except ImportError as exc:
                raise CannotRun(f"cannot compile CUDA here: {exc} (install gemmlab's "
                                "dependencies: cuda-core, nvidia-cuda-nvrtc)") from None
    return rows


@app.command()
@guarded
def inspect(
    names: Names = None,
    arch: Annotated[str | None, typer.Option("--arch",
        metavar="sm_XY", help="target, e.g. sm_90a (default: the GPU's, or sm_90a without one)")] = None,
    as_json: AsJson = False,
) -> None:
    """Registers, shared memory, stack, spills, SASS instruction mix and (on a GPU) occupancy."""
    from .bench.inspect import TABLES, default_arch

    impls = [i for i in usage.names(names) if i.launches]
    arch = usage.arch(arch, nvrtc_archs())
    if not impls:
        raise UsageError(f"{', '.join(names or [])} has no CUDA kernel to inspect; "
                         "CUDA rungs: gemmlab list")
    target = arch or default_arch()
    left_out = [i for i in impls if not builds_for(i.min_cc, target)]
    why = ", ".join(f"{i.name} (needs {needs(i.min_cc)})" for i in left_out)
    if len(left_out) == len(impls):
        raise UsageError(f"{target} cannot build {why}")
    ui = _ui(as_json)
    if left_out:
        side.print(f"not built for {target}: {why}", highlight=False)
    rows = _inspect_rows([i for i in impls if i not in left_out], target, ui)
    if as_json:
        machine.emit([machine.inspect_row(r) for r in rows])
        return
    for title, cols in TABLES.items():
        table = Table(title=f"{title} ({rows[0]['arch']})")
        for col in cols:
            table.add_column(col, overflow="fold")
        for r in rows:
            table.add_row(*[_inspect_cell(r.get(c)) for c in cols])
        console.print(table)


def _inspect_cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict):  # setmaxnreg: what the producers keep (↓) and consumers claim (↑)
        return f"↓{value['producer']} ↑{value['consumer']}"
    if isinstance(value, list):  # a cluster shape
        return "×".join(map(str, value))
    return str(value)


def _report_target(record_path: Path, out: Path | None, docs: bool) -> Path:
    """Where report writes: --out, docs/ on --docs, else a folder beside the record."""
    if docs and out:
        raise UsageError("--docs and --out exclude each other: --docs means --out docs")
    if docs:
        return Path("docs")
    return out or record_path.parent / f"{record_path.stem}-report"


@app.command()
@guarded
def report(
    record_path: Annotated[Path, typer.Argument(help="a results JSON (bench, study or sweep)",
                                                metavar="RECORD")] = LATEST,
    out: Annotated[Path | None, typer.Option(
        help="folder for the Markdown and PNGs (default: RECORD's name + '-report', beside it)")] = None,
    docs: Annotated[bool, typer.Option("--docs", help="write them into docs/, which README shows")] = False,
    readme: Annotated[Path | None, typer.Option(
        help="also rewrite this file's block for the record (e.g. README.md)")] = None,
) -> None:
    """Markdown table and plots from a results JSON; docs/ and README only when asked."""
    from .bench import report as rep
    from .bench import results

    record = usage.json_file(record_path)
    try:
        kind = results.kind(record)
    except results.SchemaError as exc:
        raise UsageError(f"{record_path} is not a results record: {exc}") from None
    target = usage.out_folder(_report_target(record_path, out, docs))
    if kind == "sweep":
        if readme:
            raise UsageError("a sweep has no README block; its plot is the report")
        with console.status("plotting the sweep…"):
            path = rep.plot_sweep(record, target, stem=record_path.stem)
        console.print(f"wrote {path}")
        return
    tag = rep.block_tag(record)
    text = usage.block_file(readme, tag) if readme else None
    with console.status(f"writing {tag}.md and its plots into {target}…"):
        table, paths = rep.write_report(record, target, tag)
    if readme and text is not None:
        readme.write_text(rep.replace_block(text, table, tag=tag))
        paths.append(readme)
    console.print("wrote " + ", ".join(map(str, paths)))


@app.command()
@guarded
def study(
    name: Annotated[str, typer.Argument(help="the study: buffering", metavar="NAME")] = "buffering",
    out: Annotated[Path, typer.Option(help="results folder (studies/DEVICE/DATE.json goes under it)")] = Path("results"),
    as_json: AsJson = False,
) -> None:
    """The notes' controlled comparison: single/double buffer × 64²/128² at BK=16 (GPU)."""
    from .bench import results, studies

    if name != "buffering":
        raise UsageError(f"unknown study {name!r}; known: buffering")
    usage.out_folder(out)
    runnable_or_stop(list(studies.BUFFERING.values()), "the buffering study compares four CUDA kernels")
    ui = _ui(as_json)
    bar, update = progress_bar(ui)
    with bar:
        record = studies.buffering(progress=update)
    path = results.save(record, out / "studies")
    finish(record, path, ui, as_json)


def sweep_table(record: dict) -> tuple[Table, Tally]:
    table, tally = Table(title="TFLOP/s against shape"), Tally()
    table.add_column("shape")
    for n in record["names"]:
        table.add_column(n)
    for p in record["points"]:
        cells = []
        for n in record["names"]:
            r = next(r for r in p["results"] if r["name"] == n)
            tally.add(bool(r["passed"]))
            cells.append(f"{r['tflops']:.1f}" + ("" if r["passed"] else " FAIL") if "tflops" in r else "err")
        table.add_row(f"{p['label']} {'×'.join(map(str, p['shape']))}", *cells)
    return table, tally


@app.command()
@guarded
def sweep(
    names: Names = None,
    out: Annotated[Path, typer.Option(help="results folder (DEVICE/sweep-DATE.json goes under it)")] = Path("results"),
    iters: Annotated[int, typer.Option(min=1, help=f"timed calls per implementation and shape ({_SMALL_RULE})")] = 10,
    as_json: AsJson = False,
) -> None:
    """TFLOP/s against size (squares 256…8192, odd variants of the performance shape; GPU)."""
    from .bench import results, studies

    chosen = [i.name for i in usage.names(names)] if names else studies.SWEEP_DEFAULT
    usage.out_folder(out)
    if not runtime.has_gpu():
        raise CannotRun("no CUDA GPU: the sweep times shapes up to 8192³ and needs one")
    ui = _ui(as_json)
    bar, update = progress_bar(ui)
    with bar:
        record = studies.sweep(chosen, iters=iters, progress=update)
    path = results.save_sweep(record, out)
    table, tally = sweep_table(record)
    ui.print(table)
    ui.print(f"results: {path}")
    ui.print(escape(tally.line()))
    if as_json:
        machine.emit(record)
    raise typer.Exit(int(tally.exit_code()))


TEMPLATES = {"cuda": "solution.cu", "torch": "solution_torch.py", "triton": "solution_triton.py",
             "jax": "solution_jax.py"}


@app.command()
@guarded
def new(
    framework: Annotated[str, typer.Option("--framework", metavar="FRAMEWORK", help="cuda, torch, triton or jax")] = "cuda",
    path: Annotated[Path | None, typer.Argument(help="where to write it (default: the template's name)",
                                                metavar="PATH")] = None,
    force: Annotated[bool, typer.Option(help="overwrite an existing file")] = False,
) -> None:
    """Write a starter solution in LeetGPU's format (it judges, and fails, as it is)."""
    from importlib.resources import files

    if framework not in TEMPLATES:
        raise UsageError(f"unknown framework {framework!r}; known: {', '.join(TEMPLATES)}")
    name = TEMPLATES[framework]
    path = path or Path(name)
    usage.new_file(path, force)
    path.write_text((files("gemmlab") / "templates" / name).read_text())
    console.print(f"wrote {path}; judge it with: gemmlab judge {path}")


@app.command("tune")
@guarded
def tune_cmd(
    names: Annotated[list[str], typer.Argument(help="rungs to search, each with a search space: "
                                                    f"{', '.join(SPACES)} (gemmlab.tune.spaces)",
                                               metavar="NAME", show_default=False)],
    shape: Annotated[list[str] | None, typer.Option("--shape", metavar="MxNxK",
        help="tune at this shape, for its shape class (repeatable, one per class; default: one "
             f"representative shape for each of the {len(CLASSES)} classes)")] = None,
    warmup: Annotated[int, typer.Option(min=0, help="untimed calls of each candidate first")] = 5,
    iters: Annotated[int, typer.Option(min=MIN_ITERS, help=f"timed calls per candidate ({_SMALL_RULE})")] = MIN_ITERS,
    seed: Seed = None,
    out: Annotated[Path, typer.Option(help="results folder (tune/GPU/DATE.json goes under it)")] = Path("results"),
    output: Annotated[Path | None, typer.Option("-o", "--output", metavar="FILE",
        help="write the record here instead of under --out")] = None,
    force: Annotated[bool, typer.Option(help="overwrite an existing -o file")] = False,
    install: Annotated[bool, typer.Option("--install", help="also install the record as the one "
        "`default` dispatches by on this GPU (src/gemmlab/tuned/GPU.json, a tracked file)")] = False,
    as_json: AsJson = False,
) -> None:
    """Search rungs' compile-time configurations per shape class on this GPU; write the record.

    Every candidate is compiled (spills and compile errors rejected without GPU time), verified
    against the float64 product with C poisoned, then timed interleaved with cuBLAS FP32.
    Exit 0: every class has a winner; 1: some class has no verified candidate (the record is
    written, not installed); 2: usage error; 3: no GPU.
    """
    from .export.document import gemmlab_commit
    from .tune import command, record, search

    rungs = command.rungs(names)
    given = command.shapes(shape)
    command.output(output, force)
    usage.out_folder(out)
    if not runtime.has_gpu():
        raise CannotRun("no CUDA GPU: gemmlab tune verifies and times every candidate on one")
    import torch

    from .bench import device_info
    from .cuda.compiler import device_arch

    info = device_info.gpu()
    shapes = command.by_class(given, info["sm_count"])
    ui = _ui(as_json)
    seed = fresh_seed() if seed is None else seed
    total, done = search.steps_for(rungs, shapes, iters), 0

    bar, update = progress_bar(ui)

    def say(message: str) -> None:
        nonlocal done
        update(message, done, total)
        done += 1

    with bar, device_info.ClockSampler(torch.cuda.current_device()) as sampler:
        rec = search.tune(rungs, shapes, search.GpuMeasure(), device_arch(), info, device_info.versions(),
                          gemmlab_commit(), warmup, iters, seed, progress=say)
    rec["clocks_during_timing"] = sampler.summary()
    if output:
        output.write_text(record.dumps(record.validate(rec)))
        path = output
    else:
        path = record.save(rec, out)
    ui.print(command.table(rec))
    ui.print(f"record: {path}")
    missing = [key for key, entry in rec["classes"].items() if not entry["winner"]]
    if missing:
        ui.print(f"[red]no candidate verified for {', '.join(missing)}[/red]"
                 + ("; not installed" if install else ""))
    elif install:
        ui.print(f"installed: {record.install(rec)} (gemmlab default reads it on this GPU)")
    if as_json:
        machine.emit(rec)
    raise typer.Exit(int(Exit.FAILED if missing else Exit.PASSED))


@app.command("export")
@guarded
def export_cmd(
    name: Annotated[str, typer.Argument(help="a CUDA rung's name (see gemmlab list)", metavar="NAME")],
    output: Annotated[Path | None, typer.Option("-o", "--output", metavar="FILE",
                                                help="where to write it (default: NAME.cu here)")] = None,
    force: Annotated[bool, typer.Option(help="overwrite an existing file")] = False,
) -> None:
    """Write a CUDA rung as one self-contained LeetGPU .cu: its kernels and solve()'s dispatch."""
    from .export import ExportError, export_text

    impl = usage.names([name])[0]
    path = output or Path(f"{impl.name}.cu")
    usage.new_file(path, force)
    try:
        text = export_text(impl, path.name)
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    try:
        path.write_text(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    gate = f" --precision {impl.precision}" if impl.precision != "fp32" else ""
    console.print(escape(f"wrote {path} ({impl.name}, {len(impl.launches)} launches); "
                         f"judge it with: gemmlab judge {path}{gate}"))


@app.command("judge")
def judge_cmd(
    file: Annotated[Path, typer.Argument(help="a .cu or .py solution in LeetGPU's format")],
    framework: Annotated[str | None, typer.Option(
        help="cuda, torch, triton or jax (default: .cu is cuda; else what the module imports)")] = None,
    precision: Annotated[str, typer.Option(help="the gate to hold it to: fp32, fp32x3 or tf32")] = "fp32",
    seed: Seed = None,
    perf: Annotated[bool, typer.Option(help="include the 8192×6144×4096 case (GPU)")] = True,
    group: Annotated[list[str] | None, typer.Option(
        "--group", metavar="GROUP", help="only this case group (repeatable): " + ", ".join(CASE_GROUPS))] = None,
    timeout: Annotated[float | None, typer.Option(
        help="seconds any one call may take (default: derived from each call's work)")] = None,
    memory_limit: Annotated[float | None, typer.Option(
        "--memory-limit", help="GiB of host memory for the solution's processes "
                               "(default: the smaller of 16 GiB and half this machine's memory)")] = None,
    warmup: Annotated[int, typer.Option(min=0, help="timed calls made first and not counted")] = 5,
    iters: Annotated[int, typer.Option(min=1, help="timed calls counted (each one checked)")] = 10,
    sanitize: Annotated[str | None, typer.Option(
        help="run the cases under compute-sanitizer: memcheck, racecheck or synccheck")] = None,
    nvcc_flags: Annotated[str | None, typer.Option(
        "--nvcc-flags", metavar="FLAGS", help='build a .cu with these nvcc flags instead of the GPU\'s own '
        'target, as a grader would (e.g. "-arch=sm_80"; "" for nvcc\'s defaults)')] = None,
    profile: Annotated[bool, typer.Option(
        "--profile", help="also profile the performance case with Nsight Compute: your kernels beside cuBLAS's")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="show all of the solution's output")] = False,
) -> None:
    """Judge your own solution from outside its process: every case, then timed calls, each one checked.

    Exit 0 accepted, 1 rejected, 2 usage error, 3 could not judge here.
    """
    from rich.markup import escape

    from .judge import report
    from .judge import sanitize as san
    from .judge.isolate import UsageError, judge_file
    from .judge.profile import CannotProfile, columns, profile_file
    from .ui.errors import stop as one_line

    def stop(code: int, message: str) -> None:
        """The one line on stderr every command gives for a usage error (2) or not run here (3)."""
        raise one_line(Exit(code), message)

    if profile and sanitize:
        stop(2, "--profile and --sanitize exclude each other: a profile under the sanitizer measures it")
    extra: dict = {}
    if sanitize:
        if sanitize not in san.TOOLS:
            stop(2, f"unknown tool {sanitize!r}; known: {', '.join(san.TOOLS)}")
        if not runtime.has_gpu():
            stop(3, "compute-sanitizer needs a CUDA GPU, and there is none here")
        try:
            extra = dict(wrapper=san.wrapper(sanitize), env=san.ENV, time_shape=(128, 128, 128))
        except FileNotFoundError as exc:
            stop(3, str(exc))
        perf, group = False, group or ["notes"]
    limit = None if memory_limit is None else int(memory_limit * (1 << 30))
    measured = None
    try:
        if profile:
            with console.status(f"profiling {file} and cuBLAS at the performance shape (Nsight Compute)…"):
                measured = profile_file(file, framework, precision, group, timeout, limit, nvcc_flags)
        with console.status(f"judging {file}…") as status:
            v = judge_file(file, framework, precision, seed, perf, group, timeout, iters=iters,
                           warmup=warmup, memory_limit=limit, nvcc_flags=nvcc_flags,
                           on_event=lambda e: status.update(escape(f"judging {file}: {e}")), **extra)
    except UsageError as exc:
        stop(2, str(exc))
    except CannotProfile as exc:
        stop(3, str(exc))
    if v.cannot_run:
        stop(3, f"cannot judge {file} here: {v.cannot_run}")
    if sanitize:
        f = san.parse(sanitize, v.log)
        console.print(f"{sanitize}: {'did not finish' if f.errors is None else f'{f.errors} errors'}"
                      + (f"\n{f.excerpt}" if f.errors else ""), markup=False)
        if f.errors != 0:
            v.passed = False
    report.show(console, v, str(file), precision, verbose, cases_table,
                profile=columns(measured) if measured else None)
    raise typer.Exit(int(v.exit_code))


def _sanitize_impls(impls: list[registry.Implementation]) -> None:
    from .judge import sanitize as san

    if not runtime.has_gpu():
        raise CannotRun("no CUDA GPU: compute-sanitizer needs one")
    try:
        san.executable()
    except FileNotFoundError as exc:
        raise CannotRun(str(exc)) from None
    names = [i.name for i in impls if i.family == registry.Family.CUDA]
    if not names:
        raise UsageError("--sanitize checks CUDA kernels, and none is named")
    table = Table(title=f"compute-sanitizer on the notes' shapes: {' '.join(names)}")
    for col in ("tool", "errors", "launches named: the rungs that use each", "excerpt"):
        table.add_column(col, overflow="fold")
    tally = Tally()
    for tool in san.TOOLS:
        with console.status(f"{tool}…"):
            f = san.sanitize_check(names, tool)
        tally.add(f.errors == 0)
        table.add_row(tool, "did not finish" if f.errors is None else str(f.errors),
                      "\n".join(blame(f.kernels, impls)) or "-", f.excerpt[-800:] if f.errors else "")
    console.print(table)
    console.print(escape(f"compute-sanitizer tools: {tally.line()}"))
    raise typer.Exit(int(tally.exit_code()))
