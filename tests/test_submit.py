"""The road to LeetGPU (issue 54): `gemmlab export` writes the Triton and PyTorch rungs too, and
`gemmlab submit` writes a rung (or takes a file), checks what LeetGPU checks, says what its
precision means for LeetGPU's 1e-4 check, explains the sweep's counts outside it, and lists the steps."""

from __future__ import annotations

import ast
import json

import pytest

from gemmlab import registry
from gemmlab.export import leetgpu
from gemmlab.export.document import PYTHON_FORMATS, filename
from tests.bookbuild import ROOT
from tests.clitools import assert_no_traceback, assert_one_line, invoke

SOL = ROOT / "tests" / "fixtures" / "solutions"
PYTHON_RUNGS = [i.name for i in registry.IMPLEMENTATIONS if i.family in PYTHON_FORMATS]


@pytest.mark.parametrize("name", PYTHON_RUNGS)
def test_a_python_rung_exports_as_one_file_that_imports_nothing_of_gemmlab(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    result = invoke("export", name)
    assert result.exit_code == 0, result.output
    impl = registry.REGISTRY[name]
    path = tmp_path / filename(impl)
    tree = ast.parse(path.read_text())
    modules = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert "gemmlab" not in modules and not any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(tree))
    assert any(isinstance(n, ast.FunctionDef) and n.name == "solve" for n in tree.body)
    assert path.read_text().startswith(f"# {path.name}: gemmlab step {impl.step_label} `{name}`")
    # A file named triton.py or torch.py would shadow the package it imports.
    assert "-" in path.stem and path.stem not in ("triton", "torch")


def test_export_counts_launches_in_words(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("export", "naive")
    assert result.exit_code == 0 and "(naive, 1 launch);" in result.output, result.output


@pytest.mark.parametrize("name", ["torch", "triton"])
def test_an_exported_python_rung_is_accepted_by_the_judge(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    assert invoke("export", name).exit_code == 0
    path = tmp_path / filename(registry.REGISTRY[name])
    result = invoke("judge", path, "--no-perf", "--group", "example", "--group", "leetgpu", "--iters", "1",
                    "--warmup", "0")
    assert result.exit_code == 0 and "ACCEPTED" in result.output, result.output


def test_submit_writes_default_checks_it_and_explains_the_sweep_s_counts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("submit", "default")
    assert_no_traceback(result)
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert (tmp_path / "default.cu").exists() and "NO " not in result.output
    for what in ("language: CUDA", "solve:", "one file:", "size:", "strict FP32", leetgpu.CHALLENGE_URL,
                 "gemmlab judge default.cu"):
        assert what in out, what
    sweep = json.loads((ROOT / "results" / "h200-sweep.json").read_text())
    counted = leetgpu.violations(sweep, "default")
    assert counted, "the committed sweep has elements outside LeetGPU's tolerance for default"
    for v in counted:
        assert f"{v['label']} {v['outside']} of {v['numel']:,}" in out
        assert f"{v['label']} {v['own_exact']} (cuBLAS {v['cublas_exact']})" in out


def test_a_tf32_rung_is_written_but_not_ready(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("submit", "torch-tf32")
    assert result.exit_code == 1 and "WARNING: TF32" in result.output, result.output
    assert (tmp_path / "torch-tf32-solution.py").exists()
    # The way out it names is strict FP32: 3xTF32 is off cuBLAS's result too (the next test).
    assert "Submit a strict FP32 rung instead (default)" in " ".join(result.output.split())


@pytest.mark.parametrize("name", ["tf32", "torch-tf32"])
def test_an_exported_tf32_file_is_judged_by_its_first_line_not_as_strict_fp32(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    assert invoke("export", name).exit_code == 0
    path = tmp_path / filename(registry.REGISTRY[name])
    assert leetgpu.declared(path) == (name, "tf32")
    result = invoke("submit", path)
    out = " ".join(result.output.split())
    assert result.exit_code == 1 and "WARNING: TF32" in out and f"written by gemmlab export {name}" in out, out
    said = invoke("submit", path, "--precision", "fp32")  # the user's word wins, and is told the difference
    assert said.exit_code == 0 and f"its first line says gemmlab export {name} (tf32)" in " ".join(said.output.split())


def test_a_3xtf32_file_is_not_called_what_leetgpu_expects(tmp_path, monkeypatch):
    """README: what passes LeetGPU's check is a strict-FP32 rung; 3xTF32, nearer the exact product,
    leaves elements outside 1e-4 of cuBLAS's result (the bench record counts them, and `violations`
    reads a bench record's one shape as well as a sweep's)."""
    monkeypatch.chdir(tmp_path)
    result = invoke("submit", "3xtf32")
    out = " ".join(result.output.split())
    assert result.exit_code == 0 and "strict FP32 is what it expects" in out, result.output
    assert "as accurate as FP32" not in out
    latest = json.loads((ROOT / "results" / "h200-latest.json").read_text())
    [v] = leetgpu.violations(latest, "wgmma-3xtf32")
    row = next(r for r in latest["results"] if r["name"] == "wgmma-3xtf32")
    assert v["label"] == "×".join(map(str, latest["shape"])) and v["outside"] == row["figures"]["leetgpu_violations"] > 0


@pytest.mark.parametrize("text,suffix,wrong", [
    ("import torch\ndef solve(a, b, c, M, N):\n    pass\n", ".py", "solve takes 5 arguments"),
    ("import torch\nimport helper\ndef solve(a, b, c, M, N, K):\n    pass\n", ".py", "imports modules beside it"),
    ('#include "helper.cuh"\nextern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {}\n',
     ".cu", "includes files beside it"),
    ("__global__ void k() {}\n", ".cu", "is missing"),
])
def test_submit_says_what_leetgpu_would_refuse(tmp_path, text, suffix, wrong):
    (tmp_path / "helper.py").write_text("")
    (tmp_path / "helper.cuh").write_text("")
    path = tmp_path / f"mine{suffix}"
    path.write_text(text)
    result = invoke("submit", path)
    assert result.exit_code == 1 and wrong in " ".join(result.output.split()), result.output


@pytest.mark.parametrize("suffix,text,other", [
    (".cu", "import torch\ndef solve(a, b, c, M, N, K):\n    torch.matmul(a, b, out=c)\n", "Python"),
    (".py", (SOL / "right.cu").read_text(), "CUDA C++"),
])
def test_a_file_whose_text_is_another_language_is_named_so(tmp_path, suffix, text, other):
    path = tmp_path / f"mine{suffix}"
    path.write_text(text)
    result = invoke("submit", path)
    out = " ".join(result.output.split())
    assert result.exit_code == 1 and f"NO language: a {suffix} file whose text is {other}" in out, out
    assert "Not ready: fix what says NO first" in out


def test_submit_takes_a_right_file_as_it_lies():
    result = invoke("submit", SOL / "right.cu")
    assert result.exit_code == 0 and "your file" in result.output, result.output


def test_submit_usage_errors_are_one_line(tmp_path):
    assert_one_line(invoke("submit", tmp_path / "nope.cu"), 2, "error:", "no such file")
    assert_one_line(invoke("submit", "flaot4"), 2, "error:")
    assert_one_line(invoke("submit", SOL / "right.cu", "--precision", "fp16"), 2, "error:", "unknown precision")
    (tmp_path / "notes.txt").write_text("x")
    assert_one_line(invoke("submit", tmp_path / "notes.txt"), 2, "error:", "not a solution file (.cu, .mojo, .py)")
    assert_one_line(invoke("submit", tmp_path), 2, "error:", "is a folder")


def test_submit_of_an_empty_file_counts_no_lines_and_no_solve(tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("")
    result = invoke("submit", empty)
    flat = " ".join(result.output.split())
    assert result.exit_code == 1 and "NO solve" in flat and "0 KB in 0 lines" in flat, result.output
