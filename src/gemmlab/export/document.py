"""One rung → the text of one self-contained LeetGPU ``.cu``: header comment, device code, host code."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from .. import __version__, registry
from ..cuda import hopper
from ..cuda.dispatch import Launch
from ..cuda.handoff import SplitGrid
from ..cuda.needs import Needs
from ..cuda.pad import PaddedOperands
from ..cuda.transposed import TransposedA
from ..policy import default as tuned_default
from ..provenance import gemmlab_commit
from . import host, leetgpu, tma, transposed
from .builds import BEST, BUILDS, held, ranges
from .source import SourceError, Variants, macros_of

#: The host kinds the exporter can write in C++, by type: the function that writes a launch's body.
HOST_PLANS = {hopper.TmaOperands: tma.body, hopper.SwappedOperands: tma.swapped_body, PaddedOperands: host.padded_body,
              TransposedA: transposed.body, SplitGrid: host.split_grid_body}


#: Families whose rung source already is one file in a format LeetGPU accepts, and its suffix:
#: exporting one writes that file as it is.
SOURCE_FORMATS = {registry.Family.CUTE: ".py", registry.Family.MOJO: ".mojo"}
#: Families whose rung is written out as one LeetGPU .py (`python_text`).
PYTHON_FORMATS = (registry.Family.TRITON, registry.Family.TORCH)


def filename(impl: registry.Implementation) -> str:
    """Where `export` writes a rung by default: NAME.cu, or NAME's own format's file; a Python
    rung's name is written NAME-solution.py, since triton.py or torch.py in the current folder
    would shadow the very package the solution imports."""
    if impl.family in PYTHON_FORMATS:
        return f"{impl.name}-solution.py"
    return f"{impl.name}{SOURCE_FORMATS.get(impl.family, '.cu')}"


class ExportError(ValueError):
    """A rung that cannot be exported; the message is one line for the user."""


def supported_kinds() -> str:
    return "plain launches (tile or persistent grid, any cluster) and " + ", ".join(
        f"{kind.__module__.rsplit('.', 1)[-1]}.{kind.__name__} hosts" for kind in HOST_PLANS)


def exportable(impl: registry.Implementation) -> None:
    """Raise ExportError unless every launch of `impl` is of a kind the exporter can write."""
    written = (registry.Family.CUDA, *SOURCE_FORMATS, *PYTHON_FORMATS)
    if impl.family not in written:
        from .leetgpu import LANGUAGES

        names = ", ".join(i.name for i in registry.IMPLEMENTATIONS if i.family in written)
        raise ExportError(f"{impl.name} is a {LANGUAGES.get(impl.family, impl.family)} rung; only CUDA, Triton, "
                          f"PyTorch, CuTe DSL and Mojo rungs export ({names}): they are LeetGPU's formats gemmlab writes")
    for launch in impl.launches if impl.family is registry.Family.CUDA else ():
        if launch.host is not None and type(launch.host) not in HOST_PLANS:
            raise ExportError(f"{impl.name}: launch {launch.kernel.label} has a host of kind "
                              f"{type(launch.host).__name__}, which the exporter cannot write; "
                              f"it writes {supported_kinds()}")


@dataclass(frozen=True)
class ExportPlan:
    """What an exported `solve` tries, in order: the rung's own launches, then, where the last
    of them needs more than plain CUDA, the portable floor (`floor`)."""

    launches: tuple[Launch, ...]
    labels: tuple[str, ...]
    own: int  # the first `own` launches are the rung's

    @property
    def floor(self) -> tuple[Launch, ...]:
        return self.launches[self.own:]


#: The rung whose launches are every exported file's portable floor: strict FP32, plain CUDA,
#: any shape (`default`'s own built-in chain).
FLOOR = tuned_default.BUILTIN


def plan(impl: registry.Implementation) -> ExportPlan:
    """A file built for any target runs: a rung whose launches all need sm_80 or more gets the
    floor's launches after its own, so that a build without them (no -arch, sm_75) still computes
    the product (strict FP32, which every precision gate accepts)."""
    own = tuple(impl.launches)
    labels = tuple(impl.launch_label(launch) for launch in own)
    if own[-1].all_needs is Needs.ANY:
        return ExportPlan(own, labels, len(own))
    floor = registry.REGISTRY[FLOOR]
    return ExportPlan(own + tuple(floor.launches),
                labels + tuple(f"{floor.launch_label(x)} (portable floor: {FLOOR})" for x in floor.launches),
                len(own))


def collect_variants(launches: tuple[Launch, ...]) -> Variants:
    variants = Variants()
    for launch in launches:
        for kernel in launch.kernels():
            variants.add(kernel)
    return variants


def uses_tma(impl: registry.Implementation) -> bool:
    return any(isinstance(launch.host, (hopper.TmaOperands, hopper.SwappedOperands))
               or launch.defines.get("TMA_COPY") for launch in impl.launches)


def build_command(flags: str, filename: str) -> str:
    """The nvcc line that builds `filename` into a shared library with `flags`."""
    stem = Path(filename).stem
    return " ".join(x for x in ("nvcc", flags, "-O3 -std=c++17 -shared -Xcompiler -fPIC -o",
                                f"{stem}.so {filename}") if x)


def build_lines(p: ExportPlan) -> list[str]:
    """Which launches each build of `BUILDS` holds: one line per build, parsed back by a test
    that compiles each build and reads which kernels its SASS holds for real."""
    lines = ["// Builds: the file compiles with any nvcc flags. solve() reads which features the",
             "// device code the driver loaded has (image_has) and skips the launches it lacks:"]
    for build in BUILDS:
        lines.append(f'//   build "{build.flags}": launches {ranges(held(p.launches, build))}; {build.note}')
    return lines


def _about(impl: registry.Implementation, filename: str, comment: str) -> list[str]:
    """Every exported file's first lines: what it is and where it came from."""
    commit = gemmlab_commit()
    return [leetgpu.FIRST_LINE.format(comment=comment, filename=filename, step=impl.step_label, name=impl.name,
                                      precision=impl.precision),
            f"{comment} {impl.summary}",
            f"{comment} gemmlab {__version__}" + (f", commit {commit}" if commit else "")
            + f"; written by `gemmlab export {impl.name}`. Edit the rung, not this file."]


def python_header(impl: registry.Implementation, filename: str) -> str:
    lines = _about(impl, filename, "#")
    if str(impl.precision) == "tf32":
        lines.append("# TF32: about 1e-3 relative error; it fails LeetGPU's 1e-4 check (gemmlab submit says why).")
    return "\n".join(lines)


def header(impl: registry.Implementation, filename: str, p: ExportPlan) -> str:
    """What the file is, where it came from, what runs when, and how to build and judge it."""
    lines = [*_about(impl, filename, "//"),
             "//", "// solve() runs the first launch whose precondition holds (the last always does):"]
    if impl.name == tuned_default.NAME:
        lines[4:4] = [f"// Dispatch from the tune record: {tuned_default.plan()[1]}."]
    for i, launch in enumerate(p.launches):
        kernel = launch.kernel
        if i == p.own:
            lines.append("//   … and where this build holds none of those: the portable floor, in plain CUDA:")
        lines.append(f"//   {i}. {p.labels[i]} — when {launch.precondition}")
        lines.append(f"//      block {kernel.block}, tile {launch.tile}, dynamic smem {kernel.smem} B, "
                     f"cluster {kernel.cluster}{', persistent grid' if launch.persistent else ''}"
                     + (f", host {launch.host}" if launch.host else ""))
        lines.append(f"//      macros: {macros_of(launch.defines)}")
    lines += ["//", *build_lines(p),
              f"// Fastest on an H100/H200: {build_command(BEST.flags, filename)}",
              "// Links the CUDA runtime only"
              + ("; TMA descriptors come from the driver through cudaGetDriverEntryPoint, so no"
                 " -lcuda is needed (passing it is harmless)." if uses_tma(impl) else "."),
              f"// Judge: gemmlab judge {filename} --precision {impl.precision}"]
    return "\n".join(lines) + "\n"


_FUTURE = "from __future__ import annotations\n"
_RELATIVE = re.compile(r"^from \.\S* import .*\n", re.M)

_TORCH = '''{header}
import torch


def solve(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, M: int, N: int, K: int):
    # {why}
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = {tf32}
    try:
        torch.matmul(A, B, out=C)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before
'''


def _triton(impl: registry.Implementation, header: str) -> str:
    factory = impl.factory
    # The rung's own module last: each inlined module comes after those it imports.
    parts = []
    for source in reversed(impl.sources):
        text = (registry.PACKAGE_DIR / source).read_text()
        parts.append(_RELATIVE.sub("", text.replace(_FUTURE, "")).strip() + "\n")
    config = ", ".join(f"{k}={v!r}" for k, v in factory.config.items())
    return (f"{header}\n{_FUTURE}\n" + "\n\n".join(parts)
            + f"\n\n_SOLVER = {factory.cls}({config})\n\n\n"
            "def solve(A, B, C, M: int, N: int, K: int):\n"
            "    _SOLVER(A, B, C, M, N, K)\n")


def python_text(impl: registry.Implementation, header: str) -> str:
    """A Triton or PyTorch rung as one LeetGPU .py: `solve(A, B, C, M, N, K)` on the GPU's tensors,
    nothing imported from gemmlab. A Triton rung's modules are inlined in the order they import
    each other, its configuration written out; a PyTorch rung is the call it makes, TF32 set for
    the call as the rung sets it. `header` is the file's opening comment."""
    if impl.family is registry.Family.TRITON:
        return _triton(impl, header)
    tf32 = str(impl.precision) == "tf32"
    why = ("TF32 on: cuBLAS on the tensor cores, about 1e-3 relative error (fails LeetGPU's 1e-4 check)"
           if tf32 else "TF32 off for the call: cuBLAS's strict FP32 SGEMM, whatever the caller set")
    return _TORCH.format(header=header, why=why, tf32=tf32)


def _includes(impl: registry.Implementation, variants: Variants) -> str:
    base = ["#include <cuda_runtime.h>", "#include <algorithm>", "#include <cstdint>",
            "#include <cstdio>", "#include <cstring>"]
    tma_headers = ["#include <cuda.h>  // CUtensorMap and its enumerators (types only)"]
    return "\n".join(base + (tma_headers if uses_tma(impl) else []) + variants.includes()) + "\n"


def _helpers(impl: registry.Implementation, p: ExportPlan) -> str:
    here = files(__package__)
    text = (here / "host_runtime.cuh").read_text()
    if uses_tma(impl):
        text += "\n" + (here / "host_tma.cuh").read_text()
    if any(getattr(launch.host, "tail", False) for launch in p.launches):  # bigtile's SPLIT 2
        text += "\n" + (here / "host_tail.cuh").read_text()
    advice = f"the fastest build on an H100/H200 is nvcc {BEST.flags}; the file header lists every build"
    own = Needs.of(*(launch.all_needs for launch in p.launches[:p.own]))
    return ("namespace gemmlab_host {\n"
            f'static const char* const RUNG = "{impl.name}";\n'
            f'[[maybe_unused]] static const char* const OWN_NEEDS = "{own.short} ({own.features})";\n'
            f'[[maybe_unused]] static const char* const BUILD_ADVICE = "{advice}";\n'
            "}\n\n" + text)


def _launch_body(launch: Launch, variants: Variants) -> list[str]:
    if launch.host is None:
        return host.main_launch(launch, variants, host.GEMM_ARGS)
    return HOST_PLANS[type(launch.host)](launch, variants)


def export_text(impl: registry.Implementation, filename: str | None = None) -> str:
    """The whole ``.cu`` of one CUDA rung, or a CuTe DSL or Mojo rung's own LeetGPU file;
    ExportError if it is not one the exporter can write."""
    exportable(impl)
    if impl.family in SOURCE_FORMATS:
        return (registry.PACKAGE_DIR / impl.sources[0]).read_text()
    if impl.family in PYTHON_FORMATS:
        return python_text(impl, python_header(impl, filename or f"{impl.name}.py"))
    p = plan(impl)
    try:
        variants = collect_variants(p.launches)
        device = variants.device_code()
    except SourceError as exc:
        raise ExportError(f"{impl.name}: {exc}") from None
    launches = [host.launch_function(i, launch, p.labels[i], _launch_body(launch, variants))
                for i, launch in enumerate(p.launches)]
    return "\n".join([
        header(impl, filename or f"{impl.name}.cu", p), _includes(impl, variants), device,
        _helpers(impl, p), "// ---- the launches, in the order solve() tries them ----",
        "namespace gemmlab_host {\n", *launches, "}  // namespace gemmlab_host\n",
        host.solve_function(p.launches, list(p.labels), p.own)])
