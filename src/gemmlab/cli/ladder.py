"""`gemmlab list` and `gemmlab explain`: the ladder, and what each implementation is."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from .. import docblocks, registry
from ..tune import default as tuned_default
from ..ui import listing, machine, usage
from ..ui.errors import UsageError, guarded
from .common import AsJson, app, console


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


def facts_table(impl: registry.Implementation) -> Table:
    facts = Table(show_header=False, title=f"{impl.name}: facts")
    facts.add_column(overflow="fold")  # kernel labels carry the knobs that tell launches apart: never cut
    facts.add_column(overflow="fold")
    facts.add_row("chapter / step", f"{impl.chapter.label} / {impl.ref or impl.name} (rung {impl.rung} "
                                    "before chapters)")
    facts.add_row("family / precision", f"{impl.family} / {impl.precision}")
    if impl.variant_of:
        facts.add_row("variant of", f"{impl.variant_of}: its source, built with other settings")
    facts.add_row("needs", impl.needs.short)  # the GPUs it runs on, not its tier's features
    facts.add_row("sources", ", ".join(impl.sources))
    if impl.tile:
        r, c, s = impl.tile
        facts.add_row("tile of C, reduction step", f"{r}×{c}, {s}")
        facts.add_row("FLOP per global byte per tile", f"{impl.intensity:.1f}")
    if impl.name == tuned_default.NAME:
        facts.add_row("tune record", tuned_default.plan()[1])
        if line := tuned_default.notice():
            facts.add_row("this GPU", line)
        facts.add_row("builds", tuned_default.build_check())
    for launch in impl.launches:
        facts.add_row(f"kernel {impl.launch_label(launch)}",
                      f"block {launch.block}, tile {launch.tile}; "
                      + (f"when {launch.requires}" if launch.when else "always (fallback)"))
    return facts


@app.command()
@guarded
def explain(
    name: Annotated[str, typer.Argument(help="an implementation name, a step (3.2: chapter 3, "
                                              "step 2), or an old rung number for all the "
                                              "implementations that had it",
                                         metavar="NAME|STEP")],
    as_json: AsJson = False,
) -> None:
    """The idea behind an implementation, its data path, intensity and preconditions."""
    from rich.markdown import Markdown  # markdown-it, a tenth of a second: only where it renders

    impls = usage.names([name])
    if as_json:
        machine.emit([machine.explanation(i) for i in impls])
        return
    shown: set[str] = set()
    for impl in impls:
        if impl.doc not in shown:  # the variants of one source may share their notes
            console.print(Markdown(impl.explanation()))
            shown.add(impl.doc)
        console.print(facts_table(impl))
