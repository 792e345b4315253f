"""`measure.energy`: joules per call from a counter that steps far more coarsely than one call."""

from __future__ import annotations

import time

import pytest

from gemmlab.measure import energy


def _counter(watts: float, period_s: float):
    """A fake NVML counter (mJ): the energy of `watts` since start, updated every `period_s`."""
    t0 = time.perf_counter()

    def read_mj() -> int:
        steps = int((time.perf_counter() - t0) / period_s)
        return round(steps * period_s * watts * 1e3)

    return read_mj


def test_a_block_reads_the_power_from_the_steps_inside_it():
    # 20 ms steps (a fifth of the H200's 100 ms) keep the test short; 300 calls of 1 ms.
    out = energy.block(_counter(400.0, 0.02), lambda: time.sleep(1e-3), 300, lambda: None)
    assert out["calls"] == 300 and out["seconds"] >= 0.3
    assert out["steps"] >= 5
    assert out["watts"] == pytest.approx(400.0, rel=0.1)


def test_a_block_shorter_than_two_steps_says_so_instead_of_a_figure():
    out = energy.block(_counter(400.0, 10.0), lambda: None, 3, lambda: None)
    assert out["watts"] is None and out["steps"] < 2


def test_without_a_gpu_every_name_gets_a_note_and_no_figure(monkeypatch):
    monkeypatch.setattr(energy, "meter", lambda: energy.Meter(None, "no CUDA GPU"))
    out = energy.per_call({"a": lambda: None, "b": lambda: None}, {"a": 1.0, "b": 2.0})
    assert out == {"a": {"joules_per_call": None, "note": "no CUDA GPU"},
                   "b": {"joules_per_call": None, "note": "no CUDA GPU"}}


def test_joules_per_call_is_power_times_the_block_over_its_calls(monkeypatch):
    import torch

    monkeypatch.setattr(energy, "meter", lambda: energy.Meter(_counter(250.0, 0.02)))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    out = energy.per_call({"slow": lambda: time.sleep(2e-3), "fast": lambda: time.sleep(1e-3)},
                          {"slow": 2.0, "fast": 1.0}, rounds=2, block_s=0.25)
    for name, f in out.items():
        assert f["watts"] == pytest.approx(250.0, rel=0.1), name
        assert f["joules_per_call"] == pytest.approx(f["watts"] * f["seconds"] / f["calls"])
    # Time per call sets energy per call at equal power: the slow call costs about twice the fast.
    assert out["slow"]["joules_per_call"] / out["fast"]["joules_per_call"] == pytest.approx(2.0, rel=0.3)


def test_tflop_per_joule():
    assert energy.tflop_per_joule(2 * 10**12, 0.5) == pytest.approx(4.0)
    assert energy.tflop_per_joule(10, None) is None


@pytest.mark.gpu
def test_on_the_gpu_a_bench_record_carries_joules_per_call_for_ours_and_cublas():
    from gemmlab.bench.run import run

    record = run(["default", "torch-tf32"], (2048, 2048, 2048), warmup=2, iters=5, seed=3, energy_rounds=1)
    rows = {r["name"]: r for r in record["results"]}
    for name in ("default", "torch", "torch-tf32"):
        e = rows[name]["energy"]
        # A board that draws between idle and its cap; per call, power × about the call's time.
        assert 50 < e["watts"] < 1000, (name, e)
        assert e["joules_per_call"] == pytest.approx(e["watts"] * e["seconds"] / e["calls"])
        assert rows[name]["tflop_per_j"] > 0
    assert rows["default"]["ratio_tflop_per_j_vs_cublas"] > 0
