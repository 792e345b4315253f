"""The judge's verdicts: `gemmlab check` on the registry's implementations (or the sanitizers' on
their kernels), `gemmlab judge FILE` on your own LeetGPU solution from outside its process, both
as one table of judged cases; `gemmlab new` writes a starter solution."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from .. import registry, runtime
from ..blame import blame
from ..exits import Exit
from ..judge.cases import Case, check_selection, standard_cases
from ..measure.inputs import fresh_seed
from ..ui import machine, usage
from ..ui.errors import CannotRun, Tally, UsageError, guarded, stop
from . import common
from .common import AsJson, Names, Seed, app, console, messages_console, tf32_on_cpu_note

if TYPE_CHECKING:
    from ..judge.runner import Judgement


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


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return "inf" if math.isinf(x) else f"{x:.2e}"


_STATUS = {"pass": "[green]pass[/green]", "fail": "[red]FAIL[/red]", "error": "[red]ERROR[/red]",
           "skip": "[yellow]skip[/yellow]"}


CASE_COLUMNS = ("case", "M×N×K", "seed", "result", "max abs", "norm max", "rel fro",
                "LeetGPU 1e-4 fails", "unwritten", "ms", "note")


def cases_table(title: str, rows: list[dict]):
    """One row per judged case (the dicts of `CaseResult.to_dict`), for check and judge alike."""
    table = common.table(title, CASE_COLUMNS, caption="ms: the one judged call, wall time; a kernel's "
                                                      "first call includes its compile and set-up (gemmlab bench times)")
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


def where_it_runs(impl: registry.Implementation, device) -> str:
    """The device, and on a CPU how a Triton rung got there (its interpreter)."""
    if device.type == "cpu" and impl.family is registry.Family.TRITON:
        return "cpu, through the Triton interpreter"
    return str(device)


def _judge_with_progress(impl: registry.Implementation, cases: list[Case], device, seed: int,
                         ui: Console) -> Judgement:
    from ..bench.run import counter
    from ..judge.runner import judge

    bar, update = common.progress_bar(ui)
    say = counter(update, len(cases))
    with bar:
        say(f"judging {impl.name}")
        return judge(impl.name, impl.solve, impl.precision, cases, device, seed,
                     on_result=lambda r: say(f"judging {impl.name}: {r.case} done"))


def _outcome(j: Judgement) -> tuple[str, str]:
    """(passed | failed | not run, why) for one implementation's judgement."""
    if j.failed:
        return "failed", f"{len(j.failed)} of {len(j.results)} cases failed"
    if any(r.passed for r in j.results):
        return "passed", ""
    reasons = sorted({r.reason for r in j.results if r.status == "skip"})
    return "not run", "; ".join(reasons) or "no case ran"


@app.command(cls=usage.ShapeCommand)
@guarded
def check(
    names: Names = None,
    seed: Seed = None,
    group: Annotated[list[str] | None, typer.Option("--group",
        metavar="GROUP", help="only this case group (repeatable): " + ", ".join(CASE_GROUPS))] = None,
    shape: Annotated[str | None, typer.Option("--shape", metavar=usage.SHAPE_METAVAR,
        help=f"one custom shape instead of the case groups, {usage.SHAPE_HELP}")] = None,
    perf: Annotated[bool, typer.Option(help="include the 8192×6144×4096 case (GPU)")] = True,
    sanitize: Annotated[bool, typer.Option(
        help="run compute-sanitizer (memcheck, racecheck, synccheck) over the CUDA kernels instead")] = False,
    as_json: AsJson = False,
) -> None:
    """Judge implementations on every case; exit 1 if any case fails, 3 if none could run."""
    custom = usage.shape(shape)  # before the names: `--shape 16 16` is a shape typed wrong, not the old number 16
    impls = usage.names(names)
    groups = usage.groups(group, CASE_GROUPS)
    if custom and groups:
        raise UsageError("--shape and --group exclude each other: a custom shape is one case")
    check_selection(groups, perf)
    if sanitize:
        if as_json:
            raise UsageError("--sanitize has no --json output")
        _sanitize_impls(impls)
        return
    ui = messages_console(as_json)
    device = runtime.default_device()
    seed = fresh_seed() if seed is None else seed
    cases = select_cases(seed, groups, list(custom) if custom else None, perf)
    ui.print(f"device: {runtime.gpu_name()} · base seed {seed} · {len(cases)} case{'s' if len(cases) != 1 else ''}")
    common.record_notice([i.name for i in impls], ui)
    tally, report = Tally(), []
    for impl in impls:
        ok, why = impl.can_run_on(device)
        entry = {"name": impl.name, "precision": str(impl.precision), "cases": []}
        if ok:
            j = _judge_with_progress(impl, cases, device, seed, ui)
            entry["cases"] = [r.to_dict() for r in j.results]
            ui.print(cases_table(f"{j.name} ({j.precision}) on {where_it_runs(impl, device)}",
                                 entry["cases"]))
            if note := tf32_on_cpu_note(impl.name, impl.precision, device.type):
                ui.print(f"[yellow]{escape(note)}[/yellow]")
            status, why = _outcome(j)
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


def _sanitize_impls(impls: list[registry.Implementation]) -> None:
    from ..judge import sanitize as san

    if not runtime.has_gpu():
        raise CannotRun("no CUDA GPU: compute-sanitizer needs one")
    try:
        san.executable()
    except FileNotFoundError as exc:
        raise CannotRun(str(exc)) from None
    names = [i.name for i in impls if i.family == registry.Family.CUDA]
    if not names:
        raise UsageError("--sanitize checks CUDA kernels, and none is named")
    table = common.table(f"compute-sanitizer on the notes' shapes: {' '.join(names)}",
                         ("tool", "errors", "launches named: the rungs that use each", "excerpt"))
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


@app.command("judge")
def judge_cmd(
    file: Annotated[Path, typer.Argument(help="a .cu, .mojo or .py solution in LeetGPU's format", metavar="FILE")],
    framework: Annotated[str | None, typer.Option("--framework", metavar="FRAMEWORK", help="cuda, torch, triton, "
        "jax, cute, mojo or tilelang (default: by .cu or .mojo; else what the module imports)")] = None,
    precision: Annotated[str, typer.Option("--precision", metavar="PRECISION",
        help="the gate to hold it to: fp32, fp32x3 or tf32")] = "fp32",
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
    sanitize: Annotated[str | None, typer.Option("--sanitize", metavar="TOOL",
        help="run the cases under compute-sanitizer: memcheck, racecheck or synccheck")] = None,
    nvcc_flags: Annotated[str | None, typer.Option(
        "--nvcc-flags", metavar="FLAGS", help='build a .cu with these nvcc flags instead of the GPU\'s own '
        'target, as a grader would (e.g. "-arch=sm_80"; "" for nvcc\'s defaults)')] = None,
    profile: Annotated[bool, typer.Option(
        "--profile", help="also profile the performance case with Nsight Compute: your kernels beside cuBLAS's")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="show all of the solution's output")] = False,
    as_json: AsJson = False,
) -> None:
    """Judge your own solution from outside its process: every case, then timed calls, each one checked.

    Exit 0 accepted, 1 rejected, 2 usage error, 3 could not judge here.
    """
    from ..judge import sanitize as san
    from ..judge.isolate import judge_file
    from ..judge.profile import CannotProfile, columns, profile_file

    if profile and sanitize:
        raise stop(Exit.USAGE, "--profile and --sanitize exclude each other: a profile under the "
                               "sanitizer measures it")
    extra: dict = {}
    if sanitize:
        if sanitize not in san.TOOLS:
            raise stop(Exit.USAGE, f"unknown tool {sanitize!r}; known: {', '.join(san.TOOLS)}")
        if not runtime.has_gpu():
            raise stop(Exit.CANNOT_RUN, "compute-sanitizer needs a CUDA GPU, and there is none "
                                        "here")
        try:
            extra = dict(wrapper=san.wrapper(sanitize), env=san.ENV, time_shape=(128, 128, 128))
        except FileNotFoundError as exc:
            raise stop(Exit.CANNOT_RUN, str(exc)) from None
        perf, group = False, group or ["notes"]
    if memory_limit is not None and not math.isfinite(memory_limit):
        raise stop(Exit.USAGE, f"--memory-limit must be a number of GiB, got {memory_limit}")
    limit = None if memory_limit is None else int(memory_limit * (1 << 30))
    measured = None
    try:
        check_selection(group, perf)  # an unknown group is check_usage's to name
        if profile:
            with messages_console(as_json).status(f"profiling {file} and cuBLAS at the performance shape (Nsight Compute)…"):
                measured = profile_file(file, framework, precision, group, timeout, limit, nvcc_flags)
        with messages_console(as_json).status(f"judging {file}…") as status:
            v = judge_file(file, framework, precision, seed, perf, group, timeout, iters=iters,
                           warmup=warmup, memory_limit=limit, nvcc_flags=nvcc_flags,
                           on_event=lambda e: status.update(escape(f"judging {file}: {e}")), **extra)
    except UsageError as exc:
        raise stop(Exit.USAGE, str(exc)) from None
    except CannotProfile as exc:
        raise stop(Exit.CANNOT_RUN, str(exc)) from None
    if v.cannot_run:
        if as_json:  # a document always, so that what reads it (book --judged) reads why
            machine.emit(machine.verdict(v, str(file), precision))
        raise stop(Exit.CANNOT_RUN, f"cannot judge {file} here: {v.cannot_run}")
    _verdict(v, file, precision, sanitize, verbose, columns(measured) if measured else None, as_json)


def _verdict(v, file: Path, precision: str, sanitize: str | None, verbose: bool, profile, as_json: bool) -> None:
    """The sanitizer's finding, the verdict on the terminal (on stderr with --json, which prints the
    verdict as one JSON document on stdout), and the exit code."""
    from ..judge import report
    from ..judge import sanitize as san

    ui = messages_console(as_json)
    if sanitize:
        f = san.parse(sanitize, v.log)
        ui.print(f"{sanitize}: {'did not finish' if f.errors is None else f'{f.errors} errors'}"
                 + (f"\n{f.excerpt}" if f.errors else ""), markup=False)
        if f.errors != 0:
            v.passed = False
    report.show(ui, v, str(file), precision, verbose, cases_table, profile=profile)
    if as_json:
        machine.emit(machine.verdict(v, str(file), precision))
    raise typer.Exit(int(v.exit_code))


TEMPLATES = {"cuda": "solution.cu", "torch": "solution_torch.py", "triton": "solution_triton.py",
             "jax": "solution_jax.py", "cute": "solution_cute.py", "mojo": "solution.mojo",
             "tilelang": "solution_tilelang.py"}


@app.command()
@guarded
def new(
    framework: Annotated[str, typer.Option("--framework", metavar="FRAMEWORK",
        help="cuda, torch, triton, jax, cute, mojo or tilelang")] = "cuda",
    path: Annotated[Path | None, typer.Argument(help="where to write it (default: the template's name)",
                                                metavar="PATH")] = None,
    force: Annotated[bool, typer.Option(help="overwrite an existing file")] = False,
) -> None:
    """Write a starter solution in LeetGPU's format: cuda, torch, triton and jax leave the product to
    you (they judge, and fail, as they are); cute, mojo and tilelang are simple and correct."""
    from importlib.resources import files

    from ..export import leetgpu

    if framework not in TEMPLATES:
        raise UsageError(f"unknown framework {framework!r}; known: {', '.join(TEMPLATES)}")
    name = TEMPLATES[framework]
    path = path or Path(name)
    usage.of_kind(path, Path(name).suffix, f"{framework} solutions are {Path(name).suffix} files")
    if leetgpu.shadows(path):
        raise UsageError(f"{path.name} would shadow the {path.stem} package the solution imports; name it "
                         f"{path.stem}_solution.py, say")
    usage.new_file(path, force)
    path.write_text((files("gemmlab") / "templates" / name).read_text())
    console.print(f"wrote {path}; judge it with: gemmlab judge {path}")
