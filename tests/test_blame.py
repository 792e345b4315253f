"""A sanitizer finding is reported against every launch with that entry, with every rung that runs it."""

from __future__ import annotations

from typer.testing import CliRunner

from gemmlab import launches, registry, runtime
from gemmlab.blame import blame, users
from gemmlab.cli import app
from gemmlab.judge import sanitize as san

ALL = list(registry.IMPLEMENTATIONS)


def test_a_shared_fallback_names_every_rung_that_falls_back_to_it():
    falling_back = [i.name for i in ALL if launches.TILING2D in i.launches]
    assert len(falling_back) > 5
    assert blame(["tiling2d"], ALL) == ["tiling2d: " + ", ".join(falling_back)]


def test_an_entry_with_several_launches_lists_each_label():
    lines = blame(["float4_tiled"], ALL)
    labels = {impl.launch_label(launch).removesuffix(" (fallback)") for impl in ALL
              for launch in impl.launches if launch.entry == "float4_tiled"}
    assert {line.split(": ")[0] for line in lines} == labels
    bk32 = next(line for line in lines if line.startswith("float4_tiled[BM=64,BK=32,UNROLL_K=32,MIN_BLOCKS=2]:"))
    assert bk32.endswith(": float4, wmma-tf32")  # the checked path float4 and wmma-tf32 share


def test_pre_passes_and_unknown_kernels():
    assert set(users(ALL)["transpose_tf32"]["transpose_tf32"]) == {"wgmma-tma", "wgmma-ws"}
    assert blame(["cub_reduce"], ALL) == ["cub_reduce: not a gemmlab kernel"]


def test_check_sanitize_reports_by_launch(monkeypatch):
    monkeypatch.setattr(runtime, "has_gpu", lambda: True)
    monkeypatch.setattr(san, "executable", lambda: "/bin/true")
    monkeypatch.setattr(san, "sanitize_check", lambda names, tool: san.Finding(
        tool, 1 if tool == "memcheck" else 0, ["tiling2d"] if tool == "memcheck" else [], "Invalid read"))
    result = CliRunner().invoke(app, ["check", "--sanitize", "float4", "double-buffer-64", "naive"],
                                env={"COLUMNS": "250"})
    assert result.exit_code == 1, result.output
    assert "tiling2d: float4, double-buffer-64" in result.output
