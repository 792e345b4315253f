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


def test_no_module_imports_itself_through_others():
    assert ig.cycles() == []


def test_the_cycle_finder_finds_a_circle():
    # the finder on a graph with one circle and one tail: a test that could not fail would pass here too
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset({"a"})}
    assert ig.cycles(graph) == [["a", "b", "c"]]


def test_the_launches_the_registry_and_the_tuner_share_are_apart_from_all_three():
    # gemmlab.launches is read by the registry and by tune's spaces and default: it reads neither.
    assert ig.reaches("gemmlab.launches", "gemmlab.registry") == []
    assert ig.reaches("gemmlab.launches", "gemmlab.tune") == []
    assert "gemmlab.launches" in ig.graph()["gemmlab.registry"]
    assert "gemmlab.launches" in ig.graph()["gemmlab.policy.spaces"]
    tune = [m for m in ig.modules() if m.startswith("gemmlab.tune.")]
    assert {m: ig.reaches(m, "gemmlab.registry") for m in tune if ig.reaches(m, "gemmlab.registry")} == {}


def test_the_registry_reads_the_policy_and_never_the_tuner():
    """Issue 53: what `default` runs lives in gemmlab.policy, below the registry; gemmlab.tune searches
    and writes records, and neither the registry nor the policy reaches it, lazily or not."""
    assert "gemmlab.policy.default" in ig.graph()["gemmlab.registry"]
    assert ig.reaches("gemmlab.registry", "gemmlab.tune") == []
    policy = [m for m in ig.modules() if m.startswith("gemmlab.policy.")]
    assert policy and {m: ig.reaches(m, "gemmlab.tune") for m in policy if ig.reaches(m, "gemmlab.tune")} == {}


def test_no_package_imports_itself_through_others():
    # One level up: gemmlab.bench, gemmlab.tune, gemmlab.registry, … as single nodes. A layer that
    # reaches back (ui → tune → ui, say) is a circle here even where no module is.
    def top(module: str) -> str:
        return ".".join(module.split(".")[:2])

    packages: dict[str, set[str]] = {}
    for module, targets in ig.graph().items():
        packages.setdefault(top(module), set()).update(top(t) for t in targets if top(t) != top(module))
    assert ig.cycles({k: frozenset(v) for k, v in packages.items()}) == []
