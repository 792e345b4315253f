"""The judge's verdict on the terminal: what a user needs to fix their code, in the order they need it.

A header line (the file, what it was detected as, the gate, the device, the
seed, and for a .cu the nvcc flags it was built with); the cases' table, only
when a case ran; the timing; each distinct error the solution raised, once,
with its own frames and the cases that raised it; its output (the last 30
lines, all of it with ``--verbose``); what the judge saw and did; the reason;
ACCEPTED or REJECTED. Everything the solution produced is escaped: it is text,
never markup or terminal control.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .isolate import Verdict
from .protocol import printable

#: Lines of the solution's output shown without --verbose.
OUTPUT_LINES = 30


def header(v: Verdict, file: str, precision: str) -> str:
    parts = [file, v.framework or "unknown", f"gate {precision}", v.device or "?", f"seed {v.seed}"]
    if v.build:
        parts.append(f"built with {v.build}")
    if v.sandbox:
        parts.append("sandbox: " + sandbox_summary(v.sandbox))
    return " · ".join(parts)


def sandbox_summary(layers: dict[str, str]) -> str:
    """The layers that were on, then each that was off and why."""
    on = [k for k, v in layers.items() if v == "on"]
    off = [f"{k} off ({v})" for k, v in layers.items() if v != "on"]
    return ", ".join(on + off) or "none"


def timing_lines(t: dict) -> list[str]:
    ratio = f" → {t['ratio_vs_baseline']:.2f}× {t['baseline']}" if t.get("ratio_vs_baseline") else ""
    base = f"; {t['baseline']} {t['baseline_ms']:.3f} ms{ratio}" if "baseline_ms" in t else ""
    lines = [f"timing {'×'.join(map(str, t['shape']))} ({t['method']}; all {t['checked_calls']} timed calls "
             f"checked): median {t['median_ms']:.3f} ms (min {t['min_ms']:.3f}, max {t['max_ms']:.3f}), "
             + (f"{t['tflops']:.2f} TFLOP/s" if t["tflops"] is not None else "no rate: below the clock's resolution"
                if t["median_ms"] <= 0 else "no rate: below the CPUs' FMA floor")
             + base]
    floor = t.get("fma_floor")
    if floor:
        lines.append(f"FP32 FMA floor ({floor['what']}): {floor['floor_ms']:.4f} ms")
    return lines


def error_blocks(v: Verdict) -> list[str]:
    """Each distinct error once: where it happened, then the solution's own traceback."""
    out = []
    for e in v.errors:
        cases = e["cases"]
        if cases == ["loading"]:
            where = "the solution failed to load:"
        else:
            more = f" (and in {len(cases) - 1} more case{'s' if len(cases) > 2 else ''})" if len(cases) > 1 else ""
            where = f"the solution raised in case {cases[0]}{more}:"
        out.append(where + "\n" + printable(e["traceback"]).rstrip())
    return out


def show(console: Console, v: Verdict, file: str, precision: str, verbose: bool,
         cases_table: Callable[[str, list[dict]], Table],
         profile: tuple[list[str], list[list[str]], list[str]] | None = None) -> None:
    """Everything, the verdict's line last. ``profile``: `profile.columns` of a --profile run."""
    console.print(header(v, file, precision), markup=False, highlight=False, emoji=False)
    if v.cases:
        rows = [r | {"case": escape(r["case"]), "reason": escape(r["reason"])} for r in v.cases]
        console.print(cases_table("cases", rows))
    if v.timing:
        for line in timing_lines(v.timing):
            console.print(line, markup=False, highlight=False)
    for block in error_blocks(v):
        console.print(block, style="red", markup=False, highlight=False, emoji=False)
    if v.log.strip():
        lines = printable(v.log, 1 << 20).rstrip().splitlines()
        shown = lines if verbose else lines[-OUTPUT_LINES:]
        which = "all" if len(shown) == len(lines) else f"the last {len(shown)}"
        console.print(f"output of the solution (stdout and stderr, {which} of {len(lines)} lines"
                      f"{'' if verbose or len(shown) == len(lines) else '; --verbose shows all'}):",
                      style="dim", markup=False)
        console.print("\n".join(shown), markup=False, highlight=False, emoji=False)
    for note in v.notes:
        console.print(note, style="yellow", markup=False, highlight=False, emoji=False)
    if profile is not None:
        heads, rows, notes = profile
        if heads:
            console.print(profile_table(heads, rows))
        for note in notes:
            console.print(note, style="dim", markup=False, highlight=False, emoji=False)
    if v.failure:
        console.print(v.failure, style="red", markup=False, highlight=False, emoji=False)
    console.print("[green]ACCEPTED[/green]" if v.passed else "[red]REJECTED[/red]")


def profile_table(heads: list[str], rows: list[list[str]]) -> Table:
    table = Table(title="Nsight Compute, the performance case (one call after a warm-up; ncu locks clocks "
                        "to base)")
    table.add_column("", overflow="fold")
    for head in heads:
        table.add_column(escape(head), overflow="fold")
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    return table
