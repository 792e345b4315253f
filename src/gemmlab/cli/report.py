"""`gemmlab report`: a results record as Markdown and plots, into docs/ and README when asked."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import committed
from ..bench.results import LATEST
from ..ui import usage
from ..ui.errors import UsageError, guarded
from .common import app, console


@app.command()
@guarded
def report(
    record_path: Annotated[Path | None, typer.Argument(
        help=f"a results JSON (bench, study or sweep); default: the committed {LATEST}",
        metavar="RECORD", show_default=False)] = None,
    out: Annotated[Path | None, typer.Option(
        help="folder for the Markdown and PNGs (default: RECORD's name + '-report', beside it)")] = None,
    docs: Annotated[bool, typer.Option("--docs", help="write them into docs/, which README shows")] = False,
    readme: Annotated[Path | None, typer.Option(
        help="also rewrite this file's block for the record (e.g. README.md)")] = None,
) -> None:
    """Markdown table and plots from a results JSON; docs/ and README only when asked."""
    from ..bench import report as rep
    from ..bench import results

    if record_path is None:
        record_path = committed.find(LATEST)
        if record_path is None:
            raise UsageError(f"no committed {LATEST} here (looked in {committed.root()}): give a RECORD")
    record = usage.json_file(record_path)
    try:
        kind = results.kind(record)
    except results.SchemaError as exc:
        raise UsageError(f"{record_path} is not a results record: {exc}") from None
    if docs and out:
        raise UsageError("--docs and --out exclude each other: --docs means --out docs")
    # beside the record, but never inside an installed package: for the copy it carries, in results/ here
    folder = Path("results") if committed.is_shipped(record_path) else record_path.parent
    beside = folder / f"{record_path.stem}-report"
    target = usage.out_folder(Path("docs") if docs else out or beside)
    if kind == "sweep":
        if readme and not record.get("random"):
            raise UsageError("a fixed-shape sweep has no README block; its plot is the report")
        text = usage.block_file(readme, "random") if readme else None
        with console.status("plotting the sweep…"):
            path = rep.plot_sweep(record, target, stem=record_path.stem)
            written = [path]
            if record.get("random"):
                ratios = rep.plot_random(record, target, stem=f"{record_path.stem}-ratios")
                block = rep.random_block(record, ratios)
                md = target / f"{record_path.stem}-summary.md"
                md.write_text(block)
                written += [ratios, md]
                if readme and text is not None:
                    readme.write_text(rep.replace_block(text, block, tag="random"))
                    written.append(readme)
        console.print("wrote " + ", ".join(map(str, written)))
        return
    tag = rep.block_tag(record)
    text = usage.block_file(readme, tag) if readme else None
    with console.status(f"writing {tag}.md and its plots into {target}…"):
        table, paths = rep.write_report(record, target, tag)
    if readme and text is not None:
        readme.write_text(rep.replace_block(text, table, tag=tag))
        paths.append(readme)
    console.print("wrote " + ", ".join(map(str, paths)))
