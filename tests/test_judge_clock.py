"""Issue 29's clock: nothing the figure depends on is reachable from the solution's Python, the
overhead is measured outside its process, the cross-check's tolerance holds against a forger just
under it, and a strict-FP32 time below the FMA floor is impossible."""

from __future__ import annotations

from pathlib import Path

import pytest

from gemmlab.judge import hygiene, isolate
from gemmlab.judge.isolate import Verdict, judge_file
from gemmlab.judge.timing import (
    CROSSCHECK_ABS_MS,
    CROSSCHECK_REL,
    add_baseline,
    allowance_ms,
    crosscheck,
)

SOL = Path(__file__).parent / "fixtures" / "solutions"
TIMED = dict(perf=False, groups=["example"], time_shape=(32, 32, 32), iters=4, warmup=1)


def test_work_deferred_into_the_harness_s_copy_never_happens():
    # The old judge's child copied C through torch after the clock stopped; this fixture hooks
    # every such copy (module global, Tensor.copy_, a dispatch mode) to do its product there.
    v = judge_file(SOL / "defers_work.py", seed=61, **TIMED)
    assert not v.passed and v.failure == "example-1: 4 of 4 elements never written", v.failure


def test_the_overhead_cannot_be_padded_from_the_solution_s_process():
    v = judge_file(SOL / "pads_overhead.py", seed=62, **TIMED)
    assert v.timing is not None, v.failure
    # It sleeps 50 ms in every copy after a call that skipped solve: none of them is the judge's.
    assert v.timing["overhead_ms"] < 25.0, v.timing


def test_an_old_style_forger_gains_nothing():
    # forges_timing.py looks for the old harness's Channel object: there is none to patch.
    v = judge_file(SOL / "forges_timing.py", seed=63, **TIMED)
    assert v.timing is not None and "timing disagreement" not in v.failure, v.failure
    assert v.timing["median_ms"] >= 19.0 and min(v.timing["reported_ms"]) >= 19.0  # it sleeps 20 ms


def test_a_forger_just_under_the_tolerance_is_accepted_at_its_real_time_on_the_cpu():
    """The relay rewrites the channel itself, which no harness can stop: shaving 7 ms off a 100 ms
    call stays inside 10 % + 1 ms, so it is no disagreement, and on the CPU the figure is the judge's
    own clock anyway: the real 100 ms, not the 93 reported."""
    sleep, shave = 100.0, 7.0
    assert shave < allowance_ms(sleep - shave, "cpu") < shave + 4  # inside, with room for noise only
    v = judge_file(SOL / "forges_report.py", seed=64, env={"GEMMLAB_TEST_SLEEP_MS": str(sleep),
                                                         "GEMMLAB_TEST_SHAVE_MS": str(shave)}, **TIMED)
    assert v.passed, v.failure
    assert v.timing["median_ms"] >= sleep  # the figure: the judge's clock
    # The reports were shaved (noise lengthens both clocks alike, and the relay only the judge's).
    gaps = [f - r for f, r in zip(v.timing["times_ms"], v.timing["reported_ms"], strict=True)]
    assert min(gaps) >= shave - 0.5, gaps


def test_a_forger_past_the_tolerance_gains_nothing_on_the_cpu_and_is_named_in_a_note():
    """On the CPU the figure is the judge's own clock: the shaved reports change nothing, and a
    disagreement (which a busy machine makes too) is a note, never a rejection."""
    v = judge_file(SOL / "forges_report.py", seed=65, env={"GEMMLAB_TEST_SLEEP_MS": "100",
                                                         "GEMMLAB_TEST_SHAVE_MS": "30"}, **TIMED)
    assert v.passed and v.exit_code == 0, v.failure
    assert v.timing["median_ms"] >= 100.0
    note = next(n for n in v.notes if n.startswith("timing disagreement"))
    assert "the tolerance is 10 % + 1 ms" in note and "the judge's own clock" in note


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_the_tolerance_is_exactly_what_a_forger_gets(device):
    """Every call shaved by just under the allowance passes; by just over, it is a disagreement."""
    real, overhead = 10.0, 0.3
    for inside, expected in ((0.98, ""), (1.02, "timing disagreement")):
        reported = real - inside * (CROSSCHECK_REL * real + CROSSCHECK_ABS_MS[device]) / (1 + CROSSCHECK_REL)
        verdict = crosscheck([reported] * 10, [real + overhead] * 10, overhead, device)
        assert verdict.startswith(expected) if expected else verdict == "", (inside, verdict)


def test_the_judge_s_clock_covers_the_time_after_the_inputs_are_written(monkeypatch):
    """A thread of the solution's could start on A and B as soon as they are in the shared buffers,
    before solve is called: that time is on the judge's clock. Here the judge itself dawdles 30 ms
    between writing the inputs and sending the request (in its guard fill), on trusted code."""
    import time

    import torch

    from gemmlab.judge import remote
    from gemmlab.judge.cases import timed_case
    from gemmlab.judge.limits import Limits
    from gemmlab.judge.yardstick import Yardstick
    from gemmlab.reference import Precision

    fill = remote.guards.fill

    def slow_fill(*args):
        time.sleep(0.03)
        fill(*args)

    monkeypatch.setattr(remote.guards, "fill", slow_fill)
    yard = Yardstick(torch.device("cpu"), Limits("cpu"), (16, 16, 16))
    try:
        assert yard.remote.load() is None
        out = yard.remote.call(timed_case((16, 16, 16), 0), 1, Precision.FP32)
        assert out.result.passed and out.ms < 20 and out.wall_ms >= 30, (out.ms, out.wall_ms)
    finally:
        yard.close()


def test_one_slow_wake_up_among_three_calls_is_not_a_verdict():
    assert crosscheck([1.0, 1.0, 1.0], [1.3, 1.3, 30.0], 0.3, "cpu") == ""
    assert "timing disagreement" in crosscheck([1.0, 1.0, 1.0], [1.3, 30.0, 30.0], 0.3, "cpu")


# -- timing hygiene ----------------------------------------------------------------------------

H200 = {"sm_count": 132, "fp32_lanes": 128}


def test_the_ffma_floor_of_the_h200_at_its_clock():
    floor = hygiene.ffma_floor_ms((8192, 6144, 4096), clock_mhz=1980, **H200)
    # 412.3 GFLOP at 132 × 128 × 2 FLOP × 1.98 GHz = 66.9 TFLOP/s.
    assert floor == pytest.approx(6.163, abs=0.002)


def test_a_strict_fp32_time_below_the_floor_is_impossible_with_the_reason():
    floor = hygiene.gpu_floor((8192, 6144, 4096), clock_mhz=1980, source="the fastest clock seen during the calls",
                              **H200)
    assert hygiene.impossible(7.9, floor) == ""
    why = hygiene.impossible(5.0, floor)
    assert why.startswith("impossible timing: the timed calls took 5.0000 ms, below the FP32 FMA floor of 6.16")
    assert "132 SMs × 128 FMA lanes" in why and "1980 MHz" in why and "--precision fp32x3" in why


def test_the_cpu_floor_counts_every_cpu_at_a_clock_above_any_cpu_s(monkeypatch):
    monkeypatch.setattr(hygiene.os, "cpu_count", lambda: 2)
    floor = hygiene.cpu_floor((128, 128, 128))
    # 4.19 MFLOP at 2 × 64 FLOP × 7 GHz = 896 GFLOP/s.
    assert floor["floor_ms"] == pytest.approx(0.00468, abs=1e-5) and floor["cpus"] == 2


def test_a_cpu_figure_below_the_floor_gets_no_rate_and_no_ratio_not_a_rejection():
    """On the CPU a solution's helper working beside the harness's round trip shaves the figure, and a
    busy machine jitters it (test_judge_busy's right files fall below the floor there): below what the
    CPUs can compute there is no rate, no "38× CPU torch", and the verdict stands."""
    v = judge_file(SOL / "right_torch.py", seed=61, perf=False, groups=["example"], time_shape=(128, 128, 128),
                   iters=5, warmup=1)
    assert v.passed, v.failure
    timing = dict(v.timing)
    verdict = Verdict(file="f", framework="torch", seed=1, device="cpu")
    isolate._no_rate_below(timing, {**v.timing["fma_floor"], "floor_ms": timing["median_ms"] * 2}, verdict)
    add_baseline(timing, "CPU torch", 0.1)
    assert timing["tflops"] is None and timing["ratio_vs_baseline"] is None
    assert verdict.notes[0].startswith("no rate given: the median") and verdict.failure == ""


def test_a_solution_s_persisting_l2_is_reported():
    assert hygiene.l2_note({"l2_persisting": 0, "l2_window": 0}) == ""
    note = hygiene.l2_note({"l2_persisting": 30 << 20, "l2_window": 24 << 20})
    assert note.startswith("the solution set aside 30.0 MiB of L2 for persisting accesses and left an "
                           "access-policy window of 24.0 MiB")
    assert "returned every persisting line to normal before each call" in note
