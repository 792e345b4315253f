"""`gemmlab book`: the ladder as a static site (no server: open its index.html)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..ui import usage
from ..ui.errors import CannotRun, UsageError, guarded
from . import common
from .common import app, console

#: Where the book goes by default: under results/, which git ignores.
DEFAULT_OUT = Path("results/book")


def _records(given: list[Path] | None):
    from ..book import facts

    for path in given or []:
        if not path.is_file():
            raise UsageError(f"--record {path}: no such file")
    return facts.load_records(given or facts.default_record_paths())


@app.command()
@guarded
def book(
    out: Annotated[Path, typer.Option("--out", "-o", metavar="DIR",
                                      help="folder to write the site into (made if missing)")] = DEFAULT_OUT,
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
    records = _records(record)
    if not records.kinds():
        console.print(f"[yellow]{facts.no_records_line()}[/yellow]", highlight=False)
    shown = []
    for path in judged or []:
        if not path.is_file():
            raise UsageError(f"--judged {path}: no such file")
        shown.append((path, site.judged_record(path)))
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
