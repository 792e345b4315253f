"""`gemmlab tune` with no names (tune/pipeline.py): what its stages run, on the CPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gemmlab.policy import preludes, record
from gemmlab.policy.default import RECORD_ENV
from gemmlab.policy.spaces import SPACES
from gemmlab.tune import pipeline


def test_the_sweeps_time_default_each_calibrated_rung_and_cublas_then_each_preludes_own_shapes():
    runs = pipeline.sweep_args(seed=5)
    drawn = runs[0]
    assert drawn[:len(pipeline.CALIBRATED) + 2] == ["default", *pipeline.CALIBRATED, "torch"]
    assert drawn[drawn.index("--random") + 1] == str(pipeline.DRAWN) and drawn[drawn.index("--seed") + 1] == "5"
    designed = {args[0]: [args[i + 1] for i, a in enumerate(args) if a == "--shape"] for args in runs[1:]}
    assert designed == {rung: list(shapes) for rung, shapes in preludes.FLOOR_SHAPES.items()}
    assert set(pipeline.SEARCHED) <= set(SPACES)  # the search stage tunes rungs with a space
    assert all(r in SPACES or r in preludes.PRELUDES for r in pipeline.CALIBRATED)


@pytest.mark.parametrize("rung", sorted(preludes.FLOOR_SHAPES))
def test_each_designed_shape_is_one_its_prelude_runs_at(rung):
    for text in preludes.FLOOR_SHAPES[rung]:
        m, n, k = map(int, text.split("x"))
        assert preludes.applies(preludes.own(rung), m, n, k), text


def test_a_sweep_runs_in_a_child_that_dispatches_by_the_search_record_and_keeps_its_file(tmp_path, monkeypatch):
    seen = {}

    def fake_run(argv, env, **_):
        seen["argv"], seen["record"] = argv, env[RECORD_ENV]
        out = argv[argv.index("--out") + 1]
        folder = Path(out) / "nvidia-test-gpu"
        folder.mkdir(parents=True)
        (folder / "random-1.json").write_text(json.dumps({"points": [1, 2]}))
        return subprocess.CompletedProcess(argv, 1, stdout="1 failed")

    monkeypatch.setattr(pipeline.subprocess, "run", fake_run)
    got = pipeline.sweep(tmp_path / "search.json", ["default", "torch", "--random", "3"], tmp_path / "out")
    assert got == {"points": [1, 2]}  # a sweep with a wrong result still counts: calibration skips that rung
    assert seen["argv"][:4] == [sys.executable, "-m", "gemmlab", "sweep"]
    assert seen["record"] == str(tmp_path / "search.json")
    assert json.loads((tmp_path / "out" / "nvidia-test-gpu" / "random-1.json").read_text()) == got


def test_a_sweep_that_writes_no_record_stops_the_stage_in_one_line(tmp_path):
    """The real child on this CPU: `gemmlab sweep` needs a GPU, exits 3 and writes nothing."""
    with pytest.raises(pipeline.StageFailed) as info:
        pipeline.sweep(tmp_path / "search.json", ["default", "torch", "--random", "2", "--seed", "1"],
                       tmp_path / "out")
    assert "exited 3" in str(info.value) and "\n" not in str(info.value)


def test_tune_with_no_names_refuses_bad_arguments_before_it_needs_a_gpu(tmp_path, tuned_record):
    def tune(*args):
        return subprocess.run([sys.executable, "-m", "gemmlab", "tune", *args], capture_output=True, text=True)

    got = tune("--searched", str(tmp_path / "none.json"))
    assert got.returncode == 2 and "none.json" in got.stderr
    calibrated = tmp_path / "calibrated.json"
    calibrated.write_text(record.dumps(dict(tuned_record, calibration={"date": "x"})))
    got = tune("--searched", str(calibrated))
    assert got.returncode == 2 and "calibrated already" in got.stderr
    got = tune("bigtile", "--searched", str(calibrated))
    assert got.returncode == 2 and "with no names" in got.stderr
    got = tune("--shape", "64x64x64")
    assert got.returncode == 2 and "every class" in got.stderr
    got = tune("--install")
    assert got.returncode == 3 and got.stderr.count("\n") <= 1  # no GPU here: one line


@pytest.fixture
def tuned_record() -> dict:
    """The installed target record as a search record would read (no calibration)."""
    found = record.load(record.installed_path(record.TARGET))
    return {k: v for k, v in found.items() if k != "calibration"}


@pytest.mark.parametrize(("new", "current", "installs"), [(1.10, 1.05, True), (1.05, 1.05, True),
                                                          (1.01, 1.10, False), (None, 1.0, False)])
def test_a_new_record_is_installed_only_where_it_measures_at_least_as_fast(tmp_path, monkeypatch, new, current,
                                                                           installs):
    """Stage 4 times default under each record on one fresh draw (each in a child naming its record)."""
    from rich.console import Console

    from gemmlab.cli import tune as tune_cli
    from gemmlab.policy import default

    incumbent = record.load(record.installed_path(record.TARGET))
    monkeypatch.setattr(default, "plan", lambda: (incumbent, "nvidia-h200.json, borrowed"))
    monkeypatch.delenv(RECORD_ENV, raising=False)
    seen = []

    def fake_sweep(path, args, out):
        seen.append((path.name, args))
        return {"summary": {"default": {"geomean": new if path.name == "new.json" else current}}}

    monkeypatch.setattr(pipeline, "sweep", fake_sweep)
    (tmp_path / "new.json").write_text("{}")
    ui = Console(file=open(tmp_path / "log", "w"), width=200)
    assert tune_cli._beats_incumbent(tmp_path / "new.json", 7, tmp_path, ui) is installs
    assert [name for name, _ in seen] == ["new.json", "nvidia-h200.json"]
    assert all(args == pipeline.compare_args(8) for _, args in seen)  # the same fresh draw for both
    ui.file.close()
    assert ("not installed" in (tmp_path / "log").read_text()) is not installs


def test_with_no_record_in_force_the_new_one_is_installed_without_a_comparison(monkeypatch, tmp_path):
    from gemmlab.cli import tune as tune_cli
    from gemmlab.policy import default

    monkeypatch.setattr(default, "plan", lambda: (None, "built-in"))
    monkeypatch.setattr(pipeline, "sweep", lambda *a: pytest.fail("nothing to compare with"))
    assert tune_cli._beats_incumbent(tmp_path / "new.json", 7, tmp_path, None) is True
