"""`gemmlab inspect`: what the compiler made of each kernel (no GPU needed)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from .. import registry
from ..ui import machine, usage
from ..ui.errors import CannotRun, UsageError, guarded
from . import common
from .common import AsJson, Names, app, console, messages_console, side


def nvrtc_archs() -> list[int] | None:
    """The sm_XY numbers this NVRTC can target, or None where NVRTC cannot be asked."""
    try:
        from cuda.bindings import nvrtc

        err, archs = nvrtc.nvrtcGetSupportedArchs()
        return [int(a) for a in archs] if int(err) == 0 else None
    except Exception:  # no cuda-bindings, or no NVRTC library: inspect says so when it compiles
        return None


def _inspect_rows(impls: list[registry.Implementation], arch: str | None, ui: Console) -> list[dict]:
    from ..bench.inspect import inspect_launches
    from ..cuda.tools import ToolMissing

    rows: list[dict] = []
    bar, update = common.progress_bar(ui)
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
    from ..bench.inspect import TABLES, default_arch

    impls = [i for i in usage.names(names) if i.launches]
    arch = usage.arch(arch, nvrtc_archs())
    if not impls:
        raise UsageError(f"{', '.join(names or [])} has no CUDA kernel to inspect; "
                         "CUDA rungs: gemmlab list")
    target = arch or default_arch()
    left_out = [i for i in impls if not i.needs.builds_for(target)]
    why = ", ".join(f"{i.name} (needs {i.needs.short})" for i in left_out)
    if len(left_out) == len(impls):
        raise UsageError(f"{target} cannot build {why}")
    ui = messages_console(as_json)
    if left_out:
        side.print(f"not built for {target}: {why}", highlight=False)
    rows = _inspect_rows([i for i in impls if i not in left_out], target, ui)
    if as_json:
        machine.emit([machine.inspect_row(r) for r in rows])
        return
    for title, cols in TABLES.items():
        table = common.table(f"{title} ({rows[0]['arch']})", cols)
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
