"""Bad input is a one-line usage error (exit 2), found before anything runs or is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gemmlab.judge.cases import GROUPS
from tests.clitools import assert_one_line, files_under, invoke

FIXTURE = Path(__file__).parent / "fixtures" / "bench_record.json"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """An empty current folder, so that anything a command writes by default shows up."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("args,fragment", [
    (["check", "--group", "exmaple"], "known: " + ", ".join(GROUPS)),
    (["check", "torch", "--shape", "0", "5", "5"], "M=0"),
    (["check", "torch", "--shape", "9000", "10", "10"], "M=9000"),
    (["check", "torch", "--shape", "-1", "5", "5"], "M=-1"),
    (["check", "torch", "--shape", "5", "5", "8193"], "K=8193"),
    (["check", "torch", "--shape", "5", "5", "5", "--group", "notes"], "exclude each other"),
    (["check", "torch", "--shape", "5x5x8193"], "K=8193"),
    (["check", "torch", "--shape", "5x5"], "expected MxNxK"),
    (["check", "nope"], "unknown implementation 'nope'"),
    (["check", "99"], "no rung 99"),
    (["bench", "torch", "--shape", "9000", "10", "10"], "M=9000"),
    (["bench", "torch", "--shape", "9000x10x10"], "M=9000"),
    (["bench", "nope"], "unknown implementation 'nope'"),
    (["sweep", "nope"], "unknown implementation 'nope'"),
    (["sweep", "--shape", "64"], "expected MxNxK"),
    (["export", "99"], "no rung 99"),
    (["export", "7", "-o", "x.cu"], "-o names one file"),
    (["inspect", "--arch", "sm_999"], "sm_999"),
    (["inspect", "--arch", "ampere"], "expected sm_XY"),
    (["inspect", "torch"], "no CUDA kernel"),
    (["explain", "99"], "no rung 99"),
    (["explain", "nope"], "unknown implementation"),
    (["study", "nope"], "unknown study"),
    (["new", "--framework", "fortran"], "unknown framework"),
    (["report", "missing.json"], "no such file: missing.json"),
])
def test_usage_errors_are_one_line_exit_2_and_write_nothing(workdir, args, fragment):
    result = invoke(*args)
    assert_one_line(result, 2, "error:", fragment)
    assert files_under(workdir) == set()


@pytest.mark.parametrize("content,fragment", [
    ("{}", "missing top-level field 'schema'"),
    ("[1, 2]", "expected a JSON object"),
    ("{not json", "is not JSON"),
    (json.dumps({"study": "sweep", "schema": 1}), "missing top-level field 'date'"),
])
def test_report_on_a_file_that_is_not_a_record(workdir, content, fragment):
    (workdir / "r.json").write_text(content)
    assert_one_line(invoke("report", "r.json"), 2, "error:", fragment)
    assert files_under(workdir) == {"r.json"}


def test_report_readme_without_markers_writes_nothing(workdir):
    shutil.copy(FIXTURE, workdir / "r.json")
    (workdir / "README.md").write_text("no markers here\n")
    result = invoke("report", "r.json", "--readme", "README.md")
    assert_one_line(result, 2, "error:", "<!-- ladder:begin -->")
    assert files_under(workdir) == {"r.json", "README.md"}
    assert (workdir / "README.md").read_text() == "no markers here\n"


def test_report_docs_and_out_exclude_each_other(workdir):
    shutil.copy(FIXTURE, workdir / "r.json")
    assert_one_line(invoke("report", "r.json", "--docs", "--out", "x"), 2, "exclude each other")
    assert files_under(workdir) == {"r.json"}


def test_new_refuses_to_overwrite(workdir):
    (workdir / "solution.cu").write_text("mine")
    assert_one_line(invoke("new"), 2, "exists; use --force")
    assert (workdir / "solution.cu").read_text() == "mine"
