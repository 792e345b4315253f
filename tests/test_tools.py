"""CUDA tools are found one way, in one order; the sanitizer's command line is written once."""

from __future__ import annotations

import stat

import pytest

from gemmlab.cuda import tools


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    tools.find.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    pathfinder = pytest.importorskip("cuda.pathfinder")
    monkeypatch.setattr(pathfinder, "find_nvidia_binary_utility", lambda name: None, raising=False)
    yield tmp_path
    tools.find.cache_clear()


def _fake(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_path_first_then_the_toolkit(fresh, monkeypatch):
    in_home = _fake(fresh / "cuda" / "bin" / "compute-sanitizer")
    assert tools.find("compute-sanitizer") == in_home
    tools.find.cache_clear()
    on_path = _fake(fresh / "bin" / "compute-sanitizer")
    monkeypatch.setenv("PATH", str(fresh / "bin"))
    assert tools.find("compute-sanitizer") == on_path


def test_missing_tool_says_how_to_get_it(fresh):
    with pytest.raises(tools.ToolMissing, match="nvcc not found: install the CUDA toolkit"):
        tools.find("nvcc")
    assert issubclass(tools.ToolMissing, FileNotFoundError)  # callers that catch that still do


def test_sanitizer_command_line(fresh, capsys):
    exe = _fake(fresh / "cuda" / "bin" / "compute-sanitizer")
    assert tools.sanitizer_command("racecheck") == [exe, "--tool", "racecheck", "--report-api-errors", "no",
                                                    "--print-limit", "50"]
    with pytest.raises(ValueError, match="unknown sanitizer tool"):
        tools.sanitizer_command("leakcheck")
    assert tools.main(["sanitizer", "memcheck"]) == 0
    assert capsys.readouterr().out.split() == ["env", "PYTORCH_NO_CUDA_MEMORY_CACHING=1", exe, "--tool",
                                               "memcheck", "--report-api-errors", "no", "--print-limit", "50"]
    assert tools.main(["nonsense"]) == 2
