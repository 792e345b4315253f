"""What `gemmlab tune` checks before it runs, and the table it prints after."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from rich.table import Table

from ..ui import usage
from ..ui.errors import UsageError
from .classes import CLASSES, ShapeClass, classify, representatives
from .spaces import SPACES


def rungs(names: list[str]) -> list[str]:
    """The rungs named, each known and with a search space; in the order given, once each."""
    out = []
    for name in names:
        impl = usage.names([name])[0]
        if impl.name not in SPACES:
            raise UsageError(f"{impl.name} has no search space to tune; rungs with one: "
                             f"{', '.join(SPACES)} (gemmlab.tune.spaces)")
        if impl.name not in out:
            out.append(impl.name)
    return out


def output(path: Path | None, force: bool) -> None:
    if path is not None:
        usage.new_file(path, force)


def by_class(given: list[tuple[int, int, int]], sms: int) -> dict[ShapeClass, tuple[int, int, int]]:
    """The shape to tune each class at: those given (one per class), else one representative per class."""
    if not given:
        return representatives()
    out: dict[ShapeClass, tuple[int, int, int]] = {}
    for shape in given:
        cls = classify(*shape, sms)
        if cls in out:
            raise UsageError(f"--shape {'x'.join(map(str, shape))} and {'x'.join(map(str, out[cls]))} are "
                             f"both in shape class {cls.key} on {sms} SMs; give one shape per class")
        out[cls] = shape
    return {c: out[c] for c in CLASSES if c in out}


def table(record: dict) -> Table:
    t = Table(title=f"gemmlab tune {' '.join(record['rungs'])} on {record['gpu']['name']} "
                    f"({record['gpu']['sm_count']} SMs)")
    for col in ("class", "M×N×K", "timed calls", "cuBLAS ms", "winner", "ms", "vs cuBLAS",
                "timed / failed / rejected"):
        t.add_column(col, overflow="fold")
    for key, entry in record["classes"].items():
        verdicts = [c["verdict"] for c in entry["candidates"]]
        counts = " / ".join(str(verdicts.count(v)) for v in ("timed", "failed", "rejected"))
        w = entry["winner"]
        cublas = f"{entry['cublas_ms']:.3f}" if entry["cublas_ms"] else "-"
        if w:
            ratio = f"{w['ratio_vs_cublas']:.2f}×" if w.get("ratio_vs_cublas") else "-"
            t.add_row(key, "×".join(map(str, entry["shape"])), str(entry["iters"]), cublas,
                      escape(f"{w['rung']} {w['launch']}: {w['kernel']}"), f"{w['median_ms']:.3f}", ratio,
                      counts)
        else:
            t.add_row(key, "×".join(map(str, entry["shape"])), str(entry["iters"]), cublas,
                      "[red]none verified[/red]", "-", "-", counts)
    return t
