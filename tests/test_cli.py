"""The CLI commands run end to end (typer's test runner): output, help, labels and progress."""

from __future__ import annotations

import pytest
import typer

from gemmlab import __version__, registry
from gemmlab.cli import app, common
from tests.clitools import HAS_GPU, invoke, last_line

#: The judge command's help belongs to the judge's own rewrite.
OWN_COMMANDS = ("list", "explain", "check", "bench", "inspect", "report", "study", "sweep", "new",
                "export")


def test_list_shows_every_rung():
    result = invoke("list")
    assert result.exit_code == 0, result.output
    for impl in registry.IMPLEMENTATIONS:
        assert impl.name in result.output


def test_list_is_in_reading_order():
    # numbered steps chapter by chapter, then the unnumbered baselines, torch-tf32 beside torch
    rows = [line.split() for line in invoke("list").output.splitlines()
            if line.split() and registry.is_ref(line.split()[0])]
    refs = [tuple(map(int, cells[0].split("."))) for cells in rows]
    assert refs == sorted(refs) and [c[1] for c in rows] == [i.name for i in registry.reading_order() if i.ref]
    baselines = [line.split()[0] for line in invoke("list").output.splitlines()
                 if line.startswith(" ") and line.split() and line.split()[0] in ("torch", "torch-tf32")]
    assert baselines == ["torch", "torch-tf32"]


def test_explain():
    result = invoke("explain", "float4")
    assert result.exit_code == 0, result.output
    assert "N % 4 == 0" in result.output and "float4_tiled" in result.output


def test_explain_at_a_shape_names_the_launch_that_runs_and_the_rule_that_chose_it():
    """`explain NAME --shape MxNxK` (issue 53): the launch a call of that shape runs (here the one
    the dispatcher itself selects: `Implementation.dispatch` on a GPU), its kernel, the precondition
    that chose it and what was passed over; without a GPU, on the tune record's GPU. JSON too; a
    shape outside the challenge is a usage error; a rung of one launch names it."""
    import json

    from tests.clitools import assert_one_line

    shown = json.loads(invoke("explain", "default", "--shape", "1348x248x6274", "--json").stdout)[0]
    assert shown["launch"] == "tail-few-waves-odd" and "SPLIT=2" in shown["kernel"]
    assert shown["rule"].startswith("shape class few-waves-odd") and shown["passed_over"][:2] == ["prelude short", "prelude gemv"]
    assert shown["sms"] == 132 or HAS_GPU
    text = " ".join(invoke("explain", "tf32", "--shape", "8192", "1024", "200").output.split())  # C 200 wide ≥ 3/4 of 256
    assert "runs split-in-place, wgmma_swap" in text and "each part at least 256 long" in text
    assert "runs any, naive" in invoke("explain", "naive", "--shape", "64x64x64").output
    assert "picks no CUDA launch" in invoke("explain", "torch", "--shape", "64x64x64").output
    assert_one_line(invoke("explain", "default", "--shape", "0x1x1"), 2, "outside the challenge's constraints")


@pytest.mark.skipif(HAS_GPU, reason="the GPU at hand is what a GPU machine plans for")
def test_explain_at_a_shape_without_a_gpu_or_a_record_says_so(monkeypatch):
    """Without a GPU, the tune record's GPU is the one source of what to plan for; with none
    installed, `explain --shape` says it cannot tell, naming no GPU of its own."""
    from gemmlab.cli import ladder
    from gemmlab.policy import default

    monkeypatch.setattr(default, "plan", lambda: (None, "no record"))
    answer = ladder.at_shape(registry.get("default"), (1348, 248, 6274))
    assert answer["launch"] is None and "no tune record" in answer["why"] and "gpu" not in answer


def test_explain_takes_a_rung_number_and_labels_kernels_as_bench_does():
    result = invoke("explain", "7")
    assert result.exit_code == 0, result.output
    for name in ("float4", "float4-bk16", "float4-128"):
        assert f"{name}: facts" in result.output
    assert "kernel float4_tiled[BM=64,BK=32,UNROLL_K=32,MIN_BLOCKS=2,EXACT_TILES=1]" in result.output
    assert "{'" not in result.output  # no Python dicts
    assert result.output.count("float4: 16-byte memory operations") == 1  # the shared notes once


def test_check_passes_torch_and_marks_cuda_not_run():
    result = invoke("check", "torch", "naive", "--seed", "3", "--group", "notes")
    assert result.exit_code == 0, result.output
    assert "pass" in result.output
    if not HAS_GPU:
        assert "naive: not run" in result.output


def test_check_custom_shape():
    result = invoke("check", "torch", "--shape", "7", "9", "11")
    assert result.exit_code == 0, result.output
    assert "7×9×11" in result.output
    # the ms column is one wall-clock call: the table says a first call carries its set-up
    assert "includes its compile and set-up" in " ".join(result.output.split())


@pytest.mark.skipif(HAS_GPU, reason="the CPU's labels")
def test_check_says_triton_ran_through_its_interpreter():
    result = invoke("check", "triton", "--group", "example")
    assert result.exit_code == 0, result.output
    assert "triton (fp32) on cpu, through the Triton interpreter" in result.output


@pytest.mark.skipif(HAS_GPU, reason="the CPU's labels")
def test_cpu_bench_names_its_baseline_and_says_figures_are_indicative(tmp_path):
    result = invoke("bench", "torch", "triton", "--shape", "32", "32", "32", "--iters", "1",
                    "--warmup", "0", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "No CUDA GPU here: CPU figures, indicative only" in out
    assert "vs CPU torch" in out and "vs cuBLAS" not in out
    assert "Triton interpreter" in out and "indicative only" in out
    assert last_line(result) == "2 passed, 0 failed, 0 not run"


def test_cpu_report_names_its_baseline():
    from gemmlab.bench.report import markdown_table

    record = {"shape": [8, 8, 8], "device": {"name": "cpu"}, "timing": "host clock", "iters": 1,
              "warmup": 0, "date": "d", "platform": "cpu", "results": [
                  {"name": "triton", "family": "triton", "rung": 11, "precision": "fp32",
                   "kernel": None, "passed": False, "reason": "x"}]}
    md = markdown_table(record)
    assert "vs CPU torch" in md and "Triton interpreter" in md and "indicative only" in md


def test_progress_is_shown_for_each_long_step(monkeypatch):
    seen = []
    real = common.progress_bar

    def recording(con=None):
        bar, update = real(con)
        return bar, lambda message, done, total: (seen.append(message), update(message, done, total))

    monkeypatch.setattr(common, "progress_bar", recording)
    assert invoke("check", "torch", "--group", "example").exit_code == 0
    assert any(m.startswith("judging torch: example-2") for m in seen), seen
    seen.clear()
    assert invoke("inspect", "naive", "naive-fma").exit_code == 0
    assert [m for m in seen if m.startswith("compiling")] == [
        "compiling and disassembling naive", "compiling and disassembling naive-fma"]


def _commands():
    group = typer.main.get_command(app)
    return {name: group.commands[name] for name in OWN_COMMANDS}


@pytest.mark.parametrize("name", OWN_COMMANDS)
def test_every_option_and_argument_is_described(name):
    command = _commands()[name]
    assert command.help
    for param in command.params:
        assert getattr(param, "help", None), f"{name} {param.name} has no help"


@pytest.mark.parametrize("name", OWN_COMMANDS)
def test_help_placeholders_read_as_typed(name):
    result = invoke(name, "-h")
    assert result.exit_code == 0, result.output
    for odd in ("<bool>", "<list[", "<int,int,int>", "<str>"):
        assert odd not in result.output, (odd, result.output)


def test_shape_placeholder_and_version():
    text = " ".join(invoke("bench", "--help").output.replace("│", " ").split())
    assert "--shape MxNxK" in text and "8192x6144x4096 or 8192 6144 4096" in text
    result = invoke("--version")
    assert result.exit_code == 0 and result.output.strip() == f"gemmlab {__version__}"
    assert invoke("-h").exit_code == 0


def test_every_option_with_a_metavar_declares_its_own_name():
    """typer 0.27 (the H200 image) names an option after its metavar ('--GROUP', so '--group' is
    refused) unless the option's name is declared: every option with a metavar declares it."""
    import typing

    import typer

    from gemmlab.cli import app

    checked = 0
    for info in app.registered_commands:
        hints = typing.get_type_hints(info.callback, include_extras=True)
        for pname, hint in hints.items():
            for meta in getattr(hint, "__metadata__", ()):
                if isinstance(meta, typer.models.OptionInfo) and meta.metavar:
                    checked += 1
                    # In Annotated form typer keeps a leading "--name" as the default until it builds
                    # the command, then moves it to the declarations.
                    declared = (*meta.param_decls, meta.default)
                    assert f"--{pname.replace('_', '-')}" in declared, (info.callback.__name__, pname)
    assert checked >= 5


def test_the_command_list_wraps_each_description_at_the_terminal_not_mid_sentence():
    """`gemmlab -h` lists each command's first paragraph with its line breaks kept: each is one line
    in the app, so that the terminal alone wraps it; every command is listed."""
    from typer.testing import CliRunner

    from gemmlab.cli import HELP_ORDER, app

    for info in app.registered_commands:
        first = info.help.split("\n\n")[0]
        assert "\n" not in first and first.strip() == first, info.callback.__name__
    out = CliRunner().invoke(app, ["-h"], env={"COLUMNS": "200"}).output
    listed = [line.split("│")[1].split()[0] for line in out.splitlines() if line.startswith("│ ") and "│" in line[2:]]
    assert [x for x in listed if x in HELP_ORDER] == list(HELP_ORDER)


def test_accurate_is_the_fastest_fp32x3_rung_that_runs_here():
    from gemmlab import registry

    impl = registry.get("accurate")
    assert impl.precision == "fp32x3" and impl.can_run_on(registry._device())[0]
    expected = "wgmma-3xtf32" if registry.REGISTRY["wgmma-3xtf32"].can_run_on(registry._device())[0] \
        else "triton-presplit"
    assert impl.name == expected and registry.aliases_of(expected) == ["accurate"]
    result = invoke("list")
    assert f"accurate = {expected} on this machine" in result.output.splitlines()


@pytest.mark.skipif(HAS_GPU, reason="the CPU's labels")
def test_cpu_bench_shows_no_cublas_tf32_ratio(tmp_path):
    result = invoke("bench", "torch", "torch-tf32", "--shape", "32", "32", "32", "--iters", "1",
                    "--warmup", "0", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert "cuBLAS" not in " ".join(result.output.split())


def test_a_piped_progress_bar_prints_a_line_now_and_then_and_the_last():
    """`progress_bar(lines_when_piped=True)` where the output is a file (book, tune: issue 54): rich
    draws nothing there, so a plain line, at most every PIPED_EVERY_S seconds, and the last."""
    import io

    from rich.console import Console

    out = io.StringIO()
    bar, update = common.progress_bar(Console(file=out), lines_when_piped=True)
    with bar:
        for done in range(1, 6):
            update("pages", done, 5)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].startswith("pages (1/5, ") and lines[1].startswith("pages (5/5, ")
    silent = io.StringIO()
    bar, update = common.progress_bar(Console(file=silent))  # without: as before, nothing piped
    with bar:
        update("pages", 1, 5)
    assert silent.getvalue().strip() == ""


def test_the_book_s_stages_end_with_their_last_progress_call():
    """The piped lines' "and the last" needs a call with done == total: the book's stages count
    0…total−1 before each item, so each ends with one more (the review of issue 54 found none)."""
    from gemmlab.book import facts

    calls = []
    rows, why = facts.inspect_all([registry.get("naive")], progress=lambda m, d, t: calls.append((d, t)))
    if why:
        pytest.skip(why)
    assert "naive" in rows and calls == [(0, 1), (1, 1)]
