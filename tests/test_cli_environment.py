"""What the machine hands a command, not what the user typed: a record that is not one, a cache or
an output folder it cannot write, a folder it cannot search, a compiler that does not speak UTF-8.
Each is one line and exit 2 or 3, found before the work (a walk-through found every one of these
a traceback, some after the whole run)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gemmlab import jsonfile
from gemmlab.policy import default
from tests.clitools import assert_no_traceback, assert_one_line, files_under, invoke

ROOT = Path(__file__).resolve().parent.parent
SOL = ROOT / "tests" / "fixtures" / "solutions"


@pytest.fixture
def named_record(monkeypatch):
    """Name a record by GEMMLAB_TUNE_RECORD for one test (the plan is cached per process)."""
    def name(path: Path) -> None:
        monkeypatch.setenv(default.RECORD_ENV, str(path))
        default.plan.cache_clear()
    yield name
    monkeypatch.delenv(default.RECORD_ENV, raising=False)
    default.plan.cache_clear()


@pytest.mark.parametrize("content", [None, "{", "[]", '{"schema": "bench/1"}'])
@pytest.mark.parametrize("args", [["list"], ["explain", "default", "--shape", "5x5x5"], ["export", "default"]])
def test_a_named_record_that_is_not_one_is_a_usage_error(tmp_path, monkeypatch, named_record, content, args):
    monkeypatch.chdir(tmp_path)
    record = tmp_path / "record.json"
    if content is not None:
        record.write_text(content)
    named_record(record)
    assert_one_line(invoke(*args), 2, "error:", default.RECORD_ENV, str(record))
    assert files_under(tmp_path) == ({"record.json"} if content is not None else set())


def _unwritable(monkeypatch, *folders: Path) -> None:
    """os.access says no for writing in `folders` (a test run as root could write a 0o500 folder)."""
    real = os.access
    barred = {f.resolve() for f in folders}

    def access(path, mode, *a, **kw):
        if mode & os.W_OK and Path(path).resolve() in barred:
            return False
        return real(path, mode, *a, **kw)

    monkeypatch.setattr(os, "access", access)


def test_bench_into_a_folder_it_cannot_write_stops_before_timing(tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    _unwritable(monkeypatch, ro)
    calls = []
    monkeypatch.setattr("gemmlab.bench.run.measure", lambda *a, **k: calls.append(a))
    assert_one_line(invoke("bench", "torch", "--shape", "64x64x64", "--out", ro / "x"), 2,
                    "cannot write under", "not writable")
    assert calls == [] and files_under(ro) == set()


@pytest.mark.parametrize("args", [
    ["report", "{record}", "--out", "{ro}/rep"],
    ["new", "{ro}/s.cu"],
    ["book", "-o", "{ro}/book", "--no-inspect"],
    ["tune", "bigtile", "--calibrate", "{record}", "--out", "{ro}/tune"],
])
def test_every_writer_refuses_a_folder_it_cannot_write(tmp_path, monkeypatch, args):
    ro = tmp_path / "ro"
    ro.mkdir()
    record = ROOT / "results" / "h200-latest.json"
    _unwritable(monkeypatch, ro)
    result = invoke(*[a.format(ro=ro, record=record) for a in args])
    assert_one_line(result, 2, "error:", str(ro))
    assert files_under(ro) == set()


def test_install_refuses_a_package_folder_it_cannot_write(tmp_path, monkeypatch):
    from gemmlab.policy import record

    installed = []  # were the check gone, nothing may reach the tracked record: install is a stand-in
    monkeypatch.setattr(record, "install", lambda rec, *a, **k: installed.append(rec))
    _unwritable(monkeypatch, record.INSTALLED)
    sweep = ROOT / "results" / "h200-random.json"
    assert_one_line(invoke("tune", "small", "--calibrate", sweep, "--install", "--out", tmp_path / "r"), 2,
                    "cannot write under", str(record.INSTALLED))
    assert installed == []


@pytest.mark.parametrize("kind", ["file", "unwritable"])
def test_a_build_cache_it_cannot_use_is_exit_3(tmp_path, monkeypatch, kind):
    cache = tmp_path / "cache"
    if kind == "file":
        cache.write_text("not a folder")
    else:
        (cache / "cubin").mkdir(parents=True)
        _unwritable(monkeypatch, cache / "cubin")
    monkeypatch.setenv("GEMMLAB_CACHE", str(cache))
    assert_one_line(invoke("inspect", "naive"), 3, "not run here:", "build cache", "GEMMLAB_CACHE")


def test_a_solution_in_a_folder_it_cannot_search_is_a_usage_error(tmp_path, monkeypatch):
    hidden = tmp_path / "locked" / "x.py"
    real = Path.exists

    def exists(self, *a, **kw):
        if self == hidden:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *a, **kw)

    monkeypatch.setattr(Path, "exists", exists)
    assert_one_line(invoke("judge", hidden), 2, "cannot reach", "permission denied")
    assert_one_line(invoke("submit", hidden), 2, "cannot reach", "permission denied")


def test_an_unreadable_solution_is_a_usage_error(tmp_path, monkeypatch):
    solution = tmp_path / "x.py"
    solution.write_text((SOL / "right_torch.py").read_text())
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, m, *a, **k: False if Path(p) == solution and m & os.R_OK
                        else real(p, m, *a, **k))
    assert_one_line(invoke("judge", solution), 2, "not readable")  # click's own check of the argument
    assert_one_line(invoke("submit", solution), 2, "cannot read", "permission denied")


def test_submit_of_a_folder_named_like_a_solution_is_a_usage_error(tmp_path):
    folder = tmp_path / "mine.py"
    folder.mkdir()
    assert_one_line(invoke("submit", folder), 2, "is a folder")


@pytest.mark.parametrize("limit,said", [("nan", "a number of GiB"), ("inf", "a number of GiB"),
                                        ("0.0000001", "at least"), ("-1", "at least")])
def test_a_memory_limit_that_cannot_hold_a_solution_is_a_usage_error(limit, said):
    assert_one_line(invoke("judge", SOL / "right_torch.py", "--memory-limit", limit), 2, "--memory-limit", said)


def test_a_compile_log_that_is_not_utf8_is_a_rejection_with_the_log(tmp_path):
    from gemmlab.cuda import tools

    try:
        tools.find("nvcc")
    except tools.ToolMissing:
        pytest.skip("needs nvcc")
    src = tmp_path / "latin.cu"
    # nvcc echoes the failing line, which holds a byte that is not UTF-8 (é in Latin-1)
    src.write_bytes(b'extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K)'
                    b' { caf\xe9 }\n')
    result = invoke("judge", src, "--seed", "3", "--json")
    assert result.exit_code == 1, result.output
    assert_no_traceback(result)
    assert "nvcc failed to compile latin.cu" in result.output


def test_a_sweep_named_twice_for_calibration_counts_once(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr("gemmlab.cli.tune._calibrate", lambda rungs, sweeps, *a: seen.append(sweeps))
    sweep = tmp_path / "sweep.json"
    sweep.write_text("{}")
    monkeypatch.chdir(tmp_path)
    result = invoke("tune", "small", "--calibrate", sweep, "--calibrate", "./sweep.json", "--out", tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert seen == [[sweep]]


def test_calibration_refuses_shapes_it_would_not_use(tmp_path):
    assert_one_line(invoke("tune", "small", "--calibrate", tmp_path / "s.json", "--shape", "64x64x64"), 2,
                    "--calibrate reads its shapes from the sweeps")


def test_sweep_refuses_a_seed_without_random():
    assert_one_line(invoke("sweep", "torch", "--seed", "5"), 2, "--seed", "--random")


def test_inspect_says_which_names_have_no_kernel():
    result = invoke("inspect", "naive", "torch", "--json")
    assert result.exit_code == 0, result.output
    assert "no CUDA kernel to inspect: torch" in result.output


def test_records_of_one_second_do_not_overwrite_each_other(tmp_path):
    first = jsonfile.write(tmp_path / "2026-12-07T060527Z.json", "1", keep_existing=True)
    second = jsonfile.write(tmp_path / "2026-12-07T060527Z.json", "2", keep_existing=True)
    assert first.name == "2026-12-07T060527Z.json" and second.name == "2026-12-07T060527Z-2.json"
    assert (first.read_text(), second.read_text()) == ("1", "2")


def test_a_write_cut_short_leaves_the_record_that_was_there(tmp_path, monkeypatch):
    record = tmp_path / "nvidia-h200.json"
    record.write_text('{"whole": true}')

    def cut(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", cut)
    with pytest.raises(KeyboardInterrupt):
        jsonfile.write(record, '{"half')
    assert record.read_text() == '{"whole": true}' and files_under(tmp_path) == {"nvidia-h200.json"}


def test_a_new_record_cut_short_leaves_no_empty_file(tmp_path, monkeypatch):
    def cut(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", cut)
    with pytest.raises(KeyboardInterrupt):
        jsonfile.write(tmp_path / "2026-12-07T060527Z.json", "{}", keep_existing=True)
    assert files_under(tmp_path) == set()
