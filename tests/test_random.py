"""`gemmlab sweep --random`: the shapes it draws, the summary it states, the plots it makes."""

from __future__ import annotations

import math

import pytest

from gemmlab.bench import randomshapes, report, summary
from tests.clitools import assert_one_line, invoke


def test_the_draw_is_reproducible_in_range_and_shared_by_kind():
    shapes = randomshapes.draw(60, seed=7)
    assert shapes == randomshapes.draw(60, seed=7) and shapes != randomshapes.draw(60, seed=8)
    assert len(shapes) == 60
    want = randomshapes.counts(60)
    assert sum(want.values()) == 60 and want["long-reduction"] == 12 and want["small"] == 12
    by_kind = {k.name: k for k in randomshapes.KINDS}
    for kind, shape in shapes:
        spec = by_kind[kind]
        for value, (lo, hi) in zip(shape, (spec.m, spec.n, spec.k), strict=True):
            assert lo <= value <= hi
    assert [k for k, _ in shapes].count("large") == want["large"]
    # Odd sizes come as often as even ones: the draw is not rounded to friendly multiples.
    assert any(s[1] % 4 for _, s in shapes) and any(s[2] % 4 for _, s in shapes)


def test_log_uniform_reaches_both_ends():
    values = [randomshapes.draw(1, seed=s)[0][1][0] for s in range(400)]
    assert min(values) <= 3 and max(values) >= 3000


def _point(label, shape, times, violations=None):
    violations = violations or {}
    return {"label": label, "shape": list(shape), "results": [
        {"name": n, "passed": t is not None, "median_ms": t,
         "figures": {"exact_violations": violations.get(n, 0)}} for n, t in times.items()]}


def _record(points):
    return {"names": ["torch", "default", "splitk", "small"], "points": points}


def test_summary_states_geomean_min_p10_worst_gap_and_accuracy():
    points = [
        _point("a", (1024, 1024, 1024), {"torch": 1.0, "default": 0.5, "splitk": 0.6, "small": 2.0}),
        _point("b", (512, 512, 512), {"torch": 1.0, "default": 2.0, "splitk": 1.0, "small": 1.0},
               violations={"default": 3, "torch": 1}),
        _point("c", (100, 64, 100), {"torch": 0.010, "default": 0.012, "splitk": 0.020, "small": 0.009}),
    ]
    s = summary.summarize(_record(points))
    assert "torch" not in s
    d = s["default"]
    assert d["points"] == 3
    assert d["geomean"] == pytest.approx(math.exp((math.log(2) + math.log(0.5) + math.log(1 / 1.2)) / 3))
    assert d["min"] == pytest.approx(0.5)
    assert d["worst_outputs_ge_256x256"] == {"ratio": pytest.approx(0.5), "label": "b"}
    assert d["worst_gap_us_outputs_lt_256x256"]["us"] == pytest.approx(2.0)
    assert d["accuracy_worse_than_cublas"] == [{"label": "b", "ours": 3, "cublas": 1}]
    # At b, splitk and small ran 1.0 ms where default ran 2.0: 100 % behind; at c small is 33 % ahead.
    assert d["vs_best_other_strict"]["slowdown"] == pytest.approx(1.0)
    assert d["vs_best_other_strict"]["label"] == "b"
    assert s["small"]["p10"] == pytest.approx(sorted([0.5, 1.0, 10 / 9])[0] + 0.2 * (1.0 - 0.5))


def test_a_failed_row_is_named_and_not_averaged():
    points = [_point("a", (300, 300, 300), {"torch": 1.0, "default": None, "splitk": 1.0, "small": 1.0})]
    s = summary.summarize(_record(points))
    assert s["default"] == {"points": 0, "failed": ["a"]}
    assert any(line.startswith("| default | 0 |") for line in summary.lines(s))


def test_the_random_plot_is_written(tmp_path):
    points = [_point(f"p{i}", (64 * (i + 1), 256 * (i + 1), 64), {"torch": 1.0, "default": 0.9 + 0.1 * i,
                                                                  "splitk": 1.0, "small": 1.1}) for i in range(4)]
    record = _record(points) | {"device": {"name": "test GPU"}, "random": {"n": 4, "seed": 1}}
    for p in record["points"]:
        for r in p["results"]:
            r["ratio_vs_cublas"] = 1.0 / r["median_ms"]
    path = report.plot_random(record, tmp_path)
    assert path.exists() and path.stat().st_size > 10_000


def test_random_sweep_on_a_cpu_says_it_needs_a_gpu_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_one_line(invoke("sweep", "--random", "5", "--seed", "2"), 3, "no CUDA GPU")
    assert not any(tmp_path.iterdir())
    assert_one_line(invoke("sweep", "--random", "0"), 2, "--random")
