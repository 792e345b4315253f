"""Nothing writes into the repository's tracked files unless asked."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.clitools import files_under, invoke

ROOT = Path(__file__).parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "bench_record.json"
SWEEP = ROOT / "results" / "h200-sweep.json"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    shutil.copy(FIXTURE, tmp_path / "results" / "run.json")
    return tmp_path


def test_report_writes_beside_the_record_by_default(workdir):
    result = invoke("report", "results/run.json")
    assert result.exit_code == 0, result.output
    assert files_under(workdir) == {
        "results", "results/run.json", "results/run-report", "results/run-report/ladder.md",
        "results/run-report/ladder_tflops.png", "results/run-report/ladder_ms.png"}


def test_report_sweep_writes_beside_the_record_by_default(workdir):
    shutil.copy(SWEEP, workdir / "results" / "sweep.json")
    result = invoke("report", "results/sweep.json")
    assert result.exit_code == 0, result.output
    assert (workdir / "results" / "sweep-report" / "sweep.png").exists()
    assert not (workdir / "docs").exists()


def test_report_docs_and_readme_only_when_asked(workdir):
    (workdir / "README.md").write_text("a\n<!-- ladder:begin -->\nold\n<!-- ladder:end -->\nb\n")
    result = invoke("report", "results/run.json", "--docs", "--readme", "README.md")
    assert result.exit_code == 0, result.output
    assert {"docs/ladder.md", "docs/ladder_tflops.png"} <= files_under(workdir)
    text = (workdir / "README.md").read_text()
    assert "old" not in text and "| torch |" in text and text.startswith("a\n")
    assert not (workdir / "results" / "run-report").exists()


def test_bench_results_are_ignored_by_git_but_the_h200_records_are_not():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")

    def ignored(path: str) -> bool:
        return subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT).returncode == 0

    assert ignored("results/cpu/2026-01-01T000000Z.json")
    assert ignored("results/studies/cpu/x.json")
    assert ignored("results/h200-latest-report/ladder.md")
    assert not ignored("results/h200-latest.json")
    assert not ignored("docs/ladder.md")


def test_the_committed_readme_block_is_what_report_makes(tmp_path):
    """The asked path (`report … --readme README.md`) reproduces README's ladder byte for byte."""
    readme = tmp_path / "README.md"
    shutil.copy(ROOT / "README.md", readme)
    result = invoke("report", ROOT / "results" / "h200-latest.json", "--readme", readme,
                    "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert readme.read_text() == (ROOT / "README.md").read_text()
