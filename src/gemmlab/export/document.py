"""One rung → the text of one self-contained LeetGPU ``.cu``: header comment, device code, host code."""

from __future__ import annotations

import os
import subprocess
from importlib.resources import files
from pathlib import Path

from .. import __version__, registry
from ..cuda import hopper
from ..cuda.pad import PaddedOperands
from ..cuda.rung import ARCH_SPECIFIC_CC, Launch
from ..cuda.transposed import TransposedA
from ..tune import default as tuned_default
from . import host, pad, tma, transposed
from .source import SourceError, Variants, macros_of

#: The host kinds the exporter can write in C++, by type: the function that writes a launch's body.
HOST_PLANS = {hopper.TmaOperands: tma.body, hopper.SwappedOperands: tma.swapped_body, PaddedOperands: pad.body,
              TransposedA: transposed.body}


class ExportError(ValueError):
    """A rung that cannot be exported; the message is one line for the user."""


def supported_kinds() -> str:
    return "plain launches (tile or persistent grid, any cluster) and " + ", ".join(
        f"{kind.__module__.rsplit('.', 1)[-1]}.{kind.__name__} hosts" for kind in HOST_PLANS)


def exportable(impl: registry.Implementation) -> None:
    """Raise ExportError unless every launch of `impl` is of a kind the exporter can write."""
    if impl.family is not registry.Family.CUDA:
        cuda = ", ".join(i.name for i in registry.IMPLEMENTATIONS if i.family is registry.Family.CUDA)
        raise ExportError(f"{impl.name} is a {impl.family} rung; only CUDA rungs export ({cuda})")
    for launch in impl.launches:
        if launch.host is not None and type(launch.host) not in HOST_PLANS:
            raise ExportError(f"{impl.name}: launch {launch.kernel.label} has a host of kind "
                              f"{type(launch.host).__name__}, which the exporter cannot write; "
                              f"it writes {supported_kinds()}")


def gemmlab_commit() -> str:
    """$GEMMLAB_COMMIT where set (a copy of the tree on a GPU machine, whose own git state may be
    stale), else the checkout's commit (marked -dirty with local edits), else ""."""
    if os.environ.get("GEMMLAB_COMMIT"):
        return os.environ["GEMMLAB_COMMIT"]
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=12"],
                             cwd=Path(__file__).parent, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def _collect(impl: registry.Implementation) -> Variants:
    variants = Variants()
    for launch in impl.launches:
        for kernel in launch.kernels():
            variants.add(kernel, sm90a_only=kernel == launch.kernel and launch.min_cc == ARCH_SPECIFIC_CC)
    return variants


def uses_tma(impl: registry.Implementation) -> bool:
    return any(isinstance(launch.host, (hopper.TmaOperands, hopper.SwappedOperands))
               or launch.defines.get("TMA_COPY") for launch in impl.launches)


def header(impl: registry.Implementation, filename: str) -> str:
    """What the file is, where it came from, what runs when, and how to build and judge it."""
    commit = gemmlab_commit()
    stem = Path(filename).stem
    lines = [f"// {filename}: gemmlab rung {impl.rung} `{impl.name}` ({impl.precision}), "
             "exported as one LeetGPU solution.",
             f"// {impl.summary}",
             f"// gemmlab {__version__}" + (f", commit {commit}" if commit else "")
             + f"; written by `gemmlab export {impl.name}`. Edit the rung, not this file.",
             "//", "// solve() runs the first launch whose precondition holds (the last always does):"]
    if impl.name == tuned_default.NAME:
        lines[4:4] = [f"// Dispatch from the tune record: {tuned_default.plan()[1]}."]
    for i, launch in enumerate(impl.launches):
        kernel = launch.kernel
        lines.append(f"//   {i}. {impl.launch_label(launch)} — when {launch.requires}")
        lines.append(f"//      block {kernel.block}, tile {launch.tile}, dynamic smem {kernel.smem} B, "
                     f"cluster {kernel.cluster}{', persistent grid' if launch.persistent else ''}"
                     + (f", host {launch.host}" if launch.host else ""))
        lines.append(f"//      macros: {macros_of(launch.defines)}")
    lines += ["//", "// Build: nvcc -arch=sm_90a -std=c++17 -shared -Xcompiler -fPIC -o "
              f"{stem}.so {filename}",
              "// (-arch=sm_80 and up for rungs without wgmma). Links the CUDA runtime only"
              + ("; TMA descriptors come from the driver through cudaGetDriverEntryPoint, so no"
                 " -lcuda is needed (passing it is harmless)." if uses_tma(impl) else "."),
              f"// Judge: gemmlab judge {filename} --precision {impl.precision}"]
    return "\n".join(lines) + "\n"


def _includes(impl: registry.Implementation, variants: Variants) -> str:
    base = ["#include <cuda_runtime.h>", "#include <algorithm>", "#include <cstdint>",
            "#include <cstdio>", "#include <cstring>"]
    tma_headers = ["#include <cuda.h>  // CUtensorMap and its enumerators (types only)"]
    return "\n".join(base + (tma_headers if uses_tma(impl) else []) + variants.includes()) + "\n"


def _helpers(impl: registry.Implementation) -> str:
    here = files(__package__)
    text = (here / "host_runtime.cuh").read_text()
    if uses_tma(impl):
        text += "\n" + (here / "host_tma.cuh").read_text()
    return f'namespace gemmlab_host {{\nstatic const char* const RUNG = "{impl.name}";\n}}\n\n' + text


def _launch_body(launch: Launch, variants: Variants) -> list[str]:
    if launch.host is None:
        return host.main_launch(launch, variants, host.GEMM_ARGS)
    return HOST_PLANS[type(launch.host)](launch, variants)


def export_text(impl: registry.Implementation, filename: str | None = None) -> str:
    """The whole ``.cu`` of one CUDA rung; ExportError if it is not one the exporter can write."""
    exportable(impl)
    try:
        variants = _collect(impl)
        device = variants.device_code()
    except SourceError as exc:
        raise ExportError(f"{impl.name}: {exc}") from None
    labels = [impl.launch_label(launch) for launch in impl.launches]
    launches = [host.launch_function(i, launch, labels[i], _launch_body(launch, variants))
                for i, launch in enumerate(impl.launches)]
    return "\n".join([
        header(impl, filename or f"{impl.name}.cu"), _includes(impl, variants), device, _helpers(impl),
        "// ---- the launches, in the order solve() tries them ----",
        "namespace gemmlab_host {\n", *launches, "}  // namespace gemmlab_host\n",
        host.solve_function(impl.launches, labels)])
