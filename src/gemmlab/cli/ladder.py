"""`gemmlab list` and `gemmlab explain`: the ladder, and what each implementation is."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from .. import registry
from ..tune import default as tuned_default
from ..ui import listing, machine, usage
from ..ui.errors import guarded
from .common import AsJson, app, console


@app.command("list")
@guarded
def list_(as_json: AsJson = False) -> None:
    """The registry: every rung, its family, precision class and idea."""
    if as_json:
        machine.emit([machine.implementation(i) for i in registry.by_rung()])
        return
    for line in listing.lines(registry.by_rung()):
        console.print(line)


def facts_table(impl: registry.Implementation) -> Table:
    facts = Table(show_header=False, title=f"{impl.name}: facts")
    facts.add_column(overflow="fold")  # kernel labels carry the knobs that tell launches apart: never cut
    facts.add_column(overflow="fold")
    facts.add_row("family / rung / precision", f"{impl.family} / {impl.rung} / {impl.precision}")
    facts.add_row("needs", str(impl.needs))
    facts.add_row("sources", ", ".join(impl.sources))
    if impl.tile:
        r, c, s = impl.tile
        facts.add_row("tile of C, reduction step", f"{r}×{c}, {s}")
        facts.add_row("FLOP per global byte per tile", f"{impl.intensity:.1f}")
    if impl.name == tuned_default.NAME:
        facts.add_row("tune record", tuned_default.plan()[1])
        facts.add_row("builds", tuned_default.build_check())
    for launch in impl.launches:
        facts.add_row(f"kernel {impl.launch_label(launch)}",
                      f"block {launch.block}, tile {launch.tile}; "
                      + (f"when {launch.requires}" if launch.when else "always (fallback)"))
    return facts


@app.command()
@guarded
def explain(
    name: Annotated[str, typer.Argument(help="an implementation name, or a rung number for all "
                                              "the implementations on that rung",
                                         metavar="NAME|RUNG")],
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
        if impl.doc not in shown:  # the implementations of one rung may share their notes
            console.print(Markdown(impl.explanation()))
            shown.add(impl.doc)
        console.print(facts_table(impl))
