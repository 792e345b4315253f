"""Benchmark records: statistics, the JSON schema, reports and plots, inspect — all without a GPU."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gemmlab.bench import report, results
from gemmlab.cli import app
from gemmlab.measure.timing import summarize, tflops

FIXTURE = Path(__file__).parent / "fixtures" / "bench_record.json"


def test_summarize():
    s = summarize([3.0, 1.0, 2.0, 10.0])
    assert s == {"median_ms": 2.5, "mean_ms": 4.0, "min_ms": 1.0, "max_ms": 10.0}
    assert tflops(2 * 10**12, 1000.0) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        summarize([])


def test_fixture_record_is_valid():
    rec = results.load(FIXTURE)
    assert rec["device"]["name"] and rec["shape"] == [8192, 6144, 4096]


@pytest.mark.parametrize("mutate,message", [
    (lambda r: r.pop("device"), "device"),
    (lambda r: r["results"][0].pop("passed"), "passed"),
    (lambda r: r["results"][0].pop("mean_ms"), "mean_ms"),
    (lambda r: r["results"][0].update(min_ms=1e9), "median outside"),
    (lambda r: r.update(schema=2), "schema"),
])
def test_schema_rejects_broken_records(mutate, message):
    rec = json.loads(FIXTURE.read_text())
    results.validate(copy.deepcopy(rec))  # whole, it passes: the mutation is what fails it
    mutate(rec)
    with pytest.raises(results.SchemaError, match=message):
        results.validate(rec)


def test_report_renders_table_and_plots(tmp_path):
    rec = results.load(FIXTURE)
    md = report.markdown_table(rec)
    for row in rec["results"]:
        assert f"| {row['name']} |" in md
    paths = report.plot_ladder(rec, tmp_path)
    assert all(p.exists() and p.read_bytes()[:4] == b"\x89PNG" for p in paths)
    readme = "intro\n<!-- ladder:begin -->\nold\n<!-- ladder:end -->\nend\n"
    new = report.replace_block(readme, md, tag="ladder")
    assert "old" not in new and "| torch |" in new and new.endswith("end\n")


def test_report_cli(tmp_path):
    result = CliRunner().invoke(app, ["report", str(FIXTURE), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "ladder.md").exists() and (tmp_path / "ladder_tflops.png").exists()


def test_failed_row_is_reported_as_failed(tmp_path):
    rec = copy.deepcopy(results.load(FIXTURE))
    rec["results"][0].update(passed=False, reason="normalised max error 1e-1 > 2e-05 (fp32)")
    assert "FAIL: normalised max error" in report.markdown_table(rec)


def test_cpu_bench_writes_a_valid_record(tmp_path):
    result = CliRunner().invoke(app, ["bench", "torch", "triton", "--shape", "64", "64", "64",
                                      "--iters", "2", "--warmup", "1", "--out", str(tmp_path),
                                      "--csv", str(tmp_path / "t.csv")])
    assert result.exit_code == 0, result.output
    (path,) = tmp_path.rglob("*.json")
    rec = results.load(path)
    names = {r["name"] for r in rec["results"]}
    assert {"torch", "triton"} <= names and all(r["passed"] for r in rec["results"])
    assert (tmp_path / "t.csv").read_text().startswith("step,name,family")  # the step first (issue 53)


def test_inspect_without_gpu():
    result = CliRunner().invoke(app, ["inspect", "cp-async", "wmma-tf32", "naive"])
    assert result.exit_code == 0, result.output
    assert "LDGSTS" in result.output and "cp_async" in result.output


def test_inspect_dumps_each_kernels_sass_once(monkeypatch):
    """Every figure of a row (mix, setmaxnreg, schedule) is read from one cuobjdump listing."""
    from gemmlab import registry
    from gemmlab.bench.inspect import inspect_launches
    from gemmlab.cuda import sass

    dumped = []
    real = sass._dump
    monkeypatch.setattr(sass, "_dump", lambda cubin: dumped.append(cubin) or real(cubin))
    rows = inspect_launches([registry.get("wgmma-ws"), registry.get("splitk")])
    assert rows[0]["setmaxnreg"]  # wgmma-ws trades registers
    assert all(r["loop instructions"] for r in rows if r["name"] == "splitk" and not r["pre_pass"])
    assert len(dumped) == len(rows)


def study_record() -> dict:
    """A buffering record made from the bench fixture: its rows renamed to the four arms."""
    from gemmlab.bench import studies

    rec = copy.deepcopy(results.load(FIXTURE))
    timed = [r for r in rec["results"] if "median_ms" in r]
    rec["results"] = [timed[i % len(timed)] | {"name": arm.name, "median_ms": 10.0 + i}
                      for i, arm in enumerate(studies.BUFFERING.values())]
    rec["study"], rec["controls"] = "buffering", studies.CONTROLS
    rec["design"] = [{"buffers": b, "tile": t, "name": arm.name}
                     for (b, t), arm in studies.BUFFERING.items()]
    return rec


def test_design_table_of_the_buffering_study():
    table = report.design_table(study_record())
    assert "| 64×64 | 10.00 ms (single-64) | 12.00 ms (double-64) |" in table
    assert "| 128×128 | 11.00 ms (single-128) | 13.00 ms (double-128) |" in table
    assert "bounds-checked" in table


def test_each_precision_class_is_measured_against_its_own_ceiling():
    from gemmlab.measure.device import peak_for
    from gemmlab.reference import Precision

    ceilings = {"fp32": 66.9, "tf32": 535.0}
    assert peak_for(Precision.FP32, ceilings) == 66.9
    assert peak_for(Precision.TF32, ceilings) == 535.0
    assert peak_for(Precision.FP32X3, ceilings) == pytest.approx(535.0 / 3)
    assert peak_for(Precision.FP32X3, {"fp32": None, "tf32": None}) is None


def test_every_records_versions_name_the_tree_measured(monkeypatch):
    """Bench, sweep, study and tune records carry `versions`; it names the commit of the tree
    (GEMMLAB_COMMIT on a GPU machine whose copy of .git may be stale), so a record's figures can
    be traced to the code that made them."""
    from gemmlab import provenance
    from gemmlab.measure import device

    monkeypatch.setenv("GEMMLAB_COMMIT", "abc1234")
    assert device.versions()["gemmlab_commit"] == "abc1234" == provenance.gemmlab_commit()
    monkeypatch.delenv("GEMMLAB_COMMIT")
    assert device.versions()["gemmlab_commit"] == provenance.gemmlab_commit() != "abc1234"


def test_each_implementation_takes_each_place_and_follows_each_other_equally_often():
    """time_interleaved orders its rounds as a balanced Latin square: no implementation is always
    the one timed right after another (on the H200 the call after cuBLAS's read 1.5–2.4 % slow,
    0.55 µs at tiny shapes), which starting each round one further along did not give."""
    from collections import Counter

    import torch

    from gemmlab.measure.timing import round_orders, time_interleaved

    for count in range(1, 10):
        rows = round_orders(count)
        assert all(sorted(r) == list(range(count)) for r in rows)
        places = Counter((p, x) for r in rows for p, x in enumerate(r))
        assert len(set(places.values())) == 1 and len(places) == count * count
        pairs = Counter(p for r in rows for p in zip(r, r[1:], strict=False))
        if count > 1:
            assert len(pairs) == count * (count - 1) and len(set(pairs.values())) == 1
    order: list[str] = []
    names = ["a", "b", "c", "d"]
    calls = {n: (lambda n=n: order.append(n)) for n in names}
    outs = {n: torch.zeros(1) for n in names}
    times, errors = time_interleaved(calls, outs, warmup=1, iters=8, gpu=False)
    assert errors == {} and all(len(times[n]) == 8 for n in names)
    rounds = [order[4 + 4 * i: 8 + 4 * i] for i in range(8)]  # after the 4 warm-up calls
    assert rounds == [[names[i] for i in r] for r in round_orders(4) * 2]
    followers = Counter(r[i + 1] for r in rounds for i in range(3) if r[i] == "a")
    assert followers == {"b": 2, "c": 2, "d": 2}
    assert time_interleaved({"x": lambda: 1 / 0}, {"x": torch.zeros(1)}, 1, 3, gpu=False)[0] == {}


def test_bench_resolves_each_name_once_and_asks_once_whether_it_runs(tmp_path, monkeypatch):
    """Issue 53: the command line resolved the names and asked `can_run_on`, then `measure`
    resolved them and asked again. Now it asks once (`bench.run.lineup`); the only other ask is
    `solve`'s own guard, once a process (emptied here, so it counts)."""
    from gemmlab import registry

    asked, resolved = [], []
    ask, resolve = registry.Implementation.can_run_on, registry.resolve
    monkeypatch.setattr(registry.Implementation, "can_run_on", lambda impl, device: asked.append(impl.name) or ask(impl, device))
    monkeypatch.setattr(registry, "resolve", lambda name: resolved.append(name) or resolve(name))
    monkeypatch.setattr(registry, "_RUNS_ON", {})
    result = CliRunner().invoke(app, ["bench", "torch", "--shape", "32", "32", "32", "--iters", "1",
                                      "--warmup", "0", "--no-energy", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert resolved == ["torch"]
    assert asked == ["torch", "torch"]  # the lineup, then solve's guard
