"""The CLI commands run end to end (typer's test runner)."""

from __future__ import annotations

import torch
from typer.testing import CliRunner

from gemmlab.cli import app

runner = CliRunner()


def test_list_shows_every_rung():
    from gemmlab import registry

    result = runner.invoke(app, ["list"])
    assert result.exit_code == 0, result.output
    for impl in registry.IMPLEMENTATIONS:
        assert impl.name in result.output


def test_explain():
    result = runner.invoke(app, ["explain", "float4"])
    assert result.exit_code == 0, result.output
    assert "N % 4 == 0" in result.output and "float4_tiled" in result.output


def test_unknown_name_is_an_error():
    result = runner.invoke(app, ["check", "nope"])
    assert result.exit_code == 2 and "unknown implementation" in result.output


def test_check_passes_torch_and_marks_cuda_not_run():
    result = runner.invoke(app, ["check", "torch", "naive", "--seed", "3", "--group", "notes"])
    assert result.exit_code == 0, result.output
    assert "pass" in result.output
    if not torch.cuda.is_available():
        assert "naive: not run" in result.output


def test_check_custom_shape():
    result = runner.invoke(app, ["check", "torch", "--shape", "7", "9", "11"])
    assert result.exit_code == 0, result.output
    assert "7×9×11" in result.output
