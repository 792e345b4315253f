"""A busy machine never turns a correct solution into REJECTED (judge/timing.py): on the CPU a
disagreement is a note; on a GPU it is re-timed between quiet checks, rejected only where it holds
with the machine quiet on both sides, and otherwise the figure is withheld."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from gemmlab.judge import timing
from gemmlab.judge.isolate import judge_file
from gemmlab.judge.remote import Outcome
from gemmlab.judge.runner import CaseResult
from gemmlab.reference import Precision

SOL = Path(__file__).parent / "fixtures" / "solutions"


class FakeRemote:
    """Calls whose judge's clock and report follow a script: `solve_wall(i)` for the i-th timed call
    (report 1 ms), `null_wall(i)` for the i-th call that skips solve (report 0)."""

    def __init__(self, device: str, solve_wall, null_wall):
        self.device = torch.device(device)
        self.solve_wall, self.null_wall = solve_wall, null_wall
        self.timed = self.nulls = 0

    def call(self, case, seed, precision, null=False) -> Outcome:
        ok = CaseResult(case=case.name, group=case.group, shape=case.shape, seed=seed, status="pass")
        if null:
            self.nulls += 1
            return Outcome(result=ok, ms=0.0, wall_ms=self.null_wall(self.nulls))
        self.timed += 1
        return Outcome(result=ok, ms=1.0, wall_ms=self.solve_wall(self.timed))


def _run(remote) -> timing.TimedRun:
    return timing.timed_run(remote, (64, 64, 64), warmup=0, iters=10, seed=1, precision=Precision.FP32,
                            overhead=0.3)


def test_a_forged_report_on_a_quiet_gpu_is_rejected():
    run = _run(FakeRemote("cuda", solve_wall=lambda i: 10.3, null_wall=lambda i: 0.3))
    assert run.failure.startswith("timing disagreement") and "quiet before and after" in run.failure


def test_a_gpu_busy_around_every_re_time_withholds_the_figure_and_rejects_nothing():
    run = _run(FakeRemote("cuda", solve_wall=lambda i: 10.3, null_wall=lambda i: 9.0))
    assert run.failure == "" and run.timing is None
    assert run.withheld.startswith("timing withheld") and "busy" in run.withheld


def test_a_gpu_busy_for_the_first_timing_only_gives_the_re_timed_figure():
    run = _run(FakeRemote("cuda", solve_wall=lambda i: 10.3 if i <= 10 else 1.3, null_wall=lambda i: 0.3))
    assert run.failure == "" and run.withheld == "" and run.timing["median_ms"] == 1.0


def test_on_the_cpu_a_disagreement_is_a_note_and_the_figure_the_judges_clock():
    remote = FakeRemote("cpu", solve_wall=lambda i: 10.3, null_wall=lambda i: 0.3)
    run = _run(remote)
    assert run.failure == "" and run.notes["disagreement"].startswith("timing disagreement")
    assert run.timing["median_ms"] == pytest.approx(10.0) and remote.nulls == 0


def _burner(seconds: float) -> subprocess.Popen:
    """One core kept busy for at most `seconds`."""
    return subprocess.Popen([sys.executable, "-c", f"import time\nend = time.time() + {seconds}\n"
                             "while time.time() < end: pass"])


RIGHT = ["right_torch.py", "triton_right.py"]


def test_correct_files_judged_thirty_times_beside_two_burners_are_never_rejected():
    burners = [_burner(600), _burner(600)]
    verdicts = []
    try:
        start = time.monotonic()
        for i in range(30):
            name = RIGHT[0] if i % 3 else RIGHT[1] if _has_triton() else RIGHT[0]
            v = judge_file(SOL / name, seed=900 + i, perf=False, groups=["example"], time_shape=(48, 48, 48),
                           iters=5, warmup=1)
            verdicts.append((name, v.exit_code, v.failure))
        elapsed = time.monotonic() - start
    finally:
        for b in burners:
            b.kill()
            b.wait()
    rejected = [v for v in verdicts if v[1] != 0]
    assert rejected == [], rejected
    assert elapsed < 600


def _has_triton() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True
