"""`gemmlab submit`: the road from a rung or a file to LeetGPU: the file written (a rung), what
LeetGPU checks of it checked here, its precision against LeetGPU's 1e-4 check, and the steps."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..exits import Exit
from ..ui import usage
from ..ui.errors import UsageError, guarded
from .common import app, console
from .export import planned_paths, write_texts


@app.command("submit")
@guarded
def submit_cmd(
    target: Annotated[str, typer.Argument(help="a rung's name or step (default, 3.2), or your own solution "
                                               "file (.cu, .py, .mojo)", metavar="NAME|FILE")],
    output: Annotated[Path | None, typer.Option("-o", "--output", metavar="FILE",
                                                help="where to write a rung (default: as gemmlab export)")] = None,
    force: Annotated[bool, typer.Option(help="overwrite an existing file")] = False,
    precision: Annotated[str, typer.Option(help="for a FILE: the precision it computes in (fp32, fp32x3 or "
                                                "tf32)")] = "fp32",
) -> None:
    """Get a solution ready for LeetGPU: write the rung's file, check what LeetGPU checks (one file,
    the solve it calls, the language, the size), say whether its precision passes LeetGPU's 1e-4
    check, and print the steps to submit it.

    Exit 0 ready; 1 a check failed, or TF32 (LeetGPU's check rejects it); 2 usage error.
    """
    from ..export import leetgpu
    from ..judge.userfile import detect_framework

    path, name, precision = _file_of(target, output, force, precision)
    framework = detect_framework(path)
    results = leetgpu.checks(path, framework)
    console.print(escape(f"{path} ({name or 'your file'}): what LeetGPU checks before it runs a file"),
                  highlight=False)
    for c in results:
        console.print(f"  {'ok ' if c.ok else 'NO '} {escape(c.what)}: {escape(c.detail)}", highlight=False)
    console.print(escape(f"  precision: {leetgpu.precision_note(precision)}"), highlight=False)
    if name:
        _explain_violations(name)
    language = leetgpu.LANGUAGES.get(framework, framework)
    steps = [f"gemmlab judge {path}" + (f" --precision {precision}" if precision != "fp32" else "")
             + ": LeetGPU's cases and fresh ones, before LeetGPU sees it",
             f"open {leetgpu.CHALLENGE_URL} and pick {language} in the language menu",
             "pick the GPU (gemmlab's records are for the H200 and the H100; the file runs on either)",
             f"paste the whole of {path} over the starter, then Run (the example) and Submit"]
    console.print("To submit:", highlight=False)
    for i, step in enumerate(steps, 1):
        console.print(escape(f"  {i}. {step}"), highlight=False)
    if not all(c.ok for c in results) or precision == "tf32":  # LeetGPU would refuse it
        raise typer.Exit(Exit.FAILED)


def _file_of(target: str, output: Path | None, force: bool, precision: str) -> tuple[Path, str | None, str]:
    """The file to check: the one named, or the rung's export written now (with the rung's precision)."""
    from ..precision import Precision

    if precision not in {p.value for p in Precision}:
        raise UsageError(f"unknown precision {precision!r}; known: {', '.join(p.value for p in Precision)}")
    given = Path(target)
    if given.suffix in (".cu", ".py", ".mojo") and given.exists():
        if output is not None:
            raise UsageError("-o names where a rung is written; a FILE is checked where it lies")
        return given, None, precision
    if given.suffix in (".cu", ".py", ".mojo"):
        raise UsageError(f"{target}: no such file")
    impl = usage.one(target)
    [path] = planned_paths([impl], output, force)
    write_texts([impl], [path])
    console.print(escape(f"wrote {path} (gemmlab export {impl.name})"), highlight=False)
    return path, impl.name, str(impl.precision)


def _explain_violations(name: str) -> None:
    """Where the committed sweep counts elements of `name` outside LeetGPU's tolerance, and why."""
    from ..book import facts
    from ..export import leetgpu

    sweep = facts.load_records(facts.default_record_paths()).sweep
    found = leetgpu.violations(sweep, name)
    if not found:
        return
    worst = ", ".join(f"{v['label']} {v['outside']} of {v['numel']:,}" for v in found)
    console.print(escape(
        f"  the sweep ({sweep['device']['name']}, inputs from U[-10, 10)) counts elements of {name} "
        f"outside 1e-4 of cuBLAS's own FP32 result: {worst}. Each sum of products there reaches "
        "hundreds, and FP32 rounds a sum taken in another order than cuBLAS's by more than 1e-4 "
        "where the exact value is near zero. Against the float64 product the counts are "
        + ", ".join(f"{v['label']} {v['own_exact']} (cuBLAS {v['cublas_exact']})" for v in found)
        + ": cuBLAS has them too. LeetGPU checks on its functional tests, whose larger shapes draw "
        "from U[-1, 1), where the same rounding is a hundred times smaller."), highlight=False)
