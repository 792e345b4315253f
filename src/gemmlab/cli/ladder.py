"""`gemmlab list`, `gemmlab explain`, `gemmlab inspect` and `gemmlab glossary`: the ladder, what
each implementation is, what the compiler made of its kernels (no GPU needed), and what the words
mean."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from .. import docblocks, registry, walk
from ..book.facts import at_shape
from ..policy import default as tuned_default
from ..ui import listing, machine, usage
from ..ui.errors import CannotRun, UsageError, guarded
from . import common
from .common import AsJson, Names, app, console, messages_console, side


@app.command("list")
@guarded
def list_(
    as_json: AsJson = False,
    readme: Annotated[Path | None, typer.Option(
        help="instead, rewrite this file's reading-order block (<!-- chapters:begin --> … end), "
             "e.g. README.md")] = None,
) -> None:
    """The registry chapter by chapter: every step, its family, precision class and idea."""
    if readme is not None:
        if as_json:
            raise UsageError("--readme writes the reading order into a file; --json prints the list")
        text = usage.block_file(readme, listing.READING_ORDER_TAG)
        readme.write_text(docblocks.replace(text, listing.reading_order_markdown(),
                                            listing.READING_ORDER_TAG))
        console.print(f"wrote {readme}")
        return
    if as_json:
        machine.emit([machine.implementation(i) for i in registry.reading_order()])
        return
    for line in listing.lines(registry.reading_order()):
        console.print(line)


def facts_table(impl: registry.Implementation):
    facts = common.table(f"{impl.name}: facts", ("", ""), show_header=False)
    facts.add_row("chapter / step", f"{impl.chapter.label} / {impl.step_label}")
    facts.add_row("family / precision", f"{impl.family} / {impl.precision}")
    if impl.variant_of:
        facts.add_row("variant of", f"{impl.variant_of}: its source, built with other settings")
    facts.add_row("needs", impl.needs.short)  # the GPUs it runs on, not its tier's features
    facts.add_row("sources", ", ".join(impl.sources))
    if impl.tile:
        r, c, s = impl.tile
        facts.add_row("tile of C, reduction depth", f"{r}×{c}, {s}")
        facts.add_row("FLOP per global byte per tile", f"{impl.intensity:.1f}")
    if impl.name == tuned_default.NAME:
        facts.add_row("tune record", tuned_default.plan()[1])
        if line := tuned_default.notice():
            facts.add_row("this GPU", line)
        facts.add_row("builds", tuned_default.build_check())
    for launch in impl.launches:
        facts.add_row(f"kernel {impl.launch_label(launch)}",
                      f"block {launch.block}, tile {launch.tile}; "
                      + (f"when {launch.precondition}" if launch.when else "always (fallback)"))
    return facts


@app.command(cls=usage.ShapeCommand)
@guarded
def explain(
    name: Annotated[str, typer.Argument(help="an implementation name, a step (3.2: chapter 3, "
                                              "step 2), or an old rung number for all the "
                                              "implementations that had it",
                                         metavar="NAME|STEP")],
    as_json: AsJson = False,
    shape: Annotated[str | None, typer.Option("--shape", metavar=usage.SHAPE_METAVAR,
        help=f"instead, the launch a call of this shape runs and the rule that chose it, {usage.SHAPE_HELP}")] = None,
    lab_notes: Annotated[bool, typer.Option("--notes", help="also the lab notes: the predictions, the "
                                            "measurements and what was tried")] = False,
) -> None:
    """The idea behind an implementation, its data path, intensity and preconditions (the lesson;
    --notes adds the lab notes after it)."""
    from rich.markdown import Markdown  # markdown-it, a tenth of a second: only where it renders

    if shape is not None and lab_notes:
        raise UsageError("--shape and --notes exclude each other: --shape names the launch a call runs, "
                         "--notes adds the lab notes to a rung's explanation")
    impls = usage.names([name])
    if shape is not None:
        picked = [at_shape(i, usage.parse_shape(shape)) for i in impls]
        if as_json:
            machine.emit(picked)
            return
        for p in picked:
            console.print(at_shape_text(p), highlight=False, markup=False)
        return
    if as_json:
        machine.emit([machine.explanation(i) for i in impls])
        return
    from ..book import glossary

    shown: set[str] = set()
    for impl in impls:
        if impl.doc not in shown:  # the variants of one source may share their notes
            lesson, lab = walk.lesson_and_lab(impl)
            text = lesson + lab if lab_notes else lesson
            console.print(Markdown(text))
            if lab and not lab_notes:
                console.print(f"Lab notes (predictions, measurements, what was tried): gemmlab explain "
                              f"{impl.name} --notes", highlight=False, markup=False)
            used = glossary.find(text)
            if used:
                console.print("Terms (gemmlab glossary TERM): " + ", ".join(t.names[0] for t in used),
                              highlight=False, markup=False)
            shown.add(impl.doc)
        console.print(facts_table(impl))


@app.command("glossary")
@guarded
def glossary_cmd(
    term: Annotated[str | None, typer.Argument(help="a term (FFMA, wave, split-K, …); none: every term",
                                               metavar="TERM")] = None,
) -> None:
    """What the words of the pages and explain mean: SASS instructions, waves, split-K, TMA, the
    shape classes, the sweep's labels."""
    from ..book import glossary

    if term is None:
        chosen = list(glossary.terms())
    else:
        found = glossary.lookup(term)
        if found is None:
            near = glossary.closest(term)
            raise UsageError(f"no glossary entry for {term!r}" + (f" (did you mean {near!r}?)" if near else "")
                             + "; the terms: " + ", ".join(t.names[0] for t in glossary.terms()))
        chosen = [found]
    for t in chosen:
        console.print(f"[bold]{escape(' | '.join(t.names))}[/bold]\n  {escape(t.text)}", highlight=False)


def at_shape_text(p: dict) -> str:
    where = "×".join(map(str, p["shape"]))
    if p["launch"] is None:
        return f"{p['name']} at {where}: {p.get('why') or 'no launch holds'}"
    on = p["gpu"] if p["here"] else f"{p['gpu']} ({p['sms']} SMs, its tune record's GPU: no GPU here)"
    skipped = p["passed_over"]
    passed = (f"passed over {len(skipped)} before it: {', '.join(skipped[:6])}{', …' if len(skipped) > 6 else ''}"
              if skipped else "the first in its chain")
    return (f"{p['name']} at {where} on {on}: runs {p['launch']}, {p['kernel']}\n"
            f"  because: {p['rule']}\n  {passed}")


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

    named = usage.names(names)
    impls = [i for i in named if i.launches]
    arch = usage.arch(arch, nvrtc_archs())
    kernel_less = [i.name for i in named if not i.launches]
    if not impls:
        raise UsageError(f"{', '.join(kernel_less)} {'has' if len(kernel_less) == 1 else 'have'} no CUDA "
                         "kernel to inspect; CUDA rungs: gemmlab list")
    if kernel_less and names:
        side.print(f"no CUDA kernel to inspect: {', '.join(kernel_less)}", highlight=False)
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
