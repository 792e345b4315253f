"""`gemmlab list`: the ladder chapter by chapter, one row per implementation that reads at 80
columns, every chapter's columns as wide as the others'; what would widen a row (the tune record,
the aliases) is said once in a footer."""

from __future__ import annotations

from collections.abc import Iterable

from rich import box
from rich.table import Table
from rich.text import Text

from .. import registry
from ..policy import default as tuned_default

#: The columns beside the idea, with the header each shows.
HEADER = ("step", "name", "family", "precision", "idea")


def tables(impls: Iterable[registry.Implementation]) -> list[Table]:
    """A table per chapter that holds any of `impls`, in reading order: no vertical rules, two
    spaces between cells, the first four columns as wide in every chapter, the idea what is left."""
    chosen = {impl.name for impl in impls}
    cells = {impl.name: (impl.ref or "", impl.name, str(impl.family), str(impl.precision))
             for impl in registry.reading_order() if impl.name in chosen}
    widths = [max(len(h), *(len(row[i]) for row in cells.values())) for i, h in enumerate(HEADER[:4])]
    out = []
    for chapter in registry.CHAPTERS:
        rows = [impl for impl in registry.in_chapter(chapter) if impl.name in cells]
        if not rows:
            continue
        t = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True,
                  show_header=not out, title=chapter.label, title_justify="left", title_style="bold")
        for label, width in zip(HEADER, widths, strict=False):
            t.add_column(label, no_wrap=True, min_width=width)
        t.add_column(HEADER[-1], ratio=1, overflow="fold")  # folds only a word longer than the column
        for impl in rows:
            t.add_row(*cells[impl.name], Text(impl.summary))
        out.append(t)
    return out


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
    lines.append("gemmlab explain NAME|STEP: its idea, sources and launches; --json: every field")
    return lines


def lines(impls: Iterable[registry.Implementation]) -> list:
    """What `gemmlab list` prints, in order: the title, a table per chapter, then each footer
    line as plain text."""
    impls = list(impls)
    return [Text("gemmlab implementations, chapter by chapter", style="bold"), *tables(impls),
            *(Text(line) for line in footer(impls))]


#: The tag of README's generated reading order (`gemmlab list --readme README.md` writes it).
READING_ORDER_TAG = "chapters"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def reading_order_markdown(package: str = "src/gemmlab") -> str:
    """The ladder in reading order as Markdown, for README's `chapters` block: each chapter's
    title and summary, then a row per step with its idea, its notes (linked from the repository's
    root; `package` is where the package lies)."""
    out: list[str] = []
    for chapter in registry.CHAPTERS:
        out += [f"**{chapter.label}.** {_cell(chapter.summary)}", "",
                "| step | name | idea | notes |", "|---|---|---|---|"]
        for impl in registry.in_chapter(chapter):
            idea = impl.summary + (f" (a build of `{impl.variant_of}`'s source)" if impl.variant_of else "")
            doc = impl.doc.rsplit("/", 1)[-1]
            out.append(f"| {impl.ref or '–'} | `{impl.name}` | {_cell(idea)} | "
                       f"[{doc}]({package}/{impl.doc}) |")
        out.append("")
    return "\n".join(out)
