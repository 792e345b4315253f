"""Reading the ladder: `gemmlab tour`, `gemmlab show` and `gemmlab diff` in a terminal, `gemmlab book`
as a static site (no server: open its index.html)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..ui import usage
from ..ui.errors import CannotRun, UsageError, guarded
from . import common
from .common import app, console

One = Annotated[str, typer.Argument(help="an implementation name or alias (gemmlab list shows them)",
                                    metavar="NAME")]


def _say(text: str, **style) -> None:
    """A line as it is: no rich markup, no highlighting of numbers and paths."""
    console.print(text, highlight=False, markup=False, **style)


@app.command()
@guarded
def tour(
    at: Annotated[str | None, typer.Option("--at", metavar="NAME",
                                           help="where you are: shows what comes next from there")] = None,
) -> None:
    """The path through the ladder, chapter by chapter, and the next step."""
    from ..book import chapters
    from ..book.site import next_steps

    here = usage.one(at) if at else None
    for chapter in chapters.chapters():
        head = f"{chapter.number}. {chapter.title}" if chapter.number is not None else chapter.title
        console.print(f"[bold]{head}[/bold]", highlight=False)
        for impl in chapter.members:
            mark = "→" if impl is here else " "
            original = chapters.variant_of(impl)
            also = f" (a build of {original.name})" if original else ""
            _say(f" {mark} {chapters.reference(impl):>4} {impl.name:<18} {impl.precision:<6} "
                 f"{impl.summary}{also}")
    console.print()
    if here is None:
        console.print("[bold]Next:[/bold]")
        for n, step in enumerate(next_steps(chapters.reading_order()[0]), 1):
            _say(f"  {n}. {step['text']}: {step['command']}")
        _say("  The whole book, offline: gemmlab book --open")
        return
    after = chapters.following(here)
    if after is None:
        _say(f"{here.name} is the last page; judge your own: gemmlab new, then gemmlab judge")
        return
    where = chapters.reference(after) or "a baseline:"  # the baselines have no step
    console.print(f"[bold]Next:[/bold] {where} {after.name} — {after.summary}", highlight=False)
    _say(f"  what it changes: gemmlab diff {here.name} {after.name}")
    _say(f"  its notes and source: gemmlab explain {after.name}; gemmlab show {after.name}")


@app.command()
@guarded
def show(
    name: Annotated[str, typer.Argument(help="an implementation name, alias or rung number", metavar="NAME|RUNG")],
    all_: Annotated[bool, typer.Option("--all", help="every source it is built from, headers and pre-passes too")] = False,
) -> None:
    """Print an implementation's source, highlighted."""
    from rich.syntax import Syntax

    from ..book import sources

    shown: set[str] = set()
    for impl in usage.names([name]):
        every = sources.with_headers(list(impl.sources))
        kernels = [p for p in impl.sources if p.endswith(".cu")]
        if len(kernels) > 1 and not all_:  # a dispatcher: its first source is only where no other path holds
            _say(f"{impl.name} picks a kernel per call among {len(kernels)} sources (gemmlab explain "
                 f"{impl.name}: the conditions, in order); below, {sources.primary(impl)} alone")
        paths = every if all_ else [p for p in [sources.primary(impl)] if p]
        for path in paths:
            if path in shown:
                continue
            shown.add(path)
            console.rule(f"{impl.name}: {path}")
            console.print(Syntax(sources.read(path), sources.lexer_name(path), line_numbers=True,
                                 word_wrap=False, theme="ansi_dark"))
        rest = [p for p in every if p not in shown]
        if rest and not all_:
            _say(f"also built from: {', '.join(rest)} (gemmlab show {impl.name} --all)")


@app.command()
@guarded
def diff(
    a: One,
    b: One,
    inspect: Annotated[bool, typer.Option(help="compile both for their register, shared-memory and SASS facts "
                                                "(no GPU needed)")] = True,
) -> None:
    """Two implementations' sources as a diff, then their facts side by side."""
    from rich.syntax import Syntax

    from ..book import facts, sources

    first, second = usage.one(a), usage.one(b)
    text = sources.unified(first, second)
    changes = sources.launch_changes(first, second)
    if text:
        console.print(Syntax(text, "diff", word_wrap=False))
    else:
        _say(f"{first.name} and {second.name} are built from one source, {sources.primary(first)}")
    if changes:
        _say("the main launch's build (a dispatcher's: the one it runs at the performance shape): " + ", ".join(changes))
    added, dropped = sources.other_files(first, second)
    if added or dropped:
        _say(f"sources {second.name} adds: {', '.join(added) or 'none'}; "
             f"drops: {', '.join(dropped) or 'none'}")
    records = facts.load_records(facts.default_record_paths())
    if not records.kinds():
        _say(facts.no_records_line())
    inspected, why = facts.inspect_all([first, second]) if inspect else ({}, "")
    rows = [dict(facts.fact_rows(i, records, inspected.get(i.name))) for i in (first, second)]
    measured = records.ladder or records.sweep or records.random
    table = common.table("facts" + (f" (figures measured on the {measured['device']['name']}, "
                                    f"{measured['date'][:10]})" if measured else ""), ("", first.name, second.name))
    for key in dict.fromkeys([*rows[0], *rows[1]]):
        left, right = rows[0].get(key, "-"), rows[1].get(key, "-")
        style = None if left == right else "bold"
        table.add_row(key, left, right, style=style)
    console.print(table)
    if why:
        _say(f"no compiler facts: {why}", style="yellow")


#: Where the book goes by default: under results/, which git ignores.
BOOK_OUT = Path("results/book")


def _existing(paths: list[Path] | None, option: str) -> list[Path]:
    for path in paths or []:
        if not path.is_file():
            raise UsageError(f"{option} {path}: no such file")
    return paths or []


@app.command()
@guarded
def book(
    out: Annotated[Path, typer.Option("--out", "-o", metavar="DIR",
                                      help="folder to write the site into (made if missing)")] = BOOK_OUT,
    record: Annotated[list[Path] | None, typer.Option(
        "--record", metavar="RECORD", help="a results record to show (repeatable; default: the committed "
                                           "results/h200-*.json)")] = None,
    judged: Annotated[list[Path] | None, typer.Option(
        "--judged", metavar="FILE", help="a gemmlab judge --json record to show beside the ladder (repeatable)")] = None,
    inspect: Annotated[bool, typer.Option(help="compile and disassemble every CUDA rung for its facts "
                                                "(no GPU needed; about a minute)")] = True,
    open_: Annotated[bool, typer.Option("--open", help="open index.html in a browser when done")] = False,
) -> None:
    """Write the ladder as a static site: a page per rung (notes, source, diff from the rung before, figures,
    SASS facts, a diagram), pages per precision class, the sweep, your judged solutions."""
    try:
        import jinja2  # noqa: F401
        import markdown_it  # noqa: F401
        import pygments  # noqa: F401

        from ..book import site
    except ImportError as exc:
        raise CannotRun(f"the book needs Jinja2, Pygments and markdown-it-py ({exc}): pip install -e .") from None
    from ..book import facts

    usage.out_folder(out)
    if out.exists() and any(out.iterdir()) and not (out / "index.html").is_file():
        raise UsageError(f"{out} holds files that are not a book; give an empty or new folder")
    records = facts.load_records(_existing(record, "--record") or facts.default_record_paths())
    judged = _existing(judged, "--judged")
    if not records.kinds():
        console.print(f"[yellow]{facts.no_records_line()}[/yellow]", highlight=False)
    shown = [(path, site.judged_record(path)) for path in judged]
    the_book = site.Book(records, shown)
    bar, update = common.progress_bar(console, lines_when_piped=True)
    with bar:
        if inspect:
            the_book.inspected, the_book.inspect_note = facts.inspect_all(
                site.chapters.reading_order(), update)
        else:
            the_book.inspect_note = "not gathered for this build (gemmlab book --no-inspect)"
        pages = site.build(the_book, out, update)
    if the_book.inspect_note and inspect:
        console.print(f"[yellow]no inspect facts:[/yellow] {the_book.inspect_note}")
    index = (out / "index.html").resolve()
    console.print(f"wrote {len(pages)} pages into {out}; open {index}")
    if open_:
        import webbrowser

        webbrowser.open(index.as_uri())
