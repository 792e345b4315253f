"""`--json`: one JSON document on stdout, with the fields README lists; messages on stderr."""

from __future__ import annotations

import json

import pytest

from gemmlab import registry
from gemmlab.bench import results
from gemmlab.ui import machine
from tests.clitools import HAS_GPU, invoke


def document(*args: str):
    result = invoke(*args, "--json")
    return result, json.loads(result.stdout)


def test_list_json_has_every_implementation_and_the_documented_fields():
    result, doc = document("list")
    assert result.exit_code == 0
    assert [d["name"] for d in doc] == [i.name for i in registry.reading_order()]
    assert sorted(d["name"] for d in doc) == sorted(i.name for i in registry.IMPLEMENTATIONS)
    assert all(tuple(d) == machine.LIST_FIELDS for d in doc)
    float4 = next(d for d in doc if d["name"] == "float4")
    assert float4["min_cc"] == [5, 0] and float4["tile"] == [64, 64, 32] and float4["family"] == "cuda"


def test_explain_json_by_rung_lists_each_implementation_with_its_launches():
    result, doc = document("explain", "7")
    assert result.exit_code == 0
    assert [d["name"] for d in doc] == ["float4", "float4-bk16", "float4-128"]
    first = doc[0]["launches"][0]
    assert first["kernel"].startswith("float4_tiled[BM=64,BK=32") and first["when"]
    assert doc[0]["launches"][-1]["when"] is None  # the fallback
    assert "16-byte" in doc[0]["explanation"] and doc[0]["intensity"] == pytest.approx(16.0)


def test_check_json_stdout_is_only_json_and_holds_every_case():
    result, doc = document("check", "torch", "naive", "--group", "example", "--seed", "5")
    assert result.exit_code == 0, result.output
    assert doc["seed"] == 5 and doc["summary"]["passed"] == (2 if HAS_GPU else 1)
    torch_entry, naive_entry = doc["implementations"]
    assert torch_entry["status"] == "passed"
    assert [c["case"] for c in torch_entry["cases"]] == ["example-1", "example-2"]
    assert set(torch_entry["cases"][0]) >= {"case", "group", "shape", "seed", "status", "figures"}
    if not HAS_GPU:
        assert naive_entry["status"] == "not run" and naive_entry["cases"] == []
        assert doc["summary"]["line"] == "1 passed, 0 failed, 1 not run (CUDA kernels need a CUDA GPU)"
    assert "passed" in result.stderr  # the summary line still reaches the user


def test_inspect_json_uses_stable_field_names():
    result, doc = document("inspect", "naive")
    assert result.exit_code == 0, result.output
    (row,) = doc
    assert set(row) == set(machine.INSPECT_FIELDS.values()) | {"sass"}
    assert row["registers"] > 0 and row["threads"] == 256 and row["sass"]["FFMA"] > 0
    # the schedule figures (sass.schedule): naive's loop is a chain of FFMAs from global loads
    assert row["sass"]["loop instructions"] > 0 and row["sass"]["FFMA bank conflicts"] is not None
    assert row["setmaxnreg"] is None  # naive trades no registers


def test_inspect_json_shows_what_warp_specialised_roles_keep_and_claim():
    result, doc = document("inspect", "wgmma-ws")
    assert result.exit_code == 0, result.output
    main = doc[0]
    claims = main["setmaxnreg"]
    assert main["sass"]["SETMAXREG"] >= 2 and claims["producer"] < main["registers"] < claims["consumer"]
    assert all(row["setmaxnreg"] is None for row in doc if "pre-pass" in row["kernel"])


@pytest.mark.skipif(HAS_GPU, reason="a CPU-sized run")
def test_bench_json_prints_the_record_it_writes(tmp_path):
    result, doc = document("bench", "torch", "--shape", "16", "16", "16", "--iters", "1",
                           "--warmup", "0", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    (path,) = tmp_path.rglob("*.json")
    assert results.validate(doc) and doc == json.loads(path.read_text())
