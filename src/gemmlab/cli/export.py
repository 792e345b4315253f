"""The road to LeetGPU: `gemmlab export` writes a rung as one self-contained LeetGPU file (a CUDA
rung's .cu built with a grader's flags when asked); `gemmlab submit` checks a rung's or your own
file as LeetGPU would, says what its precision means for LeetGPU's 1e-4 check, and gives the steps."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from .. import registry
from ..exits import Exit
from ..ui import usage
from ..ui.errors import CannotRun, UsageError, guarded
from .common import app, console, side


@app.command("export")
@guarded
def export_cmd(
    name: Annotated[str, typer.Argument(help="a CUDA, Triton, PyTorch, CuTe DSL or Mojo rung's name or step (3.2), or an old rung "
                                             "number for every implementation that had it (see gemmlab list)",
                                        metavar="NAME|STEP")],
    output: Annotated[Path | None, typer.Option("-o", "--output", metavar="FILE",
                                                help="where to write it (default: NAME.cu here; NAME.py, NAME-solution.py, NAME.mojo)")] = None,
    force: Annotated[bool, typer.Option(help="overwrite an existing file")] = False,
    nvcc_flags: Annotated[str | None, typer.Option(
        "--nvcc-flags", metavar="FLAGS",
        help='also build the file as a grader would, with these nvcc flags ("-arch=sm_80"; "" for '
             "nvcc's own defaults), and say which launches that build holds")] = None,
) -> None:
    """Write a CUDA rung as one self-contained LeetGPU .cu: its kernels and solve()'s dispatch; a
    Triton or PyTorch rung as one .py; a CuTe DSL or Mojo rung as its own source, already one file.

    Exit 0 written (and built, with --nvcc-flags); 1 written but nvcc failed; 2 usage error;
    3 --nvcc-flags without nvcc or cuobjdump here.
    """
    from ..cuda import tools

    impls = usage.names([name])
    if output and len(impls) > 1:
        raise UsageError(f"rung {name} has {len(impls)} implementations ({', '.join(i.name for i in impls)}): "
                         "-o names one file; leave it out to write NAME.cu for each")
    from ..export.document import PYTHON_FORMATS, SOURCE_FORMATS, plan
    from ..export.leetgpu import LANGUAGES

    paths = planned_paths(impls, output, force)
    flags = usage.nvcc_flags(nvcc_flags) if nvcc_flags is not None else None
    written_as_source = (*SOURCE_FORMATS, *PYTHON_FORMATS)
    if flags is not None and any(impl.family in written_as_source for impl in impls):
        raise UsageError("--nvcc-flags builds an exported .cu; the Triton, PyTorch, CuTe DSL and Mojo rungs "
                         "export Python or Mojo source (gemmlab judge runs it)")
    if flags is not None:
        try:
            tools.find("nvcc"), tools.find("cuobjdump")
        except tools.ToolMissing as exc:
            raise CannotRun(f"--nvcc-flags builds the file: {exc}") from None
    write_texts(impls, paths)
    for impl, path in zip(impls, paths, strict=True):
        gate = f" --precision {impl.precision}" if impl.precision != "fp32" else ""
        if impl.family in written_as_source:
            what = f"LeetGPU's {LANGUAGES[impl.family]} format"
        else:
            count = len(plan(impl).launches)
            what = f"{count} launch{'es' if count != 1 else ''}"
        console.print(escape(f"wrote {path} ({impl.name}, {what}); judge it with: gemmlab judge {path}{gate}"))
    if flags is not None:
        for impl, path in zip(impls, paths, strict=True):
            _export_build(impl, path, flags)


def planned_paths(impls: list[registry.Implementation], output: Path | None, force: bool) -> list[Path]:
    """Where each rung is written (`output`, else its default name), each checked before anything is."""
    from ..export.document import filename

    paths = [output or Path(filename(impl)) for impl in impls]
    for path in paths:
        usage.new_file(path, force)
    if output is not None:
        suffix = Path(filename(impls[0])).suffix
        usage.of_kind(output, suffix, f"{impls[0].name} is written as a {suffix} file", "-o ")
    return paths


def write_texts(impls: list[registry.Implementation], paths: list[Path]) -> None:
    """Every text first, so that a rung the exporter cannot write leaves nothing behind."""
    from ..export import ExportError, export_text

    try:
        texts = [export_text(impl, path.name) for impl, path in zip(impls, paths, strict=True)]
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    for path, text in zip(paths, texts, strict=True):
        try:
            path.write_text(text)
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _export_build(impl: registry.Implementation, path: Path, flags: str) -> None:
    """Build the exported file with a grader's flags; say which launches the build holds."""
    import tempfile

    from ..export.builds import build_library, ranges, real_kernels, sass_of
    from ..export.document import collect_variants, plan

    p = plan(impl)
    with tempfile.TemporaryDirectory(prefix="gemmlab-export-") as folder:
        lib = Path(folder) / f"{path.stem}.so"
        proc = build_library(path, flags, lib)
        if proc.returncode:
            side.print(escape(f"nvcc {flags} failed to build {path}:\n{proc.stdout}{proc.stderr}".rstrip()),
                       highlight=False)
            raise typer.Exit(int(Exit.FAILED))
        real = real_kernels(sass_of(lib))
    variants = collect_variants(p.launches)
    holds = [i for i, launch in enumerate(p.launches)
             if all(variants.ref(k).removeprefix("gemmlab::") in real for k in launch.kernels())]
    floor = f"; launches #{ranges(list(range(p.own, len(p.launches))))} are the portable floor" \
        if p.own < len(p.launches) else ""
    n = len(p.launches)
    which = f" (#{ranges(holds)})" if holds else ""
    console.print(escape(f"built with nvcc {flags or '(no flags: nvcc defaults)'}: holds {len(holds)} of its "
                         f"{n} launch{'' if n == 1 else 'es'}{which}{floor}"), highlight=False)


@app.command("submit")
@guarded
def submit_cmd(
    target: Annotated[str, typer.Argument(help="a rung's name or step (default, 3.2), or your own solution "
                                               "file (.cu, .py, .mojo)", metavar="NAME|FILE")],
    output: Annotated[Path | None, typer.Option("-o", "--output", metavar="FILE",
                                                help="where to write a rung (default: as gemmlab export)")] = None,
    force: Annotated[bool, typer.Option(help="overwrite an existing file")] = False,
    precision: Annotated[str | None, typer.Option(help="for a FILE: the precision it computes in (fp32, fp32x3 "
                                                       "or tf32; default: what an exported file's first line "
                                                       "says, else fp32)")] = None,
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
    ready = all(c.ok for c in results)
    console.print("To submit:" if ready else "Not ready: fix what says NO first; then, to submit:", highlight=False)
    for i, step in enumerate(steps, 1):
        console.print(escape(f"  {i}. {step}"), highlight=False)
    if not ready or precision == "tf32":  # LeetGPU would refuse it
        raise typer.Exit(Exit.FAILED)


def _file_of(target: str, output: Path | None, force: bool, precision: str | None) -> tuple[Path, str | None, str]:
    """The file to check: the one named (its precision as given, else as its export header says, else
    strict FP32), or the rung's export written now (with the rung's precision)."""
    from ..export import leetgpu
    from ..judge.userfile import SOLUTION_SUFFIXES
    from ..precision import given as given_precision

    if precision is not None:
        given_precision(precision)
    given = Path(target)
    if given.suffix in SOLUTION_SUFFIXES:
        usage.in_file(given)
        if output is not None:
            raise UsageError("-o names where a rung is written; a FILE is checked where it lies")
        said = leetgpu.declared(given)
        if said and precision is None:
            console.print(escape(f"{given}: written by gemmlab export {said[0]}, so judged as {said[1]} "
                                 "(--precision to say otherwise)"), highlight=False)
        elif said and precision != said[1]:
            console.print(escape(f"{given}: its first line says gemmlab export {said[0]} ({said[1]}); "
                                 f"checked as --precision {precision}"), highlight=False)
        return given, None, precision or (said[1] if said else "fp32")
    if given.exists():  # a file or folder named like no rung: say what it is, not "unknown implementation"
        what = "a folder" if given.is_dir() else f"not a solution file ({', '.join(sorted(SOLUTION_SUFFIXES))})"
        raise UsageError(f"{target} is {what}; submit takes a rung's name or step, or one solution file")
    impl = usage.one(target)
    [path] = planned_paths([impl], output, force)
    write_texts([impl], [path])
    console.print(escape(f"wrote {path} (gemmlab export {impl.name})"), highlight=False)
    return path, impl.name, str(impl.precision)


def _explain_violations(name: str) -> None:
    """Where the committed sweep, or else the bench record, counts elements of `name` outside LeetGPU's
    tolerance, and why."""
    from ..book import facts
    from ..export import leetgpu

    records = facts.load_records(facts.default_record_paths())
    counted = [(what, record, leetgpu.violations(record, name))
               for what, record in (("sweep", records.sweep), ("bench record", records.ladder))]
    what, record, found = next((c for c in counted if c[2]), ("", None, []))
    if not found:
        return
    worst = ", ".join(f"{v['label']} {v['outside']} of {v['numel']:,}" for v in found)
    console.print(escape(
        f"  the {what} ({record['device']['name']}, inputs from U[-10, 10)) counts elements of {name} "
        f"outside 1e-4 of cuBLAS's own FP32 result: {worst}. Each sum of products there reaches "
        "hundreds, and FP32 rounds a sum taken in another order than cuBLAS's by more than 1e-4 "
        "where the exact value is near zero. Against the float64 product the counts are "
        + ", ".join(f"{v['label']} {v['own_exact']} (cuBLAS {v['cublas_exact']})" for v in found)
        + ": cuBLAS has them too. LeetGPU checks on its functional tests, whose larger shapes draw "
        "from U[-1, 1), where the same rounding is a hundred times smaller."), highlight=False)
