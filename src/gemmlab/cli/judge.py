"""`gemmlab judge FILE` and `gemmlab new`: your own LeetGPU solution, started and judged."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import runtime
from ..exits import Exit
from ..ui import machine, usage
from ..ui.errors import UsageError, guarded, stop
from .check import CASE_GROUPS, cases_table
from .common import AsJson, Seed, app, console, messages_console


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
    from rich.markup import escape

    from ..judge import sanitize as san
    from ..judge.isolate import UsageError, judge_file
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
    limit = None if memory_limit is None else int(memory_limit * (1 << 30))
    measured = None
    try:
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

    if framework not in TEMPLATES:
        raise UsageError(f"unknown framework {framework!r}; known: {', '.join(TEMPLATES)}")
    name = TEMPLATES[framework]
    path = path or Path(name)
    usage.new_file(path, force)
    path.write_text((files("gemmlab") / "templates" / name).read_text())
    console.print(f"wrote {path}; judge it with: gemmlab judge {path}")
