"""The `gemmlab` command line: list, explain, check, inspect, bench, report, study, sweep, judge, new."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from . import runtime

runtime.configure()

from . import registry  # noqa: E402  (after the Triton interpreter switch)
from .judge.cases import Case, fresh_seed, standard_cases  # noqa: E402
from .judge.runner import Judgement, judge  # noqa: E402


def progress_bar():
    """A rich progress bar and the `progress(message, done, total)` callback that drives it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=console, transient=True)
    task = bar.add_task("starting", total=None)

    def update(message: str, done: int, total: int) -> None:
        bar.update(task, description=message, completed=done, total=total)

    return bar, update


app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="LeetGPU's FP32 matrix multiplication: the ladder, the judge, the benchmark.")
console = Console(width=None if sys.stdout.isatty() else 200)

Names = Annotated[list[str] | None, typer.Argument(help="implementation names (default: all)")]


def _names_or_exit(names: list[str] | None) -> list[registry.Implementation]:
    try:
        return registry.select(names)
    except registry.UnknownImplementation as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None


@app.command("list")
def list_() -> None:
    """The registry as a table."""
    table = Table(title="gemmlab implementations")
    for col in ("rung", "name", "family", "precision", "min cc", "idea", "sources"):
        table.add_column(col)
    for impl in registry.IMPLEMENTATIONS:
        table.add_row(str(impl.rung), impl.name, impl.family, impl.precision,
                      "{}.{}".format(*impl.min_cc), impl.summary, ", ".join(impl.sources))
    console.print(table)


@app.command()
def explain(name: str) -> None:
    """The idea behind one implementation, its data path, intensity and preconditions."""
    impl = _names_or_exit([name])[0]
    console.print(Markdown(impl.explanation()))
    facts = Table(show_header=False, title=f"{impl.name}: facts")
    facts.add_row("family / rung / precision", f"{impl.family} / {impl.rung} / {impl.precision}")
    if impl.tile:
        r, c, s = impl.tile
        facts.add_row("tile of C, reduction step", f"{r}×{c}, {s}")
        facts.add_row("FLOP per global byte per tile", f"{impl.intensity:.1f}")
    for launch in impl.launches:
        facts.add_row(f"kernel {launch.entry}{dict(launch.defines) or ''}",
                      f"block {launch.block}, tile {launch.tile}; "
                      + (f"when {launch.requires}" if launch.when else "always (fallback)"))
    console.print(facts)


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
    table = Table(title=title)
    for col in CASE_COLUMNS:
        table.add_column(col, overflow="fold")
    for r in rows:
        f = r.get("figures") or {}
        if r["status"] != "pass":
            note = r["reason"]
        elif f.get("leetgpu_violations"):
            note = f"fails LeetGPU's 1e-4 check on {f['leetgpu_violations']} of {f['numel']}"
        else:
            note = ""
        table.add_row(
            r["case"], "×".join(map(str, r["shape"])), str(r["seed"]), _STATUS[r["status"]],
            _fmt(f.get("max_abs")), _fmt(f.get("norm_max")), _fmt(f.get("rel_fro")),
            str(f.get("leetgpu_violations", "-")), str(f.get("unwritten", "-")),
            f"{r['seconds'] * 1e3:.2f}" if r.get("seconds") is not None else "-", note,
        )
    return table


def judgement_table(j: Judgement) -> Table:
    return cases_table(f"{j.name} ({j.precision}) on {j.device}", [r.to_dict() for r in j.results])


def select_cases(seed: int, groups: list[str] | None, shape: list[int] | None, perf: bool) -> list[Case]:
    if shape:
        m, n, k = shape
        return [Case(f"custom-{m}x{n}x{k}", "custom", (m, n, k), gpu_only=False)]
    cases = standard_cases(seed, perf=perf)
    if groups:
        cases = [c for c in cases if c.group in groups]
    return cases


@app.command()
def check(
    names: Names = None,
    seed: Annotated[int | None, typer.Option(help="base seed (default: fresh)")] = None,
    group: Annotated[list[str] | None, typer.Option(
        help="only these case groups: example, notes, leetgpu, edge, random, perf")] = None,
    shape: Annotated[tuple[int, int, int] | None, typer.Option(help="one custom M N K instead")] = None,
    perf: Annotated[bool, typer.Option(help="include the 8192×6144×4096 case (GPU)")] = True,
    sanitize: Annotated[bool, typer.Option(
        help="run compute-sanitizer (memcheck, racecheck, synccheck) over the CUDA kernels instead")] = False,
) -> None:
    """Judge implementations on every case; exit code 1 if any case fails."""
    impls = _names_or_exit(names)
    if sanitize:
        _sanitize_impls(impls)
        return
    device = runtime.default_device()
    seed = fresh_seed() if seed is None else seed
    cases = select_cases(seed, group, list(shape) if shape else None, perf)
    console.print(f"device: {runtime.gpu_name()} · base seed {seed} · {len(cases)} cases")
    any_failed = False
    for impl in impls:
        ok, why = impl.can_run_on(device)
        if not ok:
            console.print(f"[yellow]{impl.name}: not run — {why}[/yellow]")
            continue
        with console.status(f"judging {impl.name}…"):
            j = judge(impl.name, impl.solve, impl.precision, cases, device, seed)
        console.print(judgement_table(j))
        any_failed |= bool(j.failed)
    raise typer.Exit(1 if any_failed else 0)


def main() -> None:  # pragma: no cover
    app()


def bench_table(record: dict) -> Table:
    m, n, k = record["shape"]
    table = Table(title=f"{record['device']['name']} · {m}×{n}×{k} · {record['timing']} · "
                        f"{record['iters']} iterations after {record['warmup']} warm-ups")
    for col in ("rung", "name", "precision", "kernel", "median ms", "min ms", "max ms",
                "TFLOP/s", "vs cuBLAS", "of peak", "result"):
        table.add_column(col, overflow="fold")
    for r in sorted(record["results"], key=lambda r: (r["rung"], r["name"])):
        if "median_ms" not in r:
            table.add_row(str(r["rung"]), r["name"], r["precision"], r.get("kernel") or "-",
                          "-", "-", "-", "-", "-", "-", f"[red]ERROR {r['reason']}[/red]")
            continue
        ratio = r["ratio_vs_cublas"]
        frac = r["fraction_of_peak"]
        table.add_row(
            str(r["rung"]), r["name"], r["precision"], r.get("kernel") or "-",
            f"{r['median_ms']:.3f}", f"{r['min_ms']:.3f}", f"{r['max_ms']:.3f}",
            f"{r['tflops']:.2f}", f"{ratio:.2f}×" if ratio else "-",
            f"{100 * frac:.0f}%" if frac else "-",
            "[green]pass[/green]" if r["passed"] else f"[red]FAIL {r['reason']}[/red]",
        )
    return table


@app.command()
def bench(
    names: Names = None,
    shape: Annotated[tuple[int, int, int] | None, typer.Option(help="M N K (default: 8192 6144 4096 on a GPU)")] = None,
    warmup: Annotated[int, typer.Option(min=0)] = 5,
    iters: Annotated[int, typer.Option(min=1)] = 10,
    flush_l2: Annotated[bool, typer.Option("--flush-l2", help="overwrite 256 MiB before each timed call")] = False,
    seed: Annotated[int | None, typer.Option()] = None,
    out: Annotated[Path, typer.Option(help="results folder")] = Path("results"),
    latest: Annotated[Path | None, typer.Option(help="also write the record here")] = None,
    csv: Annotated[Path | None, typer.Option(help="also write a CSV table here")] = None,
) -> None:
    """Time implementations side by side with cuBLAS; write JSON; exit 1 if any result is wrong."""
    from .bench import results
    from .bench.run import run

    if not runtime.has_gpu():
        console.print("[yellow]No CUDA GPU here: timing what runs on the CPU (torch, Triton "
                      "through its interpreter) at a small shape. These are CPU figures.[/yellow]")
    bar, update = progress_bar()
    with bar:
        record = run(names, shape, warmup, iters, flush_l2, seed, progress=update)
    for name, why in record["skipped"].items():
        console.print(f"[yellow]{name}: not run — {why}[/yellow]")
    path = results.save(record, out)
    if latest:
        latest.parent.mkdir(parents=True, exist_ok=True)
        latest.write_text(path.read_text())
    if csv:
        results.write_csv(record, csv)
    console.print(bench_table(record))
    console.print(f"results: {path}")
    raise typer.Exit(0 if all(r["passed"] for r in record["results"]) else 1)


@app.command()
def inspect(
    names: Names = None,
    arch: Annotated[str | None, typer.Option(help="target, e.g. sm_90a (default: the GPU's, or sm_90a)")] = None,
) -> None:
    """Registers, shared memory, stack, spills, SASS instruction mix and (on a GPU) occupancy."""
    from .bench.inspect import inspect_launches

    rows = inspect_launches(_names_or_exit(names), arch)
    table = Table(title=f"resources and SASS mix ({rows[0]['arch'] if rows else arch})")
    cols = ["name", "kernel", "threads", "regs", "smem B", "stack B", "spills", "FFMA", "LDS",
            "LDS.128", "LDG.128", "STG.128", "LDGSTS", "HMMA", "HGMMA", "BAR", "LDL/STL", "occupancy"]
    for col in cols:
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(*[str(r.get(c, "-")) for c in cols])
    console.print(table)


@app.command()
def report(
    record_path: Annotated[Path, typer.Argument(help="a results JSON")] = Path("results/h200-latest.json"),
    out: Annotated[Path, typer.Option(help="folder for the Markdown and PNGs")] = Path("docs"),
    readme: Annotated[Path | None, typer.Option(help="rewrite the results block of this file")] = None,
) -> None:
    """Markdown table and plots from a results JSON (bench, study or sweep)."""
    import json

    from .bench import report as rep
    from .bench import results

    raw = json.loads(record_path.read_text())
    out.mkdir(parents=True, exist_ok=True)
    if raw.get("study") == "sweep":
        path = rep.plot_sweep(raw, out, stem=record_path.stem)
        console.print(f"wrote {path}")
        return
    record = results.validate(raw)
    stem = "study_buffering" if record.get("study") == "buffering" else "ladder"
    table = rep.markdown_table(record)
    if record.get("design"):
        table = rep.design_table(record) + "\n" + table
    if record.get("resources"):
        table += "\n| name | kernel | threads | regs | smem B | spills | occupancy |\n|---|---|---:|---:|---:|---:|---|\n"
        for r in record["resources"]:
            table += (f"| {r['name']} | {r['kernel']} | {r['threads']} | {r['regs']} | {r['smem B']} | "
                      f"{r['spills']} | {r.get('occupancy', '-')} |\n")
    pngs = rep.plot_ladder(record, out, stem=stem)
    md = out / f"{stem}.md"
    md.write_text(table + "\n" + "\n".join(f"![{p.stem}]({p.name})" for p in pngs) + "\n")
    if readme:
        readme.write_text(rep.replace_block(readme.read_text(), table, tag=stem))
    console.print(f"wrote {md}, " + ", ".join(map(str, pngs)))


@app.command()
def study(
    name: Annotated[str, typer.Argument(help="buffering")] = "buffering",
    out: Annotated[Path, typer.Option()] = Path("results"),
) -> None:
    """The notes' controlled comparison: single/double buffer × 64²/128² at BK=16."""
    from .bench import results, studies

    if name != "buffering":
        console.print(f"[red]unknown study {name!r}; known: buffering[/red]")
        raise typer.Exit(2)
    bar, update = progress_bar()
    with bar:
        record = studies.buffering(progress=update)
    path = results.save(record, out / "studies")
    console.print(bench_table(record))
    console.print(f"results: {path}")


@app.command()
def sweep(
    names: Names = None,
    out: Annotated[Path, typer.Option()] = Path("results"),
    iters: Annotated[int, typer.Option(min=1)] = 5,
) -> None:
    """TFLOP/s against size (squares 256…8192, odd variants of the performance shape)."""
    import json

    from .bench import studies
    from .bench.results import slug

    if not runtime.has_gpu():
        console.print("[yellow]No CUDA GPU: the sweep needs one.[/yellow]")
        raise typer.Exit(0)
    chosen = names or ["tiling-2d", "float4", "double-buffer-128", "cp-async", "triton", "warptile",
                       "triton-presplit", "torch"]
    bar, update = progress_bar()
    with bar:
        record = studies.sweep(chosen, iters=iters, progress=update)
    path = out / slug(record["device"]["name"]) / f"sweep-{record['date'].replace(':', '')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1))
    table = Table(title="TFLOP/s against shape")
    table.add_column("shape")
    for n in record["names"]:
        table.add_column(n)
    for p in record["points"]:
        cells = []
        for n in record["names"]:
            r = next(r for r in p["results"] if r["name"] == n)
            cells.append(f"{r['tflops']:.1f}" + ("" if r["passed"] else " FAIL") if "tflops" in r else "err")
        table.add_row(f"{p['label']} {'×'.join(map(str, p['shape']))}", *cells)
    console.print(table)
    console.print(f"results: {path}")


TEMPLATES = {"cuda": "solution.cu", "torch": "solution_torch.py", "triton": "solution_triton.py",
             "jax": "solution_jax.py"}


@app.command()
def new(
    framework: Annotated[str, typer.Option(help="cuda, torch, triton or jax")] = "cuda",
    path: Annotated[Path | None, typer.Argument(help="where to write it")] = None,
    force: Annotated[bool, typer.Option(help="overwrite an existing file")] = False,
) -> None:
    """Write a starter solution in LeetGPU's format (it judges, and fails, as it is)."""
    from importlib.resources import files

    if framework not in TEMPLATES:
        console.print(f"[red]unknown framework {framework!r}; known: {', '.join(TEMPLATES)}[/red]")
        raise typer.Exit(2)
    name = TEMPLATES[framework]
    path = path or Path(name)
    if path.exists() and not force:
        console.print(f"[red]{path} exists; use --force to overwrite[/red]")
        raise typer.Exit(2)
    path.write_text((files("gemmlab") / "templates" / name).read_text())
    console.print(f"wrote {path}; judge it with: gemmlab judge {path}")


def _show_verdict(v, file: Path, precision: str) -> None:
    """The judge's table, timing, the solution's own output (escaped) and the failure; for judge_cmd."""
    from rich.markup import escape

    from .judge.protocol import printable

    rows = [r | {"case": escape(r["case"]), "reason": escape(r["reason"])} for r in v.cases]
    console.print(cases_table(f"{escape(str(file))} ({v.framework}, gate {precision}) on {v.device or '?'} "
                              f"· seed {v.seed}", rows))
    if v.timing:
        t = v.timing
        ratio = f" → {t['ratio_vs_baseline']:.2f}× {t['baseline']}" if t["ratio_vs_baseline"] else ""
        console.print(f"timing {'×'.join(map(str, t['shape']))} ({t['method']}; all {t['checked_calls']} "
                      f"timed calls checked): median {t['median_ms']:.3f} ms (min {t['min_ms']:.3f}, "
                      f"max {t['max_ms']:.3f}), {t['tflops']:.2f} TFLOP/s; {t['baseline']} "
                      f"{t['baseline_ms']:.3f} ms{ratio}", markup=False, highlight=False)
    if v.log.strip():
        lines = printable(v.log, 1 << 20).rstrip().splitlines()
        console.print(f"output of the solution (stdout and stderr, last {min(len(lines), 30)} of "
                      f"{len(lines)} lines):", style="dim", markup=False)
        console.print("\n".join(lines[-30:]), markup=False, highlight=False, emoji=False)
    if v.killed:
        console.print(f"ended {v.killed} process(es) the solution left running", style="yellow", markup=False)
    if v.failure:
        console.print(v.failure, style="red", markup=False, highlight=False, emoji=False)


@app.command("judge")
def judge_cmd(
    file: Annotated[Path, typer.Argument(help="a .cu or .py solution in LeetGPU's format")],
    framework: Annotated[str | None, typer.Option(
        help="cuda, torch, triton or jax (default: .cu is cuda; else what the module imports)")] = None,
    precision: Annotated[str, typer.Option(help="the gate to hold it to: fp32, fp32x3 or tf32")] = "fp32",
    seed: Annotated[int | None, typer.Option()] = None,
    perf: Annotated[bool, typer.Option(help="include the 8192×6144×4096 case (GPU)")] = True,
    group: Annotated[list[str] | None, typer.Option(help="only these case groups")] = None,
    timeout: Annotated[float | None, typer.Option(
        help="seconds any one call may take (default: derived from each call's work)")] = None,
    memory_limit: Annotated[float | None, typer.Option(
        "--memory-limit", help="GiB of host memory for the solution's processes "
                               "(default: the smaller of 16 GiB and half this machine's memory)")] = None,
    warmup: Annotated[int, typer.Option(min=0)] = 5,
    iters: Annotated[int, typer.Option(min=1)] = 10,
    sanitize: Annotated[str | None, typer.Option(
        help="run the cases under compute-sanitizer: memcheck, racecheck or synccheck")] = None,
) -> None:
    """Judge your own solution from outside its process: every case, then timed calls, each one checked.

    Exit 0 accepted, 1 rejected, 2 usage error, 3 could not judge here.
    """
    from rich.markup import escape

    from .judge import sanitize as san
    from .judge.isolate import UsageError, judge_file

    def stop(code: int, message: str) -> None:
        console.print(message, style="red" if code == 2 else "yellow", markup=False, highlight=False)
        raise typer.Exit(code)

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
    try:
        with console.status(f"judging {file}…") as status:
            v = judge_file(file, framework, precision, seed, perf, group, timeout, iters=iters,
                           warmup=warmup, memory_limit=limit,
                           on_event=lambda e: status.update(escape(f"judging {file}: {e}")), **extra)
    except UsageError as exc:
        stop(2, str(exc))
    if v.cannot_run:
        stop(3, f"cannot judge {file} here: {v.cannot_run}")
    if sanitize:
        f = san.parse(sanitize, v.log)
        console.print(f"{sanitize}: {'did not finish' if f.errors is None else f'{f.errors} errors'}"
                      + (f"\n{f.excerpt}" if f.errors else ""), markup=False)
        if f.errors != 0:
            v.passed = False
    _show_verdict(v, file, precision)
    console.print("[green]ACCEPTED[/green]" if v.passed else "[red]REJECTED[/red]")
    raise typer.Exit(int(v.exit_code))


def _sanitize_impls(impls: list[registry.Implementation]) -> None:
    from .judge import sanitize as san

    if not runtime.has_gpu():
        console.print("[yellow]No CUDA GPU: compute-sanitizer needs one.[/yellow]")
        raise typer.Exit(0)
    names = [i.name for i in impls if i.family == registry.Family.CUDA]
    entries = {launch.entry: i.name for i in impls for launch in i.launches}
    table = Table(title=f"compute-sanitizer on the notes' shapes: {' '.join(names)}")
    for col in ("tool", "errors", "implementations named", "excerpt"):
        table.add_column(col, overflow="fold")
    bad = False
    for tool in san.TOOLS:
        with console.status(f"{tool}…"):
            f = san.sanitize_check(names, tool)
        named = sorted({entries.get(k, k) for k in f.kernels if k in entries})
        bad |= f.errors != 0
        table.add_row(tool, "did not finish" if f.errors is None else str(f.errors),
                      ", ".join(named) or "-", f.excerpt[-800:] if f.errors else "")
    console.print(table)
    raise typer.Exit(1 if bad else 0)
