"""The `gemmlab` command line: list, explain, check, inspect, bench, report, study, sweep, judge, new."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from . import runtime

runtime.configure()

from . import registry  # noqa: E402  (after the Triton interpreter switch)
from .judge.cases import Case, fresh_seed, standard_cases  # noqa: E402
from .judge.runner import CaseResult, Judgement, judge  # noqa: E402

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="LeetGPU's FP32 matrix multiplication: the ladder, the judge, the benchmark.")
console = Console(width=None if sys.stdout.isatty() else 200)

Names = Annotated[list[str] | None, typer.Argument(help="implementation names (default: all)")]


def _names_or_exit(names: list[str] | None) -> list[registry.Implementation]:
    try:
        return registry.select(names)
    except registry.UnknownImplementation as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None


@app.command("list")
def list_() -> None:
    """The registry as a table."""
    table = Table(title="gemmlab implementations")
    for col in ("rung", "name", "family", "precision", "min cc", "idea", "sources"):
        table.add_column(col)
    for impl in registry.IMPLEMENTATIONS:
        table.add_row(str(impl.rung), impl.name, impl.family, impl.precision,
                      "{}.{}".format(*impl.min_cc), impl.summary, ", ".join(impl.sources))
    console.print(table)


@app.command()
def explain(name: str) -> None:
    """The idea behind one implementation, its data path, intensity and preconditions."""
    impl = _names_or_exit([name])[0]
    console.print(Markdown(impl.explanation()))
    facts = Table(show_header=False, title=f"{impl.name}: facts")
    facts.add_row("family / rung / precision", f"{impl.family} / {impl.rung} / {impl.precision}")
    if impl.tile:
        r, c, s = impl.tile
        facts.add_row("tile of C, reduction step", f"{r}×{c}, {s}")
        facts.add_row("FLOP per global byte per tile", f"{impl.intensity:.1f}")
    for launch in impl.launches:
        facts.add_row(f"kernel {launch.entry}{dict(launch.defines) or ''}",
                      f"block {launch.block}, tile {launch.tile}; "
                      + (f"when {launch.requires}" if launch.when else "always (fallback)"))
    console.print(facts)


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return "inf" if math.isinf(x) else f"{x:.2e}"


_STATUS = {"pass": "[green]pass[/green]", "fail": "[red]FAIL[/red]", "error": "[red]ERROR[/red]",
           "skip": "[yellow]skip[/yellow]"}


def judgement_table(j: Judgement) -> Table:
    table = Table(title=f"{j.name} ({j.precision}) on {j.device}")
    for col in ("case", "M×N×K", "seed", "result", "max abs", "norm max", "rel fro",
                "LeetGPU 1e-4 fails", "unwritten", "ms", "note"):
        table.add_column(col, overflow="fold")
    for r in j.results:
        f = r.figures
        table.add_row(
            r.case, "×".join(map(str, r.shape)), str(r.seed), _STATUS[r.status],
            _fmt(f and f.max_abs), _fmt(f and f.norm_max), _fmt(f and f.rel_fro),
            f"{f.leetgpu_violations}" if f else "-", f"{f.unwritten}" if f else "-",
            f"{r.seconds * 1e3:.2f}" if r.seconds is not None else "-",
            r.reason if r.status != "pass" else leetgpu_note(j, r),
        )
    return table


def leetgpu_note(j: Judgement, r: CaseResult) -> str:
    f = r.figures
    if f and f.leetgpu_violations:
        return f"fails LeetGPU's 1e-4 check on {f.leetgpu_violations} of {f.numel}"
    return ""


def select_cases(seed: int, groups: list[str] | None, shape: list[int] | None, perf: bool) -> list[Case]:
    if shape:
        m, n, k = shape
        return [Case(f"custom-{m}x{n}x{k}", "custom", (m, n, k), gpu_only=False)]
    cases = standard_cases(seed, perf=perf)
    if groups:
        cases = [c for c in cases if c.group in groups]
    return cases


@app.command()
def check(
    names: Names = None,
    seed: Annotated[int | None, typer.Option(help="base seed (default: fresh)")] = None,
    group: Annotated[list[str] | None, typer.Option(
        help="only these case groups: example, notes, leetgpu, edge, random, perf")] = None,
    shape: Annotated[tuple[int, int, int] | None, typer.Option(help="one custom M N K instead")] = None,
    perf: Annotated[bool, typer.Option(help="include the 8192×6144×4096 case (GPU)")] = True,
) -> None:
    """Judge implementations on every case; exit code 1 if any case fails."""
    impls = _names_or_exit(names)
    device = runtime.default_device()
    seed = fresh_seed() if seed is None else seed
    cases = select_cases(seed, group, list(shape) if shape else None, perf)
    console.print(f"device: {runtime.gpu_name()} · base seed {seed} · {len(cases)} cases")
    any_failed = False
    for impl in impls:
        ok, why = impl.can_run_on(device)
        if not ok:
            console.print(f"[yellow]{impl.name}: not run — {why}[/yellow]")
            continue
        with console.status(f"judging {impl.name}…"):
            j = judge(impl.name, impl.solve, impl.precision, cases, device, seed)
        console.print(judgement_table(j))
        any_failed |= bool(j.failed)
    raise typer.Exit(1 if any_failed else 0)


def main() -> None:  # pragma: no cover
    app()


def bench_table(record: dict) -> Table:
    m, n, k = record["shape"]
    table = Table(title=f"{record['device']['name']} · {m}×{n}×{k} · {record['timing']} · "
                        f"{record['iters']} iterations after {record['warmup']} warm-ups")
    for col in ("rung", "name", "precision", "kernel", "median ms", "min ms", "max ms",
                "TFLOP/s", "vs cuBLAS", "of peak", "result"):
        table.add_column(col, overflow="fold")
    for r in sorted(record["results"], key=lambda r: (r["rung"], r["name"])):
        if "median_ms" not in r:
            table.add_row(str(r["rung"]), r["name"], r["precision"], r.get("kernel") or "-",
                          "-", "-", "-", "-", "-", "-", f"[red]ERROR {r['reason']}[/red]")
            continue
        ratio = r["ratio_vs_cublas"]
        frac = r["fraction_of_peak"]
        table.add_row(
            str(r["rung"]), r["name"], r["precision"], r.get("kernel") or "-",
            f"{r['median_ms']:.3f}", f"{r['min_ms']:.3f}", f"{r['max_ms']:.3f}",
            f"{r['tflops']:.2f}", f"{ratio:.2f}×" if ratio else "-",
            f"{100 * frac:.0f}%" if frac else "-",
            "[green]pass[/green]" if r["passed"] else f"[red]FAIL {r['reason']}[/red]",
        )
    return table


@app.command()
def bench(
    names: Names = None,
    shape: Annotated[tuple[int, int, int] | None, typer.Option(help="M N K (default: 8192 6144 4096 on a GPU)")] = None,
    warmup: Annotated[int, typer.Option(min=0)] = 5,
    iters: Annotated[int, typer.Option(min=1)] = 10,
    flush_l2: Annotated[bool, typer.Option("--flush-l2", help="overwrite 256 MiB before each timed call")] = False,
    seed: Annotated[int | None, typer.Option()] = None,
    out: Annotated[Path, typer.Option(help="results folder")] = Path("results"),
    latest: Annotated[Path | None, typer.Option(help="also write the record here")] = None,
    csv: Annotated[Path | None, typer.Option(help="also write a CSV table here")] = None,
) -> None:
    """Time implementations side by side with cuBLAS; write JSON; exit 1 if any result is wrong."""
    from .bench import results
    from .bench.run import run

    if not runtime.has_gpu():
        console.print("[yellow]No CUDA GPU here: timing what runs on the CPU (torch, Triton "
                      "through its interpreter) at a small shape. These are CPU figures.[/yellow]")
    with console.status("benchmarking…") as status:
        record = run(names, shape, warmup, iters, flush_l2, seed, progress=status.update)
    for name, why in record["skipped"].items():
        console.print(f"[yellow]{name}: not run — {why}[/yellow]")
    path = results.save(record, out)
    if latest:
        latest.parent.mkdir(parents=True, exist_ok=True)
        latest.write_text(path.read_text())
    if csv:
        results.write_csv(record, csv)
    console.print(bench_table(record))
    console.print(f"results: {path}")
    raise typer.Exit(0 if all(r["passed"] for r in record["results"]) else 1)


@app.command()
def inspect(
    names: Names = None,
    arch: Annotated[str | None, typer.Option(help="target, e.g. sm_90a (default: the GPU's, or sm_90a)")] = None,
) -> None:
    """Registers, shared memory, stack, spills, SASS instruction mix and (on a GPU) occupancy."""
    from .bench.inspect import inspect_launches

    rows = inspect_launches(_names_or_exit(names), arch)
    table = Table(title=f"resources and SASS mix ({rows[0]['arch'] if rows else arch})")
    cols = ["name", "kernel", "threads", "regs", "smem B", "stack B", "spills", "FFMA", "LDS",
            "LDS.128", "LDG.128", "STG.128", "LDGSTS", "HMMA", "HGMMA", "BAR", "LDL/STL", "occupancy"]
    for col in cols:
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(*[str(r.get(c, "-")) for c in cols])
    console.print(table)
