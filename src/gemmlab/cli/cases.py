"""The table of judged cases that `gemmlab check` and `gemmlab judge` both print."""

from __future__ import annotations

import math

from rich.markup import escape
from rich.table import Table


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return "inf" if math.isinf(x) else f"{x:.2e}"


_STATUS = {"pass": "[green]pass[/green]", "fail": "[red]FAIL[/red]", "error": "[red]ERROR[/red]",
           "skip": "[yellow]skip[/yellow]"}


CASE_COLUMNS = ("case", "M×N×K", "seed", "result", "max abs", "norm max", "rel fro",
                "LeetGPU 1e-4 fails", "unwritten", "ms", "note")


def cases_table(title: str, rows: list[dict]) -> Table:
    """One row per judged case (the dicts of `CaseResult.to_dict`), for check and judge alike."""
    # "ms" is one call's wall time, so a launch's first call carries its compile and planning:
    # say so where the figure is shown (timings are `gemmlab bench`'s job).
    table = Table(title=title, caption="ms: the one judged call, wall time; a kernel's first call "
                                       "includes its compile and set-up (gemmlab bench times)")
    for col in CASE_COLUMNS:
        table.add_column(col, overflow="fold")
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
