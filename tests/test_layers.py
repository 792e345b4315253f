"""The layers do not reach back: checked on the import graph (tests/importgraph.py), lazy
imports inside functions included."""

from __future__ import annotations

from tests import importgraph as ig

#: What the measurement layer must never import: the code it measures and the code that reports.
ABOVE_MEASURE = ("gemmlab.bench", "gemmlab.judge", "gemmlab.tune", "gemmlab.registry", "gemmlab.cli",
                 "gemmlab.export", "gemmlab.kernels")


def _under(prefix: str) -> list[str]:
    return [m for m in ig.modules() if m == prefix or m.startswith(prefix + ".")]


def test_the_graph_sees_lazy_imports():
    # bench.studies imports bench.inspect inside a function only: the graph must still see it.
    assert "gemmlab.bench.inspect" in ig.graph()["gemmlab.bench.studies"]
    assert "gemmlab.measure.timing" in ig.graph()["gemmlab.judge.timing"]


def test_the_measurement_layer_imports_nothing_above_it():
    bad = {m: [t for p in ABOVE_MEASURE for t in ig.reaches(m, p)] for m in _under("gemmlab.measure")}
    assert {m: t for m, t in bad.items() if t} == {}


def test_bench_and_judge_do_not_import_each_other():
    bench_to_judge = {m: ig.reaches(m, "gemmlab.judge") for m in _under("gemmlab.bench")}
    judge_to_bench = {m: ig.reaches(m, "gemmlab.bench") for m in _under("gemmlab.judge")}
    assert {m: t for m, t in bench_to_judge.items() if t} == {}
    assert {m: t for m, t in judge_to_bench.items() if t} == {}


def test_bench_judge_and_tune_time_through_the_measurement_layer():
    for user in ("gemmlab.bench.run", "gemmlab.judge.timing", "gemmlab.tune.search"):
        assert "gemmlab.measure.timing" in ig.graph()[user], user
