"""What a person reads on a terminal: the layout of tables, help lines, and the notes beside figures."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
import typer

from gemmlab import registry
from gemmlab.cli import app
from gemmlab.exits import Exit
from gemmlab.policy import default as tuned_default
from tests.clitools import HAS_GPU, invoke


def run_gemmlab(*args: str, columns: int = 80) -> subprocess.CompletedProcess:
    """The installed entry point in a process of its own, at a terminal width of `columns`."""
    env = os.environ | {"COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-m", "gemmlab", *args], capture_output=True, text=True,
                          env=env, timeout=120)


LABELS = {c.label for c in registry.CHAPTERS}


def _table_lines(output: str) -> tuple[list[str], int]:
    """The lines of the chapters' tables (titles, header and rule left out), and where the idea
    column starts; the footer, which starts at the left edge, ends them."""
    lines = output.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["step", "name"])
    idea_at = lines[header].index("idea")
    out = []
    for line in lines[header + 2:]:
        if line.strip() in LABELS or not line.strip():
            continue
        if not (line.startswith(" ") or registry.is_ref(line.split()[0])):
            break
        out.append(line)
    return out, idea_at


def list_rows(output: str) -> dict[str, str]:
    """name → its idea, read back from the tables: the cells of each row's continuation lines joined
    by one space, so that a word folded across two lines would read as two words."""
    table, idea_at = _table_lines(output)
    rows: dict[str, list[str]] = {}
    name = None
    for line in table:
        own = line[:idea_at].split()
        if own:
            assert len(own) in (3, 4), f"a row's own cells wrapped: {line!r}"  # baselines have no step
            name = own[-3]
            rows[name] = []
        assert name is not None, line
        rows[name].append(line[idea_at:].strip())
    return {n: " ".join(parts) for n, parts in rows.items()}


@pytest.fixture(scope="module")
def list_at_80() -> str:
    result = run_gemmlab("list", columns=80)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_list_fits_80_columns_without_breaking_a_word(list_at_80):
    assert max(len(line.rstrip()) for line in list_at_80.splitlines()) <= 80
    rows = list_rows(list_at_80)
    assert list(rows) == [i.name for i in registry.reading_order()]
    for impl in registry.IMPLEMENTATIONS:
        assert rows[impl.name] == impl.summary, impl.name


def test_list_gives_the_idea_room_to_read_at_80_columns(list_at_80):
    header = next(line for line in list_at_80.splitlines() if line.split()[:2] == ["step", "name"])
    assert 80 - header.index("idea") >= 30, header
    ideas = [line for line in list_at_80.splitlines() if line.split() and registry.is_ref(line.split()[0])]
    assert sum(len(line.split()) for line in ideas) / len(ideas) >= 8  # words per first line, not 1 or 2


def test_list_names_the_tune_record_and_the_aliases_in_a_footer(list_at_80):
    lines = list_at_80.splitlines()
    footer_at = next(i for i, line in enumerate(lines) if line.startswith(f"{tuned_default.NAME}: dispatches"))
    footer = " ".join(" ".join(lines[footer_at:]).split())
    assert f"default: dispatches by {' '.join(tuned_default.plan()[1].split())}" in footer
    for alias in registry.ALIASES:
        assert f"{alias} = {registry.resolve(alias)} on this machine" in footer
    table, idea_at = _table_lines(list_at_80)
    default_row = next(line for line in table if line.split()[1:2] == [tuned_default.NAME])
    assert default_row.split()[:4] == [registry.get("default").ref, "default", "cuda", "fp32"]
    for line in table:  # the name column holds names alone: no record, no "= alias"
        assert len(line[:idea_at].split()) in (0, 3, 4), line


def test_list_is_readable_when_the_terminal_is_wide_too():
    result = run_gemmlab("list", columns=200)
    assert result.returncode == 0
    assert list_rows(result.stdout) == {i.name: i.summary for i in registry.reading_order()}


def test_gemmlab_alone_prints_the_help_on_stderr_and_exits_2_without_an_empty_error():
    result = invoke()
    assert result.exit_code == int(Exit.USAGE) == 2
    assert result.stdout == ""
    assert "Usage:" in result.stderr and "Commands" in result.stderr
    assert "error:" not in result.output
    assert invoke("-h").exit_code == 0 and "Usage:" in invoke("-h").stdout


def test_gemmlab_alone_from_the_entry_point():
    result = run_gemmlab()
    assert result.returncode == 2 and result.stdout == ""
    assert "Usage: gemmlab" in result.stderr and "error" not in result.stderr


def _usage_line(*command: str) -> str:
    return next(line.strip() for line in invoke(*command, "-h").stdout.splitlines() if "Usage:" in line)


def test_usage_lines_name_arguments_as_typed():
    """`{file}` read as a template's placeholder (judge -h): every argument is NAME, [NAME] or NAME…"""
    group = typer.main.get_command(app)
    for name in group.commands:
        line = _usage_line(name)
        assert "{" not in line and "}" not in line, line
    assert _usage_line("judge").endswith(" judge [OPTIONS] FILE")
    assert _usage_line("explain").endswith(" explain [OPTIONS] NAME|STEP")
    assert _usage_line("check").endswith(" check [OPTIONS] [NAME|STEP]...")


def test_judge_help_shows_placeholders_not_types():
    text = invoke("judge", "-h").stdout
    for odd in ("<str>", "<bool>", "<list["):
        assert odd not in text, odd
    for placeholder in ("FRAMEWORK", "PRECISION", "TOOL", "GROUP"):
        assert placeholder in text


def test_bench_help_states_both_default_shapes():
    from gemmlab.bench.run import CPU_SHAPE
    from gemmlab.problem import PERF_SHAPE

    text = " ".join(invoke("bench", "-h").stdout.split())
    for shape in (PERF_SHAPE, CPU_SHAPE):
        assert "x".join(map(str, shape)) in text


# ---- torch-tf32 on a CPU ---------------------------------------------------------------------


def test_on_a_cpu_torch_tf32_computes_exactly_what_torch_does():
    """The fact behind the note: if torch's CPU matmul ever honours TF32, the note must go."""
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(67, 129, generator=gen), torch.randn(129, 71, generator=gen)
    c32, c_tf32 = torch.empty(67, 71), torch.empty(67, 71)
    registry.get("torch").solve(a, b, c32, 67, 129, 71)
    registry.get("torch-tf32").solve(a, b, c_tf32, 67, 129, 71)
    assert torch.equal(c32, c_tf32)


@pytest.mark.skipif(HAS_GPU, reason="what a CPU run says")
def test_check_and_bench_say_why_torch_tf32_shows_fp32_figures_on_a_cpu(tmp_path):
    note = "torch-tf32 on a CPU computes in FP32, so its figures are torch's"
    check = invoke("check", "torch", "torch-tf32", "--group", "example")
    assert check.exit_code == 0, check.output
    assert " ".join(check.output.split()).count(note) == 1  # for torch-tf32, not for torch
    bench = invoke("bench", "12", "--shape", "16x16x16", "--iters", "1", "--warmup", "0", "--out", tmp_path)
    assert bench.exit_code == 0, bench.output
    assert " ".join(bench.output.split()).count(note) == 1


def test_no_tf32_note_where_tf32_is_tf32():
    from gemmlab.cli.common import tf32_on_cpu_note

    assert tf32_on_cpu_note("torch-tf32", "tf32", "cuda") is None
    assert tf32_on_cpu_note("torch", "fp32", "cpu") is None
    assert tf32_on_cpu_note("torch-tf32", "tf32", "cpu")
