"""`gemmlab check`: judge the registry's implementations on every case (or run the sanitizers),
and the table of judged cases that check and judge print."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from .. import registry, runtime
from ..blame import blame
from ..judge.cases import Case, standard_cases
from ..measure.inputs import fresh_seed
from ..ui import machine, usage
from ..ui.errors import CannotRun, Tally, UsageError, guarded
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
