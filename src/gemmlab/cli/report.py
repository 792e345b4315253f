"""`gemmlab report`: a results record as Markdown and plots, into docs/ and README when asked."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..bench.results import LATEST
from ..ui import usage
from ..ui.errors import UsageError, guarded
from .common import app, console, results_record


@app.command()
@guarded
def report(
    record_path: Annotated[Path, typer.Argument(help="a results JSON (bench, study or sweep)",
                                                metavar="RECORD")] = LATEST,
    out: Annotated[Path | None, typer.Option(
        help="folder for the Markdown and PNGs (default: RECORD's name + '-report', beside it)")] = None,
    docs: Annotated[bool, typer.Option("--docs", help="write them into docs/, which README shows")] = False,
    readme: Annotated[Path | None, typer.Option(
        help="also rewrite this file's block for the record (e.g. README.md)")] = None,
) -> None:
    """Markdown table and plots from a results JSON; docs/ and README only when asked."""
    from ..bench import report as rep

    record, kind = results_record(record_path)
    if docs and out:
        raise UsageError("--docs and --out exclude each other: --docs means --out docs")
    beside = record_path.parent / f"{record_path.stem}-report"
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
