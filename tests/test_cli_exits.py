"""Exit codes a script can trust, the closing summary line, and 'not run here' (exit 3) with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from gemmlab import registry
from gemmlab.exits import Exit
from gemmlab.ui.errors import Tally
from tests.clitools import (
    HAS_GPU,
    assert_no_traceback,
    assert_one_line,
    files_under,
    invoke,
    last_line,
)

cpu_only = pytest.mark.skipif(HAS_GPU, reason="what a machine without a GPU says")


@pytest.mark.parametrize("passed,failed,skipped,code", [
    (3, 0, 0, Exit.PASSED),
    (3, 0, 2, Exit.PASSED),
    (3, 1, 2, Exit.FAILED),
    (0, 1, 0, Exit.FAILED),
    (0, 0, 2, Exit.CANNOT_RUN),
    (0, 0, 0, Exit.CANNOT_RUN),
])
def test_tally_exit_codes(passed, failed, skipped, code):
    t = Tally()
    for _ in range(passed):
        t.add(True)
    for _ in range(failed):
        t.add(False)
    for _ in range(skipped):
        t.skip("no CUDA GPU")
    assert t.exit_code() == code
    assert t.line().startswith(f"{passed} passed, {failed} failed, {skipped} not run")


def test_tally_names_each_reason():
    t = Tally()
    t.skip("a")
    t.skip("a")
    t.skip("b")
    assert t.line() == "0 passed, 0 failed, 3 not run (2: a; 1: b)"


@cpu_only
def test_check_with_nothing_runnable_exits_3_with_a_summary():
    result = invoke("check", "naive", "--group", "example")
    assert result.exit_code == 3, result.output
    assert_no_traceback(result)
    assert "naive: not run: CUDA kernels need a CUDA GPU" in result.output
    assert last_line(result) == "0 passed, 0 failed, 1 not run (CUDA kernels need a CUDA GPU)"


@cpu_only
def test_check_ends_with_the_summary_after_the_tables():
    result = invoke("check", "naive", "torch", "tiling-1d", "--group", "example", "--seed", "1")
    assert result.exit_code == 0, result.output
    assert last_line(result) == "1 passed, 0 failed, 2 not run (CUDA kernels need a CUDA GPU)"


def test_check_counts_a_wrong_implementation_as_failed(monkeypatch):
    impl = registry.get("torch")
    monkeypatch.setattr(type(impl), "solve", lambda self, a, b, c, m, n, k: c.zero_())
    result = invoke("check", "torch", "--group", "example")
    assert result.exit_code == 1, result.output
    assert last_line(result) == "0 passed, 1 failed, 0 not run"


@cpu_only
@pytest.mark.parametrize("args,fragment", [
    (["study", "buffering"], "the buffering study compares four CUDA kernels"),
    (["sweep"], "no CUDA GPU"),
    (["check", "--sanitize", "naive"], "no CUDA GPU"),
    (["bench", "naive"], "CUDA kernels need a CUDA GPU"),
])
def test_what_needs_a_gpu_exits_3_in_one_line_and_writes_nothing(tmp_path, monkeypatch, args, fragment):
    monkeypatch.chdir(tmp_path)
    assert_one_line(invoke(*args), 3, "not run here:", fragment)
    assert files_under(tmp_path) == set()


def _without_triton(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "triton" else real(name, *a))


def test_triton_rungs_without_triton_are_not_run_with_the_install_hint(monkeypatch):
    _without_triton(monkeypatch)
    result = invoke("check", "triton", "triton-presplit", "--group", "example")
    assert result.exit_code == 3, result.output
    assert "triton: not run: install gemmlab[triton]" in result.output
    assert "ModuleNotFoundError" not in result.output
    assert last_line(result) == "0 passed, 0 failed, 2 not run (install gemmlab[triton])"


@cpu_only
def test_bench_without_triton_times_torch_and_names_what_it_skipped(tmp_path, monkeypatch):
    _without_triton(monkeypatch)
    result = invoke("bench", "torch", "triton", "--shape", "32", "32", "32", "--iters", "1",
                    "--warmup", "0", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert "triton: not run: install gemmlab[triton]" in result.output
    assert "ERROR" not in result.output
    assert last_line(result) == "1 passed, 0 failed, 1 not run (install gemmlab[triton])"


def test_inspect_without_its_tools_exits_3_in_one_line(monkeypatch):
    from gemmlab.cuda import sass, tools

    def missing(name):
        raise tools.ToolMissing(f"{name} not found: install nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm")

    monkeypatch.setattr(sass, "find", missing)
    assert_one_line(invoke("inspect", "naive"), 3, "not run here:", "cuobjdump not found")


def test_inspect_for_another_arch_leaves_out_what_it_cannot_build():
    """The wgmma rungs are sm_90a's alone: --arch sm_80 inspects the rest and says which it left
    out (ptxas rejected wgmma for sm_80 with a traceback before); only those asked is exit 2."""
    result = invoke("inspect", "wgmma-swap", "naive", "--arch", "sm_80")
    assert result.exit_code == 0, result.output
    assert "not built for sm_80: wgmma-swap (needs sm_90a only)" in result.output
    assert "naive" in result.output and "wgmma_swap[" not in result.output
    assert_one_line(invoke("inspect", "wgmma-swap", "--arch", "sm_80"), 2, "error:",
                    "sm_80 cannot build wgmma-swap (needs sm_90a only)")


def test_judge_usage_errors_are_one_line_on_stderr(tmp_path):
    """As every other command: judge's usage errors went to stdout, without the error: label."""
    assert_one_line(invoke("judge", str(tmp_path / "missing.py")), 2, "error:", "no such file")
    assert_one_line(invoke("judge", str(tmp_path)), 2, "error:", "is not a file")


@pytest.mark.parametrize("args", [
    ("bench", "torch", "--out", "{file}"), ("bench", "torch", "--latest", "{folder}"),
    ("bench", "torch", "--csv", "{folder}"), ("bench", "torch", "--out", "{file}/under"),
    ("book", "-o", "{file}"), ("book", "-o", "{file}/under"),
    ("study", "--out", "{file}"), ("report", "{record}", "--out", "{file}"),
    ("new", "--framework", "torch", "{folder}/no/such/x.py"), ("new", "--framework", "torch", "{folder}", "--force"),
    # named for another kind of file: judge would read mine.cu as CUDA, a record would overwrite a solution
    ("new", "--framework", "torch", "{folder}/mine.cu"), ("new", "{folder}/mine.py"),
    ("bench", "torch", "--latest", "{file}"), ("bench", "torch", "--csv", "{folder}/bench.json"),
])
def test_an_output_path_that_cannot_be_written_is_a_usage_error_before_anything_runs(tmp_path, args):
    """A file where a folder goes (or the other way round) was a traceback, for --latest and --csv
    only after the whole benchmark had run and its record was written."""
    file = tmp_path / "a-file"
    file.write_text("")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    record = Path(__file__).resolve().parent.parent / "results" / "h200-latest.json"
    filled = [a.format(file=file, folder=folder, record=record) for a in args]
    assert_one_line(invoke(*filled), 2, "error:")
    assert {p.name for p in tmp_path.rglob("*")} == {"a-file", "a-folder"}, "nothing written"


def test_bench_leaves_a_solution_named_as_its_record_as_it_was(tmp_path):
    """--latest and --csv overwrite the file they name, by design; a solution's name there was a
    slip that replaced the solution with JSON."""
    solution = tmp_path / "solution.cu"
    solution.write_text("// mine\n")
    for option in ("--latest", "--csv"):
        assert_one_line(invoke("bench", "torch", "--shape", "8x8x8", option, str(solution)), 2, "error:", option)
    assert solution.read_text() == "// mine\n"
    assert [p.name for p in tmp_path.iterdir()] == ["solution.cu"]


@pytest.mark.parametrize("args", [
    ("judge", "x.py", "--seed", "4294967296"), ("bench", "torch", "--seed", "99999999999999999999999"),
    ("check", "torch", "--seed", "-1"), ("sweep", "--random", "4", "--seed", "-1"),
    ("tune", "small", "--seed", "18446744073709551615"),
])
def test_a_seed_outside_32_bits_is_a_usage_error(args):
    """A seed past what torch's generator unpacks was a traceback (judge, bench) or every case an
    ERROR (check) after the run had started."""
    assert_one_line(invoke(*args), 2, "error:", "--seed")


def test_the_largest_seed_runs_with_the_seeds_derived_from_it():
    """B's inputs come from seed + 1: the largest seed taken still draws them (the random group's
    shapes and inputs are seeded; the examples' are not)."""
    result = invoke("check", "torch", "--group", "random", "--seed", "4294967295")
    assert result.exit_code == 0, result.output
    assert "4294967295" in result.output and last_line(result).startswith("1 passed, 0 failed")


@pytest.mark.parametrize("args", [("check", "torch", "--no-perf", "--group", "perf"),
                                  ("judge", "{solution}", "--no-perf", "--group", "perf")])
def test_groups_that_leave_no_case_are_a_usage_error(args):
    """`--group perf` holds only the performance case, which --no-perf leaves out: the judge said
    ACCEPTED on no case at all, check exit 3 after starting."""
    solution = str(Path(__file__).parent / "fixtures" / "solutions" / "right_torch.py")
    assert_one_line(invoke(*(a.format(solution=solution) for a in args)), 2, "error:", "--no-perf")


def test_explain_at_a_shape_refuses_notes_it_would_not_show():
    """--notes was dropped without a word where --shape answered instead."""
    assert_one_line(invoke("explain", "default", "--shape", "64x64x64", "--notes"), 2, "error:", "--notes")


@cpu_only
def test_a_judgement_whose_every_case_was_skipped_is_not_accepted():
    """On a CPU the performance case is skipped; with it alone there is no judgement to give, and
    the timed calls (each one checked) do not make one."""
    solution = Path(__file__).parent / "fixtures" / "solutions" / "right_torch.py"
    line = assert_one_line(invoke("judge", str(solution), "--group", "perf", "--iters", "1", "--warmup", "0"), 3)
    assert "no case ran here (needs a GPU)" in line


@pytest.mark.parametrize("args", [("check", "torch", "--shape"), ("check", "--seed", "abc"),
                                  ("judge", "x.py", "--jsno"), ("bench", "--iters", "0"), ("no-such-command",)])
def test_command_line_parse_errors_are_one_line(args):
    """typer's own errors (missing values, bad types, unknown options) were a boxed panel with
    the usage; README promises one line on stderr and exit 2 for every usage error."""
    assert_one_line(invoke(*args), 2, "error:", "-h)")


def test_an_error_inside_another_package_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    """A broken environment (a truncated font, a missing library) raises inside the package that is
    broken: one line naming it and the cure, exit 3; gemmlab's own errors keep their traceback."""
    import importlib
    import sys

    import typer

    from gemmlab.ui import errors

    pkg = tmp_path / "site-packages" / "fontlib"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("def load():\n    raise OSError('Can not load face: unknown file format')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site-packages"))
    fontlib = importlib.import_module("fontlib")
    monkeypatch.delenv(errors.TRACEBACK_ENV, raising=False)

    @errors.guarded
    def broken():
        fontlib.load()

    with pytest.raises(typer.Exit) as info:
        broken()
    assert info.value.exit_code == 3
    line = capsys.readouterr().err.strip()
    assert "fontlib failed (OSError: Can not load face" in line and "pip install --force-reinstall fontlib" in line
    assert "\n" not in line

    @errors.guarded
    def own_bug():
        raise KeyError("gemmlab's own")

    with pytest.raises(KeyError):
        own_bug()
    monkeypatch.setenv(errors.TRACEBACK_ENV, "1")
    with pytest.raises(OSError):
        broken()
    sys.modules.pop("fontlib", None)
