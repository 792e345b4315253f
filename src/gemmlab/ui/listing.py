"""`gemmlab list`: one row per implementation that reads at 80 columns, and a footer.

Each row holds what fits beside a name: the rung, the family, the precision and
the idea, wrapped at spaces only. What would widen a row is said once below the
table instead: which tune record `default` dispatches by, and which
implementation each alias stands for here.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich import box
from rich.table import Table
from rich.text import Text

from .. import registry
from ..tune import default as tuned_default


def table(impls: Iterable[registry.Implementation]) -> Table:
    """No vertical rules and two spaces between cells: the idea column takes what is left."""
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True,
              title="gemmlab implementations", title_justify="left")
    t.add_column("rung", justify="right", no_wrap=True)
    t.add_column("name", no_wrap=True)
    t.add_column("family", no_wrap=True)
    t.add_column("precision", no_wrap=True)
    t.add_column("idea", ratio=1, overflow="fold")  # folds only a word longer than the column
    for impl in impls:
        t.add_row(str(impl.rung), impl.name, str(impl.family), str(impl.precision), Text(impl.summary))
    return t


def footer(impls: Iterable[registry.Implementation] = ()) -> list[str]:
    """The lines under the table: the tune record, the aliases, the optional toolchains the listed
    rungs need and this machine lacks, where to read more."""
    from ..langs import TOOLCHAINS

    lines = [f"{tuned_default.NAME}: dispatches by {tuned_default.plan()[1]}"]
    for alias in registry.ALIASES:
        lines.append(f"{alias} = {registry.resolve(alias)} on this machine")
    for family in registry.LANGUAGE_FAMILIES:
        names = [i.name for i in impls if i.family is family]
        if names and TOOLCHAINS[family].missing():
            lines.append(f"{', '.join(names)}: needs {TOOLCHAINS[family].extra}, not installed here")
    lines.append("gemmlab explain NAME|RUNG: its idea, sources and launches; --json: every field")
    return lines


def lines(impls: Iterable[registry.Implementation]) -> list:
    """What `gemmlab list` prints, in order: the table, then each footer line as plain text."""
    impls = list(impls)
    return [table(impls), *(Text(line) for line in footer(impls))]
