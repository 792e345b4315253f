"""What every command shares: the Typer app and its root options, the two consoles, the option
types several commands take, the progress bar, and notes shown by more than one command."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from .. import __version__, runtime
from ..exits import Exit
from ..measure.timing import SMALL_ITERS, SMALL_WORK
from ..ui import usage
from ..ui.errors import UsageError, one_line_parse_errors


def _plain_help_placeholders() -> None:
    """Help placeholders that read as a user types them: no type column (`<bool>`, `<list[str]>`)
    beside flags and arguments, an option's own metavar (`MxNxK`) where it has one, and a required
    argument in the usage line as `NAME`, as click writes it, not `{NAME}`. Typer versions without
    these hooks are left as they are."""
    from typer.core import TyperArgument, TyperOption

    if not hasattr(TyperOption, "display_type_rich"):  # pragma: no cover
        return
    plain = TyperOption.display_type_rich

    def option_placeholder(self, ctx):
        if self.is_flag:
            return None
        return self.metavar if self.metavar is not None else plain(self, ctx)

    TyperOption.display_type_rich = option_placeholder
    TyperArgument.display_type_rich = lambda self, ctx: None
    if hasattr(TyperArgument, "_usage_display_name"):
        braced = TyperArgument._usage_display_name

        def usage_name(self) -> str:
            name = braced(self)
            if self.required and name.startswith("{"):
                name = self.display_name_raw + name[len(self.display_name_raw) + 2:]
            return name

        TyperArgument._usage_display_name = usage_name


_plain_help_placeholders()
one_line_parse_errors()


def progress_bar(con: Console, lines_when_piped: bool = False):
    """A rich progress bar and the `progress(message, done, total)` callback that drives it. Where
    the output is not a terminal rich draws nothing; with `lines_when_piped`, a plain line then
    every `PIPED_EVERY_S` seconds (and the last), so that a long run piped to a file says it lives."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if lines_when_piped and not con.is_terminal:
        return contextlib.nullcontext(), _progress_lines(con)
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=con, transient=True)
    task = bar.add_task("starting", total=None)

    def update(message: str, done: int, total: int) -> None:
        bar.update(task, description=message, completed=done, total=total)

    return bar, update


#: How often a piped progress line is printed, at most.
PIPED_EVERY_S = 10.0


def _progress_lines(con: Console):
    """`progress_bar`'s callback where the output is piped: "message (done/total, elapsed)" lines."""
    import time

    start, last = time.monotonic(), [float("-inf")]

    def update(message: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= PIPED_EVERY_S or (total and done >= total):
            last[0] = now
            of = f"{done}/{total}, " if total else ""
            con.print(f"{message} ({of}{now - start:.0f} s)", highlight=False, markup=False)

    return update


def table(title: str, columns, **options) -> Table:
    """A table whose cells fold rather than cut what they hold (kernel labels carry the knobs that
    tell launches apart)."""
    out = Table(title=title, **options)
    for col in columns:
        out.add_column(col, overflow="fold")
    return out


def results_record(path: Path) -> tuple[dict, str]:
    """The results record at `path` and its kind (`bench.results.kind`); a usage error where the
    file is none."""
    from ..bench import results

    record = usage.json_file(path)
    try:
        return record, results.kind(record)
    except results.SchemaError as exc:
        raise UsageError(f"{path} is not a results record: {exc}") from None


#: The timing rule for small shapes, in words (measure.timing.timed_calls decides it).
SMALL_RULE = f"at least {SMALL_ITERS} below {round(SMALL_WORK ** (1 / 3))}³"


# `gemmlab` alone is handled by `_options`, the same under every typer and click version.
app = typer.Typer(add_completion=False, invoke_without_command=True, pretty_exceptions_show_locals=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="LeetGPU's FP32 matrix multiplication: the ladder, the judge, the benchmark.")


def _width(stream) -> int | None:
    """A terminal's own width (or $COLUMNS); 200 columns for logs, so tables do not fold."""
    return None if stream.isatty() or os.environ.get("COLUMNS") else 200


console = Console(width=_width(sys.stdout))


#: Where a `--json` command's tables and messages go, so that stdout holds only JSON.
side = Console(stderr=True, width=_width(sys.stderr))


Names = Annotated[list[str] | None, typer.Argument(
    help="implementation names, aliases, steps (3.2: chapter 3, step 2), or old rung numbers for "
         "every implementation that had one (default: all; gemmlab list shows them)",
    metavar="NAME|STEP", show_default=False)]


AsJson = Annotated[bool, typer.Option("--json", help="print the result as JSON on stdout; "
                                                     "messages go to stderr")]


#: The largest seed taken: 32 bits, as a fresh one is (`measure.inputs.fresh_seed`), so that a seed
#: and the ones derived from it (+1 for B, +1000 for the timed calls) fit torch's generator.
SEED_MAX = 2**32 - 1

Seed = Annotated[int | None, typer.Option(min=0, max=SEED_MAX,
                                          help="seed of the inputs (default: fresh, and reported)")]


def messages_console(as_json: bool) -> Console:
    """Where a command's messages go: stderr under --json, so that stdout holds the document alone."""
    return side if as_json else console


def _show_version(value: bool) -> None:
    if value:
        print(f"gemmlab {__version__}")
        raise typer.Exit(int(Exit.PASSED))


@app.callback()
def _options(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                          help="print the version and exit")] = False,
) -> None:
    """LeetGPU's FP32 matrix multiplication: the ladder, the judge, the benchmark."""
    if ctx.invoked_subcommand is None:
        # No command: the help, on stderr, and exit 2 (a usage error), as ruff and uv do; -h is 0.
        with contextlib.redirect_stdout(sys.stderr):
            typer.echo(ctx.get_help(), err=True, nl=False)
        raise typer.Exit(int(Exit.USAGE))
    runtime.configure()  # before any command touches CUDA or Triton


#: Why a tf32 implementation that runs on a CPU (torch-tf32) shows fp32's figures there: torch's
#: TF32 switch is cuBLAS's; the CPU's matmul has no TF32 and ignores it (a test holds this).
TF32_ON_CPU = ("{name} on a CPU computes in FP32, so its figures are torch's: TF32 is the GPU "
               "tensor cores' format, and torch's CPU matmul ignores the TF32 switch")


def tf32_on_cpu_note(name: str, precision: str, platform: str) -> str | None:
    return TF32_ON_CPU.format(name=name) if precision == "tf32" and platform == "cpu" else None


def record_notice(names: list[str] | None, ui: Console) -> None:
    """One line where `default` is among `names` (None: every implementation) and this GPU has no
    tune record of its own: what it runs instead, and the command that makes one."""
    from ..policy import default as tuned_default

    if (names is None or tuned_default.NAME in names) and (line := tuned_default.notice()):
        ui.print(f"[yellow]{line}[/yellow]", highlight=False)
