"""The buffering study's four arms differ only in buffering and tile size, and compile on a CPU."""

from __future__ import annotations

import pytest

from gemmlab.bench import studies
from gemmlab.cuda.compiler import HOPPER_ARCH

ARMS = studies.BUFFERING


def _fast(arm):
    return arm.launches[0]


def test_four_arms_one_per_cell():
    assert sorted(ARMS) == [("double", 64), ("double", 128), ("single", 64), ("single", 128)]
    for (buffers, tile), arm in ARMS.items():
        launch = _fast(arm)
        assert launch.tile == (tile, tile) and launch.buffers == (2 if buffers == "double" else 1)


def test_arms_share_step_micro_tile_bounds_checks_and_occupancy():
    for arm in ARMS.values():
        launch = _fast(arm)
        assert launch.depth == studies.STEP
        assert "EXACT_TILES" not in launch.defines, "every arm is bounds-checked"
        assert launch.defines.get("BK", studies.STEP) == studies.STEP
        assert launch.defines.get("MIN_BLOCKS", 1) == 1
        assert launch.defines.get("UNROLL_K", studies.STEP) == studies.STEP
        rows, cols = launch.tile
        assert rows * cols // launch.threads == 8 * 4, "an 8×4 micro-tile per thread"
    by_tile = {}
    for (_, tile), arm in ARMS.items():
        by_tile.setdefault(tile, set()).add((_fast(arm).block, str(_fast(arm).when)))
    assert all(len(v) == 1 for v in by_tile.values()), "same block and precondition per tile"


@pytest.mark.parametrize("cell", list(ARMS), ids=lambda c: f"{c[0]}-{c[1]}")
def test_arm_compiles_without_spills(cell):
    launch = _fast(ARMS[cell])
    res = launch.compile(HOPPER_ARCH).resources[launch.entry]
    assert res.spills == 0 and res.smem_bytes == launch.static_smem, res


def test_resources_rows_are_the_arms_own_kernels():
    rows = studies.resources(HOPPER_ARCH)
    assert [r["name"] for r in rows] == [arm.name for arm in ARMS.values()]
    assert all("EXACT_TILES" not in r["kernel"] and r["spills"] == 0 for r in rows)


def test_each_sweep_point_keeps_the_clocks_it_was_timed_at():
    """A sweep point is a bench run of its own: its clock and power go with it (None on a CPU,
    where nothing samples them)."""
    import torch

    record = studies.sweep(["torch"], warmup=0, iters=1, shapes=[("tiny", (8, 8, 8)), ("odd", (3, 5, 7))])
    assert [p["label"] for p in record["points"]] == ["tiny", "odd"]
    for point in record["points"]:
        assert "clocks_during_timing" in point
        assert (point["clocks_during_timing"] is None) == (not torch.cuda.is_available())


def test_a_sweep_gives_each_name_the_first_place_in_turn(monkeypatch):
    """At tiny shapes the name listed first after cuBLAS read slower than the same kernel listed later
    (H200, 2026-12-02): each shape of a sweep starts one name further along, the baselines first."""
    orders = []

    def fake_run(names, shape, warmup, calls, energy=None, energy_rounds=1):
        orders.append(list(names))
        return {"date": "d", "device": {"name": "cpu"}, "versions": {}, "clocks_during_timing": None,
                "results": [{"name": x} for x in names]}

    monkeypatch.setattr(studies, "run", fake_run)
    shapes = [(f"s{i}", (i + 1, 2, 3)) for i in range(4)]
    record = studies.sweep(["torch", "small", "thin"], warmup=0, iters=1, shapes=shapes)
    assert orders == [["torch", "small", "thin"], ["torch", "thin", "small"]] * 2  # the baseline stays first
    assert record["names"] == ["torch", "small", "thin"]
    studies.sweep(["small", "thin", "default", "torch"], warmup=0, iters=1, shapes=shapes[:3])
    assert orders[4:] == [["torch", "small", "thin", "default"], ["torch", "thin", "default", "small"],
                          ["torch", "default", "small", "thin"]]
