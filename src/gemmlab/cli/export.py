"""`gemmlab export`: a CUDA rung as one self-contained LeetGPU .cu, built with a grader's flags
when asked."""

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
            what = f"{len(plan(impl).launches)} launches"
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
    if output is not None and output.suffix != Path(filename(impls[0])).suffix:
        raise UsageError(f"{impls[0].name} is written as a {Path(filename(impls[0])).suffix} file; -o {output} "
                         "names another kind")
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
    floor = f"; launches {ranges(list(range(p.own, len(p.launches))))} are the portable floor" \
        if p.own < len(p.launches) else ""
    console.print(escape(f"built with nvcc {flags or '(no flags: nvcc defaults)'}: holds launches "
                         f"{ranges(holds)} of {len(p.launches)}{floor}"), highlight=False)
