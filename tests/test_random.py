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
    assert d["vs_best_other_strict"]["label"] == "b" and d["vs_best_other_strict"]["past_limit"] == 2
    assert s["small"]["p10"] == pytest.approx(sorted([0.5, 1.0, 10 / 9])[0] + 0.2 * (1.0 - 0.5))


def test_behind_another_rung_counts_only_other_kernels_where_asked():
    """At b `small` ran default's own kernel 5 % faster (the timing's noise; marked as its rung's
    fallback, which changes nothing that runs) and splitk another kernel 2 % faster: against every rung default is 5 % behind small; against rungs that ran
    another kernel, 2 % behind splitk, within the 3 % limit."""
    points = [_point("a", (1024, 1024, 1024), {"torch": 1.0, "default": 0.5, "splitk": 0.6, "small": 2.0}),
              _point("b", (512, 512, 512), {"torch": 1.0, "default": 1.05, "splitk": 1.0294, "small": 1.0})]
    for p in points:
        for r in p["results"]:
            r["kernel"] = {"default": "small[x] (split)", "small": "small[x] (split fallback)",
                           "splitk": "bigtile[y]"}.get(r["name"])
    s = summary.summarize(_record(points))["default"]
    assert s["vs_best_other_strict"]["best"] == "small" and s["vs_best_other_strict"]["past_limit"] == 1
    assert s["vs_best_other_kernel"]["best"] == "splitk" and s["vs_best_other_kernel"]["past_limit"] == 0
    assert s["vs_best_other_kernel"]["slowdown"] == pytest.approx(1.05 / 1.0294 - 1)
    text = "\n".join(summary.lines(summary.summarize(_record(points))))
    assert "5.0 % behind small at b (1 shapes more than 3 % behind)" in text
    assert "against rungs that ran another kernel than `default` there: 2.0 % behind splitk at b (0 shapes" in text


def test_host_overhead_is_stated_with_the_hosts_own_time_where_the_record_has_it():
    """The issue's measure (per-call time on an idle GPU minus GPU time), and of it the host's own
    clock around a queued call, in µs; a record from before the host's time says the first alone."""
    points = [_point("a", (1024, 1024, 1024), {"torch": 1.0, "default": 0.5, "splitk": 0.6, "small": 2.0})]
    record = _record(points) | {"host_overhead": [
        {"shape": [1024, 1024, 1024], "default": {"overhead_ms": 0.0316, "host_ms": 0.0128},
         "torch": {"overhead_ms": 0.0761, "host_ms": 0.0152}},
        {"shape": [2048, 2048, 2048], "default": {"overhead_ms": 0.010}, "torch": {"overhead_ms": 0.020}}]}
    s = summary.summarize(record)
    assert s["default"]["host_overhead_us"][0] == {"shape": [1024, 1024, 1024], "us": pytest.approx(31.6),
                                                   "host_us": pytest.approx(12.8)}
    assert "host_us" not in s["default"]["host_overhead_us"][1]
    text = "\n".join(summary.lines(s))
    assert "in brackets, the host's own time a call" in text
    assert "default 1024×1024×1024: 31.6 (host 12.8), 2048×2048×2048: 10.0" in text
    assert "torch 1024×1024×1024: 76.1 (host 15.2)" in text
    old = _record(points) | {"host_overhead": [{"shape": [1024, 1024, 1024], "default": {"overhead_ms": 0.0316}}]}
    assert "in brackets" not in "\n".join(summary.lines(summary.summarize(old)))


def test_a_failed_row_is_named_and_not_averaged():
    points = [_point("a", (300, 300, 300), {"torch": 1.0, "default": None, "splitk": 1.0, "small": 1.0})]
    s = summary.summarize(_record(points))
    assert s["default"] == {"against": "torch", "points": 0, "failed": ["a"]}
    assert any(line.startswith("| default | torch | 0 |") for line in summary.lines(s))


def test_a_tf32_rung_is_held_to_cublas_tf32_and_energy_is_a_ratio_of_joules():
    def row(name, ms, joules):
        return {"name": name, "passed": True, "median_ms": ms, "figures": {"exact_violations": 0},
                "energy": {"joules_per_call": joules}}

    point = {"label": "a", "shape": [1024, 1024, 1024], "results": [
        row("torch", 1.0, 0.9), row("torch-tf32", 0.25, 0.3), row("wgmma-swap", 0.2, 0.2), row("default", 0.8, 1.0)]}
    s = summary.summarize({"names": ["torch", "torch-tf32", "wgmma-swap", "default"], "points": [point]})
    assert "torch-tf32" not in s and "torch" not in s
    assert s["wgmma-swap"]["against"] == "torch-tf32" and s["wgmma-swap"]["geomean"] == pytest.approx(1.25)
    assert s["wgmma-swap"]["tflop_per_j"]["geomean"] == pytest.approx(1.5)  # 0.3 J over 0.2 J
    assert s["default"]["against"] == "torch" and s["default"]["tflop_per_j"]["geomean"] == pytest.approx(0.9)
    # Without cuBLAS TF32 in the record, a TF32 rung falls back to cuBLAS FP32.
    only = {"names": ["torch", "wgmma-swap"], "points": [point]}
    assert summary.summarize(only)["wgmma-swap"]["against"] == "torch"


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


def _sweep(points, date="2026-12-01T00:00:00+00:00", seed=9):
    return {"schema": 1, "study": "sweep", "date": date, "random": {"n": len(points), "seed": seed}, "points": points,
            "names": ["torch", "default", "tma", "small"], "device": {"name": "NVIDIA H200"}}


def _tune_record():
    from gemmlab.policy import default as tuned_default

    record, _ = tuned_default.plan()
    return record


def test_calibration_replaces_a_winner_only_where_a_rung_beats_default_over_the_class():
    """Three many-waves-odd shapes where tma's own launch runs 10 % ahead of default: it becomes that
    class's winner, with the evidence; a micro class where default is ahead keeps its winner; a
    class with two shapes is left alone (too few)."""
    import json

    from gemmlab.policy.classes import classify
    from gemmlab.tune import calibrate

    record = _tune_record()
    sms = record["gpu"]["sm_count"]
    many = [(8191, 6143, 4095), (7001, 5001, 3001), (6001, 4001, 5001)]
    micro = [(10, 20, 30), (33, 44, 55), (7, 9, 11)]
    quarter_few = [(511, 4095, 511), (501, 4001, 503)]
    assert {classify(*s, sms).key for s in many} == {"many-waves-odd"}
    assert {classify(*s, sms).key for s in micro} == {"micro-odd"}
    points = ([_point(f"l{i}", s, {"torch": 1.0, "default": 0.95, "tma": 0.86, "small": 2.0}) for i, s in enumerate(many)]
              + [_point(f"m{i}", s, {"torch": 0.01, "default": 0.008, "tma": 0.03, "small": 0.0085})
                 for i, s in enumerate(micro)]
              + [_point(f"t{i}", s, {"torch": 1.0, "default": 2.0, "tma": 1.0, "small": 1.0}) for i, s in enumerate(quarter_few)])
    before = json.dumps(record, sort_keys=True)
    out = calibrate.calibrate(record, [_sweep(points)], ["tma", "small"])
    assert json.dumps(record, sort_keys=True) == before  # the input is not changed
    winner = out["classes"]["many-waves-odd"]["winner"]
    assert winner["rung"] == "tma" and winner["launch"] == "b-padded"  # an odd layout
    assert winner["knobs"] == calibrate.SPACES["tma"].current("b-padded")
    assert winner["calibrated"]["geomean"] == pytest.approx(1 / 0.86)
    assert out["classes"]["micro-odd"]["winner"] == record["classes"]["micro-odd"]["winner"]
    assert out["classes"]["quarter-wave-odd"]["winner"] == record["classes"]["quarter-wave-odd"]["winner"]
    entries = out["calibration"]["classes"]
    assert entries["many-waves-odd"]["chosen"] == "tma" and entries["many-waves-odd"]["points"] == 3
    assert entries["micro-odd"]["chosen"] is None and entries["quarter-wave-odd"]["scores"] == {}
    # The calibrated record is one `default` can dispatch by: every winner rebuilds.
    from gemmlab.policy.default import rebuild

    assert rebuild(winner).kernel.label in winner["kernel"]


def test_an_inherited_class_without_its_own_evidence_follows_its_source_with_its_own_layouts_launch():
    """many-waves-odd-n and one-wave-odd-n inherited their winners from many-waves-odd and one-wave-odd. With tma
    chosen for both sources: many-waves-odd-n, with no shape of its own, follows as tma's b-in-place
    launch (only N odd: B's rows are aligned); one-wave-odd-n, with three shapes where default leads,
    keeps its winner; a class that inherited nothing (one-wave-aligned) is untouched."""
    import copy

    from gemmlab.policy.classes import classify
    from gemmlab.tune import calibrate

    record = copy.deepcopy(_tune_record())
    sms = record["gpu"]["sm_count"]
    for key, source in (("many-waves-odd-n", "many-waves-odd"), ("one-wave-odd-n", "one-wave-odd")):
        record["classes"][key] |= {"winner": dict(record["classes"][source]["winner"]), "inherited": source}
    many = [(8191, 6143, 4095), (7001, 5001, 3001), (6001, 4001, 5001)]
    one_wave = [(601, 3001, 1001), (701, 2001, 901), (501, 2501, 1101)]
    one_wave_n = [(601, 3001, 1000), (701, 2001, 900), (501, 2501, 1100)]
    assert {classify(*s, sms).key for s in one_wave} == {"one-wave-odd"}
    assert {classify(*s, sms).key for s in one_wave_n} == {"one-wave-odd-n"}
    fast_tma = {"torch": 1.0, "default": 0.95, "tma": 0.86, "small": 2.0}
    points = ([_point(f"l{i}", s, fast_tma) for i, s in enumerate(many)]
              + [_point(f"s{i}", s, fast_tma) for i, s in enumerate(one_wave)]
              + [_point(f"n{i}", s, {"torch": 1.0, "default": 0.9, "tma": 0.99, "small": 2.0})
                 for i, s in enumerate(one_wave_n)])
    out = calibrate.calibrate(record, [_sweep(points)], ["tma", "small"])
    entries = out["classes"]
    assert entries["many-waves-odd"]["winner"]["launch"] == "b-padded"
    follower = entries["many-waves-odd-n"]["winner"]
    assert follower["rung"] == "tma" and follower["launch"] == "b-in-place"
    assert entries["many-waves-odd-n"]["inherited"] == "many-waves-odd"
    assert out["calibration"]["classes"]["many-waves-odd-n"]["followed"] == "many-waves-odd"
    assert entries["one-wave-odd"]["winner"]["rung"] == "tma"
    assert entries["one-wave-odd-n"]["winner"] == record["classes"]["one-wave-odd-n"]["winner"]
    assert entries["one-wave-aligned"]["winner"] == record["classes"]["one-wave-aligned"]["winner"]


def test_calibration_keeps_the_gpus_cubin_where_it_chooses_the_same_build_again():
    """Recalibrated where this NVRTC cannot name the GPU's cubin (digest None): a class whose
    winner is chosen again keeps the digest the GPU timed; a newly chosen one has none."""
    import copy

    from gemmlab.tune import calibrate

    record = copy.deepcopy(_tune_record())
    record["classes"]["many-waves-odd"]["winner"] |= {"launch": "another", "cubin": "an-older-build"}
    many = [(8191, 6143, 4095), (7001, 5001, 3001), (6001, 4001, 5001)]
    points = [_point(f"l{i}", s, {"torch": 1.0, "default": 0.95, "tma": 0.86, "small": 2.0}) for i, s in enumerate(many)]
    first = calibrate.calibrate(record, [_sweep(points)], ["tma", "small"], digest=lambda launch: None)
    assert first["classes"]["many-waves-odd"]["winner"]["cubin"] is None
    first["classes"]["many-waves-odd"]["winner"]["cubin"] = "timed-on-the-gpu"
    again = calibrate.calibrate(first, [_sweep(points)], ["tma", "small"], digest=lambda launch: None)
    assert again["classes"]["many-waves-odd"]["winner"]["cubin"] == "timed-on-the-gpu"


def test_calibration_pools_sweeps_that_timed_different_rungs_each_rung_on_its_own_shapes():
    """An earlier draw timed tma but not tma-warp; a later one tma-warp but not tma. Each rung is
    judged against default on the shapes it ran: tma-warp, 10 % ahead on its three, wins the class
    although the earlier sweep never ran it; tma, 2 % behind on its three, is weighed and left; a
    rung wrong at a shape it ran is never chosen, however fast."""
    from gemmlab.policy.classes import classify
    from gemmlab.tune import calibrate

    record = _tune_record()
    sms = record["gpu"]["sm_count"]
    early = [(8191, 6143, 4095), (7001, 5001, 3001), (6001, 4001, 5001)]
    late = [(5001, 7001, 3003), (6003, 3001, 4001), (4001, 5003, 6001)]
    assert {classify(*s, sms).key for s in early + late} == {"many-waves-odd"}
    first = [_point(f"e{i}", s, {"torch": 1.0, "default": 0.95, "tma": 0.97}) for i, s in enumerate(early)]
    second = [_point(f"l{i}", s, {"torch": 1.0, "default": 0.95, "tma-warp": 0.86, "splitk": None})
              for i, s in enumerate(late)]
    out = calibrate.calibrate(record, [_sweep(first, seed=3), _sweep(second, seed=42)], ["tma", "tma-warp", "splitk"])
    entry = out["calibration"]["classes"]["many-waves-odd"]
    assert entry["points"] == 6 and entry["chosen"] == "tma-warp"
    assert entry["compared"]["tma"]["points"] == 3 and entry["compared"]["tma-warp"]["points"] == 3
    assert entry["compared"]["tma-warp"]["default"] == pytest.approx(1 / 0.95)
    assert "splitk" not in entry["compared"]  # failed where it ran
    winner = out["classes"]["many-waves-odd"]["winner"]
    assert winner["rung"] == "tma-warp" and winner["launch"] == "b-padded"
    assert winner["calibrated"] == {"geomean": pytest.approx(1 / 0.86), "replaced": pytest.approx(1 / 0.95),
                                    "points": 3}
    # The earlier sweep alone, which never ran tma-warp, leaves the class as it was.
    alone = calibrate.calibrate(record, [_sweep(first, seed=3)], ["tma", "tma-warp"])
    assert alone["calibration"]["classes"]["many-waves-odd"]["chosen"] is None


def test_calibration_refuses_a_record_that_is_not_a_sweep_or_not_this_gpus(tmp_path):
    import json

    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(_sweep([]) | {"study": None}))
    assert_one_line(invoke("tune", "tma", "--calibrate", bench), 2, "is not a")
    other = tmp_path / "other.json"
    other.write_text(json.dumps(_sweep([]) | {"device": {"name": "NVIDIA A100"}}))
    assert_one_line(invoke("tune", "tma", "--calibrate", other), 2, "measured on NVIDIA A100")


def test_a_designed_sweep_counts_for_preludes_never_for_the_classes():
    """Shapes somebody chose (gemmlab sweep --shape) say where a prelude pays, but a class's winner
    is weighed only on drawn ones: the same rows as a designed sweep change no class."""
    from gemmlab.tune import calibrate

    record = _tune_record()
    many = [(8191, 6143, 4095), (7001, 5001, 3001), (6001, 4001, 5001)]
    rows = [_point(f"e{i}", s, {"torch": 1.0, "default": 0.95, "tma": 0.80}) for i, s in enumerate(many)]
    drawn = calibrate.calibrate(record, [_sweep(rows)], ["tma"])
    assert drawn["calibration"]["classes"]["many-waves-odd"]["chosen"] == "tma"
    designed = calibrate.calibrate(record, [_sweep(rows) | {"random": None}], ["tma"])
    assert designed["calibration"]["classes"]["many-waves-odd"] == {"points": 0, "scores": {}, "chosen": None}
    assert designed["calibration"]["sweeps"][0]["random"] is False
    short = [_point(f"s{i}", (2000 + i, 20, 2000), {"torch": 1.0, "default": 0.03, "short": 0.02})
             for i in range(3)]
    assert calibrate.calibrate(record, [_sweep(short) | {"random": None}], ["short"])["preludes"]["short"]


def test_a_prelude_earns_a_floor_on_the_shapes_it_applies_to_and_default_runs_it_first():
    """`short` (N ≤ 32) timed in a sweep: behind default at small outputs, ahead by 30 % and more
    from 2²⁰ outputs; its floor is the fewest outputs from which it led at every shape it applies
    to (shapes with N > 32 do not count), and `default` then runs it first, where N ≤ 32 and C has
    that many elements. A loss at its own bound (N = 32) keeps it to the shorter reductions where it
    led; a loss at the largest shape of every reduction it ran leaves no floor."""
    import dataclasses

    from gemmlab.cuda.needs import When
    from gemmlab.policy import default as tuned_default
    from gemmlab.policy import preludes
    from gemmlab.tune import calibrate

    record = {key: value for key, value in _tune_record().items() if key != "preludes"}  # none yet
    rows = [((64, 8, 64), 0.010, 0.012), ((300, 20, 300), 0.012, 0.0119), ((1024, 4, 1024), 0.020, 0.014),
            ((3000, 22, 3000), 0.060, 0.030), ((5675, 22, 5060), 0.085, 0.040), ((8192, 32, 8192), 0.2, 0.12)]
    points = [_point(f"s{i}", s, {"torch": 1.0, "default": d, "short": t}) for i, (s, d, t) in enumerate(rows)]
    points.append(_point("long", (1024, 33, 1024), {"torch": 1.0, "default": 0.02, "short": 0.04}))
    out = calibrate.calibrate(record, [_sweep(points)], ["short"])
    entry = out["preludes"]["short"]
    assert entry["outputs"] == 1024 * 1024 and entry["points"] == 4 and entry["launch"] == "short"
    assert entry["slowest"] == pytest.approx(0.020 / 0.014)
    assert [b["label"] for b in entry["below"]] == ["s0", "s1"]  # 64² lost, 300² led by less than the margin
    assert out["calibration"]["preludes"]["short"] == entry
    first = tuned_default.launches_from(out, ())[0]
    assert first.name == "prelude short" and first.entry == "short_n"
    assert first.when == dataclasses.replace(When(reduction=32), outputs=1024 * 1024)
    assert str(first.when) == "M·K ≥ 1048576, N ≤ 32" and entry["reduction"] == 32 and entry["longer"] == []
    assert tuned_default.launches_from(record, ())[0].name != "prelude short"  # none without a floor
    # A loss at its own bound, at the largest shape: the reductions up to the next N it led at.
    worse = points[:-2] + [_point("big", (8192, 32, 8192), {"torch": 1.0, "default": 0.1, "short": 0.12})]
    kept = calibrate.calibrate(out, [_sweep(worse)], ["short"])["preludes"]["short"]
    assert kept["reduction"] == 22 and kept["outputs"] == 1024 * 1024 and kept["points"] == 3
    assert [x["label"] for x in kept["longer"]] == ["big"]
    assert str(preludes.launches(dict(record, preludes={"short": kept}))[0].when) == "M·K ≥ 1048576, N ≤ 22"
    # A loss at the largest outputs of the shortest reduction too: no floor, and a prelude the
    # record had is dropped.
    worst = worse + [_point("wide", (8192, 4, 8192), {"torch": 1.0, "default": 0.05, "short": 0.06})]
    again = calibrate.calibrate(out, [_sweep(worst)], ["short"])
    assert "preludes" not in again and again["calibration"]["preludes"]["short"] is None
    # Sweeps that never timed the prelude leave the record's entry as it was.
    untimed = [_point("u", (5000, 20, 5000), {"torch": 1.0, "default": 0.05})]
    assert calibrate.calibrate(out, [_sweep(untimed)], ["short"])["preludes"]["short"] == entry
    # A prelude wrong at any shape it ran is never one.
    wrong = [dict(p) for p in points]
    wrong[3] = _point("s3", rows[3][0], {"torch": 1.0, "default": 0.06, "short": None})
    assert "preludes" not in calibrate.calibrate(record, [_sweep(wrong)], ["short"])
    assert preludes.applies(preludes.own("short"), 10, 32, 10) and not preludes.applies(preludes.own("short"), 10, 33, 10)


def test_a_point_where_default_ran_the_preludes_own_kernel_says_nothing_about_its_floor():
    """A draw made under an earlier floor: at 2529×2×3047 `default` ran `short` itself, 1 % apart
    from `short`'s own row (noise). That point neither raises the floor nor counts toward it."""
    from gemmlab.tune import calibrate

    record = {key: value for key, value in _tune_record().items() if key != "preludes"}
    rows = [((1024, 4, 1024), 0.020, 0.014), ((3000, 22, 3000), 0.060, 0.030), ((5675, 22, 5060), 0.085, 0.040)]
    points = [_point(f"s{i}", s, {"torch": 1.0, "default": d, "short": t}) for i, (s, d, t) in enumerate(rows)]
    same = _point("same", (2529, 2, 3047), {"torch": 1.0, "default": 0.0500, "short": 0.0505})
    for r in same["results"]:
        r["kernel"] = "short_n[MIN_BLOCKS=3]" if r["name"] != "torch" else None
    entry = calibrate.calibrate(record, [_sweep([*points, same])], ["short"])["preludes"]["short"]
    assert entry["outputs"] == 1024 * 1024 and entry["points"] == 3
    # The same times from a different kernel of default's are evidence: short trailed there.
    same["results"][1]["kernel"] = "small[BM=32,BN=64]"
    entry = calibrate.calibrate(record, [_sweep([*points, same])], ["short"])
    assert (entry.get("preludes") or {}).get("short") is None


def test_a_record_s_preludes_are_validated():
    from gemmlab.policy import record as rec

    good = dict(_tune_record(), preludes={"short": {"launch": "short", "outputs": 1 << 20}})
    assert rec.validate(good) is good
    for bad, words in (({"nope": {"outputs": 5}}, "unknown prelude"), ({"short": {"outputs": 0}}, "positive"),
                       ({"short": {"outputs": 5, "reduction": 0}}, "longest N")):
        with pytest.raises(rec.RecordError, match=words):
            rec.validate(dict(_tune_record(), preludes=bad))


def test_calibrate_takes_a_prelude_name_and_tune_does_not():
    assert_one_line(invoke("tune", "short"), 2, "no search space")
