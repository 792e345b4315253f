"""One way to name implementations and one way to write a shape, for every command that takes them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gemmlab import problem, registry
from gemmlab.ui import usage
from gemmlab.ui.errors import UsageError
from tests.clitools import assert_no_traceback, assert_one_line, files_under, invoke

#: Every command that takes implementation names, with what makes it stop early where it can.
NAME_COMMANDS = {"check": ["--group", "example"], "bench": ["--shape", "16x16x16", "--iters", "1",
                                                            "--warmup", "0"],
                 "inspect": [], "export": [], "explain": [], "sweep": [], "tune": []}
#: Every command that takes `--shape`.
SHAPE_COMMANDS = {"check": ["torch"], "bench": ["torch", "--iters", "1", "--warmup", "0"],
                  "tune": ["warptile"], "sweep": ["torch"]}


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def no_gpu(monkeypatch):
    """tune and sweep stop with exit 3 once what was typed is checked (on a GPU too)."""
    from gemmlab import runtime

    monkeypatch.setattr(runtime, "has_gpu", lambda: False)


# ---- names ----------------------------------------------------------------------------------


def test_a_rung_number_stands_for_every_implementation_on_it():
    assert [i.name for i in usage.resolve("7")] == ["float4", "float4-bk16", "float4-128"]
    assert [i.name for i in usage.resolve("12")] == ["torch", "torch-tf32"]
    for rung in usage.rungs():
        assert usage.resolve(str(rung)) == [i for i in registry.by_old_number() if i.old_number == rung]


def test_names_aliases_and_rungs_resolve_once_each_in_the_order_given():
    got = [i.name for i in usage.names(["torch", "12", "accurate", "1"])]
    assert got == ["torch", "torch-tf32", registry.resolve("accurate"), "naive"]
    assert usage.names(None) == list(registry.IMPLEMENTATIONS)


@pytest.mark.parametrize(("typed", "suggested"), [
    ("flaot4", "float4"), ("Float4", "float4"), ("warptiel", "warptile"), ("wgmma", "wgmma-"),
    ("acurate", "accurate"), ("deafult", "default"), ("split-k", "splitk"),
])
def test_a_misspelt_name_gets_did_you_mean_in_one_short_line(typed, suggested):
    with pytest.raises(UsageError) as caught:
        usage.resolve(typed)
    message = str(caught.value)
    assert f"unknown implementation {typed!r}; did you mean {suggested}" in message
    assert "gemmlab list" in message and len(message) <= 140, message


def test_a_name_like_nothing_points_to_gemmlab_list_without_a_guess():
    assert usage.unknown("zzzzzz") == "unknown implementation 'zzzzzz' (gemmlab list shows every name and step)"
    first, last = usage.rungs()[0], usage.rungs()[-1]
    assert usage.unknown("99") == f"no rung 99; rungs are {first}–{last} (gemmlab list shows every name and step)"


@pytest.mark.parametrize("command", NAME_COMMANDS)
def test_every_command_that_takes_names_says_did_you_mean(workdir, command):
    line = assert_one_line(invoke(command, "flaot4", *NAME_COMMANDS[command]), 2, "error:",
                           "did you mean float4", "gemmlab list")
    assert len(line) <= 140
    assert files_under(workdir) == set()


@pytest.mark.parametrize("command", NAME_COMMANDS)
def test_every_command_that_takes_names_refuses_a_rung_that_is_not_there(workdir, command):
    assert_one_line(invoke(command, "99", *NAME_COMMANDS[command]), 2, "error:", "no rung 99")
    assert files_under(workdir) == set()


def test_check_takes_a_rung_number(workdir):
    result = invoke("check", "12", "--group", "example", "--seed", "1")
    assert result.exit_code == 0, result.output
    assert "torch (fp32) on" in result.output and "torch-tf32 (tf32) on" in result.output
    assert result.stdout.strip().splitlines()[-1].startswith("2 passed, 0 failed")
    assert result.stderr.strip().splitlines()[-1].startswith("note: rung 12 is now torch, torch-tf32")


def test_bench_takes_a_rung_number(workdir):
    result = invoke("bench", "12", "--shape", "16x16x16", "--iters", "1", "--warmup", "0", "--out", "r")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1] == "2 passed, 0 failed, 0 not run"
    assert "note: rung 12 is now torch, torch-tf32" in result.stderr  # once it has run, on stderr


def test_inspect_takes_a_rung_number():
    result = invoke("inspect", "2", "--json")
    assert result.exit_code == 0, result.output
    assert "naive_fma" in result.stdout and '"name": "naive-fma"' in result.stdout


def test_export_of_a_rung_number_writes_each_implementation_on_it(workdir):
    result = invoke("export", "8")
    assert result.exit_code == 0, result.output
    assert files_under(workdir) == {"double-buffer-64.cu", "double-buffer-128.cu"}
    assert "`double-buffer-128`" in (workdir / "double-buffer-128.cu").read_text()


def test_export_of_a_rung_writes_nothing_when_one_of_its_files_is_there(workdir):
    (workdir / "double-buffer-128.cu").write_text("mine")
    assert_one_line(invoke("export", "8"), 2, "double-buffer-128.cu exists")
    assert files_under(workdir) == {"double-buffer-128.cu"}


@pytest.mark.parametrize("command", ["sweep", "tune"])
def test_sweep_and_tune_take_a_rung_number(no_gpu, workdir, command):
    """Past the names, these stop for want of a GPU (exit 3), not at the name (exit 2)."""
    assert_one_line(invoke(command, "20"), 3, "not run here:", "GPU")


def test_tune_keeps_the_implementations_of_a_rung_that_have_a_search_space(no_gpu, monkeypatch):
    from gemmlab.cli import tune

    seen = []
    real = tune.searchable
    monkeypatch.setattr(tune, "searchable", lambda given, **kw: seen.append(real(given, **kw)) or seen[-1])
    invoke("tune", "7", "20")
    assert seen == [["float4", "bigtile"]]  # rung 7's float4-bk16 and float4-128 have none
    assert_one_line(invoke("tune", "12"), 2, "torch has no search space")


# ---- shapes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("typed", "shape"), [
    ("8192x6144x4096", (8192, 6144, 4096)), ("8192×6144×4096", (8192, 6144, 4096)),
    ("7X9X11", (7, 9, 11)), ("7,9,11", (7, 9, 11)), (" 7 x 9 x 11 ", (7, 9, 11)), ("7 9 11", (7, 9, 11)),
])
def test_the_shape_parser_reads_each_way_of_writing_one(typed, shape):
    assert usage.parse_shape(typed) == shape


@pytest.mark.parametrize(("typed", "fragment"), [
    ("7x9", "expected MxNxK"), ("7x9x", "expected MxNxK"), ("axbxc", "expected MxNxK"),
    ("7.5x9x11", "expected MxNxK"), ("0x9x11", "M=0 is outside"), ("7x-1x11", "N=-1 is outside"),
    ("7x9x8193", "K=8193 is outside"),
])
def test_the_shape_parser_refuses_in_one_message(typed, fragment):
    with pytest.raises(UsageError, match=fragment):
        usage.parse_shape(typed)


@given(st.tuples(*[st.integers(problem.MIN_DIM, problem.MAX_DIM)] * 3))
def test_both_forms_read_the_same_shape(shape):
    triple = [str(d) for d in shape]
    assert usage.parse_shape("x".join(triple)) == shape
    assert usage.join_triples(["--shape", *triple]) == ["--shape", "x".join(triple)]


@pytest.mark.parametrize(("args", "joined"), [
    (["--shape", "1", "2", "3", "torch"], ["--shape", "1x2x3", "torch"]),
    (["torch", "--shape", "1", "2", "3", "--shape", "4", "5", "6"], ["torch", "--shape", "1x2x3", "--shape", "4x5x6"]),
    (["--shape", "-1", "5", "5"], ["--shape", "-1x5x5"]),
    (["--shape", "1", "2"], ["--shape", "1", "2"]),  # the parser says what is wrong with "1"
    (["--shape", "1", "2", "x"], ["--shape", "1", "2", "x"]),
    (["--shape", "1x2x3", "4", "5", "6"], ["--shape", "1x2x3", "4", "5", "6"]),  # names after a shape
    (["--", "--shape", "1", "2", "3"], ["--", "--shape", "1", "2", "3"]),
    (["--seed", "1", "2", "3"], ["--seed", "1", "2", "3"]),
])
def test_three_numbers_after_shape_are_joined_and_nothing_else(args, joined):
    assert usage.join_triples(args) == joined


@pytest.mark.parametrize("command", SHAPE_COMMANDS)
@pytest.mark.parametrize("form", [["16x16x16"], ["16", "16", "16"]])
def test_every_command_that_takes_a_shape_takes_both_forms(no_gpu, workdir, command, form):
    result = invoke(command, *SHAPE_COMMANDS[command], "--shape", *form)
    assert_no_traceback(result)
    if command in ("tune", "sweep"):
        assert_one_line(result, 3, "not run here:")  # checked, then no GPU
    else:
        assert result.exit_code == 0, result.output
        assert "16×16×16" in result.output


@pytest.mark.parametrize("typed", [["16x16"], ["0x16x16"], ["16", "16"], ["16", "16", "9000"]])
def test_every_command_that_takes_a_shape_says_the_same_error(no_gpu, workdir, typed):
    lines = {command: assert_one_line(invoke(command, *args, "--shape", *typed), 2, "error:", "--shape")
             for command, args in SHAPE_COMMANDS.items()}
    assert len(set(lines.values())) == 1, lines
    assert files_under(workdir) == set()


def test_tune_takes_repeated_shapes_in_either_form(no_gpu, monkeypatch):
    from gemmlab.ui import usage

    seen = []
    real = usage.shapes
    monkeypatch.setattr(usage, "shapes", lambda given: seen.append(real(given)) or seen[-1])
    invoke("tune", "warptile", "--shape", "512x512x512", "--shape", "1024", "1024", "1024")
    assert seen == [[(512, 512, 512), (1024, 1024, 1024)]]


def test_sweep_times_the_shapes_given(monkeypatch, workdir):
    from gemmlab import runtime
    from gemmlab.bench import studies

    monkeypatch.setattr(runtime, "has_gpu", lambda: True)
    seen = {}

    def fake_sweep(chosen, iters, shapes, progress, energy=None):
        seen.update(names=chosen, shapes=shapes)
        raise SystemExit(0)

    monkeypatch.setattr(studies, "sweep", fake_sweep)
    invoke("sweep", "12", "--shape", "64x64x64", "--shape", "128", "96", "32")
    assert seen == {"names": ["torch", "torch-tf32"],
                    "shapes": [("64x64x64", (64, 64, 64)), ("128x96x32", (128, 96, 32))]}
