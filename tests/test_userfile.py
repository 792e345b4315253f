"""Judging a user's own file: right, wrong, crashing and cheating solutions, from outside their process."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from gemmlab.cli import app
from gemmlab.judge.isolate import judge_file
from gemmlab.judge.userfile import SolutionError, build_cuda, detect_framework

SOL = Path(__file__).parent / "fixtures" / "solutions"
FAST = dict(perf=False, groups=["example", "notes"], time_shape=(64, 64, 64), iters=3, warmup=1)
cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason="CPU behaviour")
has_nvcc = shutil.which("nvcc") is not None or Path("/usr/local/cuda/bin/nvcc").exists()


def test_right_solution_is_accepted_and_every_timed_call_checked():
    # 1024³: on a CPU a small call is shorter than the harness's own noise, and its figure 0 ms
    # (a 256³ call, about 0.1 ms, came out 0 ms on CI's busy 2-core machine, and so once did a
    # 512³ one, 2026-12-04); a 1024³ product takes tens of ms there
    v = judge_file(SOL / "right_torch.py", seed=1, **(FAST | {"time_shape": (1024, 1024, 1024)}))
    assert v.passed and v.exit_code == 0, (v.failure, v.log)
    assert v.framework == "torch" and len(v.cases) == 11
    assert all(c["status"] == "pass" for c in v.cases)
    t = v.timing
    # 1 warm-up + 3 timed calls, all checked (twice as many if noise forced a second measurement)
    assert t["median_ms"] > 0 and t["checked_calls"] in (4, 8) and len(t["times_ms"]) == 3
    assert t["baseline_ms"] > 0 and t["tflops"] > 0
    if not torch.cuda.is_available():
        assert t["baseline"].startswith("CPU torch") and "cuBLAS" not in t["baseline"]


def test_triton_solution_through_the_interpreter():
    v = judge_file(SOL / "triton_right.py", seed=2, **FAST)
    assert v.framework == "triton" and v.passed, (v.failure, v.log)


def test_wrong_solution_is_rejected_with_figures():
    v = judge_file(SOL / "wrong_torch.py", seed=3, **FAST)
    assert not v.passed and v.exit_code == 1
    failed = [c for c in v.cases if c["status"] == "fail"]
    assert failed and "normalised max error" in failed[0]["reason"]


def test_exception_is_a_failed_case():
    v = judge_file(SOL / "raises.py", seed=4, **FAST)
    assert not v.passed and all(c["status"] == "error" for c in v.cases)
    assert "illegal memory access" in v.cases[0]["reason"]


def test_segfault_is_a_verdict_not_a_crash():
    v = judge_file(SOL / "segfault.py", seed=5, **FAST)
    assert not v.passed and v.exit_code == 1 and "SIGSEGV" in v.failure


@pytest.mark.parametrize("cheat", ["caches_result.py", "skips_work.py"])
def test_cheats_are_caught(cheat):
    v = judge_file(SOL / cheat, seed=7, **FAST)
    assert not v.passed, v


def test_framework_detection():
    assert detect_framework(SOL / "right.cu") == "cuda"
    assert detect_framework(SOL / "triton_right.py") == "triton"
    assert detect_framework(SOL / "right_torch.py") == "torch"
    assert detect_framework(SOL / "right_jax.py") == "jax"


@pytest.mark.skipif(not has_nvcc, reason="nvcc not installed")
def test_cuda_compile_error_carries_the_log(tmp_path):
    with pytest.raises(SolutionError) as info:
        build_cuda(SOL / "broken.cu", "sm_90", tmp_path)
    assert "this_does_not_compile" in str(info.value) and "nvcc failed" in str(info.value)
    v = judge_file(SOL / "broken.cu", seed=8, **FAST)
    assert not v.passed and v.exit_code == 1 and "this_does_not_compile" in v.failure


@pytest.mark.skipif(not has_nvcc, reason="nvcc not installed")
def test_nvcc_compiles_in_the_sandbox_and_reads_no_file_but_the_solution(tmp_path):
    """A .cu that #includes a file from elsewhere (a key in the home folder, say) to carry it into its
    library or its compile log: nvcc runs in the judge's sandbox, so the include is refused and the
    file's bytes appear nowhere; the build leaves only the library, and a plain file still builds."""
    from gemmlab.judge import sandbox

    if sandbox.layers_here()["landlock"] != "on":
        pytest.skip(f"no Landlock here: {sandbox.layers_here()['landlock']}")
    secret = tmp_path / "home" / "key.txt"
    secret.parent.mkdir()
    secret.write_text('"CANARY-4711"')
    leak = tmp_path / "src" / "leak.cu"
    leak.parent.mkdir()
    leak.write_text(f'const char* key =\n#include "{secret}"\n;\n'
                    'extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {}\n')
    out = tmp_path / "out"
    with pytest.raises(SolutionError) as info:
        build_cuda(leak, "sm_90a", out)
    assert "Permission denied" in str(info.value) and "CANARY-4711" not in str(info.value)
    assert list(out.iterdir()) == []  # no library, no half-written one, no scratch folder left
    lib = build_cuda(SOL / "right.cu", "sm_90a", out)
    assert [p.name for p in out.iterdir()] == [lib.name]


@cpu_only
@pytest.mark.skipif(not has_nvcc, reason="nvcc not installed")
def test_cuda_file_without_gpu_compiles_then_cannot_run_here():
    v = judge_file(SOL / "right.cu", seed=9, **FAST)
    assert not v.passed and v.exit_code == 3 and "no CUDA GPU" in v.cannot_run


def test_new_writes_a_starter_that_judges_and_fails(tmp_path):
    runner = CliRunner()
    path = tmp_path / "mine.py"
    result = runner.invoke(app, ["new", "--framework", "torch", str(path)])
    assert result.exit_code == 0 and path.exists()
    v = judge_file(path, seed=10, **FAST)
    assert not v.passed and any("never written" in c["reason"] for c in v.cases)
    for fw, suffix in (("cuda", ".cu"), ("triton", ".py"), ("jax", ".py")):
        assert runner.invoke(app, ["new", "--framework", fw, str(tmp_path / f"s_{fw}{suffix}")]).exit_code == 0
        # a name without the language's suffix is one judge could not read as that language
        assert runner.invoke(app, ["new", "--framework", fw, str(tmp_path / f"s_{fw}")]).exit_code == 2


def test_a_file_named_like_a_package_is_refused_by_new_flagged_by_submit_and_harms_no_neighbour(tmp_path):
    """torch.py would be imported for torch, by itself and by every solution beside it that the
    judge's process ran in that folder."""
    runner = CliRunner()
    result = runner.invoke(app, ["new", "--framework", "torch", str(tmp_path / "torch.py")])
    assert result.exit_code == 2 and "would shadow the torch package" in result.output
    (tmp_path / "torch.py").write_text("raise SystemExit('the shadowing file ran')\n")
    shutil.copy(SOL / "right_torch.py", tmp_path / "mine.py")
    v = judge_file(tmp_path / "mine.py", seed=10, **FAST)
    assert v.passed, v.failure
    (tmp_path / "triton.py").write_text((SOL / "triton_right.py").read_text())
    flagged = runner.invoke(app, ["submit", str(tmp_path / "triton.py")])
    assert flagged.exit_code == 1 and "its name shadows the triton package" in " ".join(flagged.output.split())


def test_judge_cli_exit_codes():
    runner = CliRunner()
    ok = runner.invoke(app, ["judge", str(SOL / "right_torch.py"), "--no-perf", "--group", "notes",
                             "--iters", "2", "--warmup", "1"])
    assert ok.exit_code == 0 and "ACCEPTED" in ok.output, ok.output
    assert re.search(r"all (3|6) timed calls checked", ok.output)
    bad = runner.invoke(app, ["judge", str(SOL / "wrong_torch.py"), "--no-perf", "--group", "notes"])
    assert bad.exit_code == 1 and "REJECTED" in bad.output


def test_user_solutions_get_the_contracts_checks():
    from gemmlab.judge.userfile import load
    from tests.test_problem import _cases

    _, solve = load(SOL / "right_torch.py")
    for argument, args, error in _cases():
        c = args[2]
        before = c.clone() if isinstance(c, torch.Tensor) else None
        with pytest.raises(error) as info:
            solve(*args)
        assert info.value.argument == argument
        if before is not None and c.device.type != "meta":
            assert torch.equal(c.view(torch.int32), before.view(torch.int32))


def test_jax_solution():
    pytest.importorskip("jax")
    v = judge_file(SOL / "right_jax.py", seed=11, **FAST)
    assert v.framework == "jax" and v.passed, (v.failure, v.log[-3000:])


@pytest.mark.skipif(importlib.util.find_spec("jax") is not None, reason="jax is installed here")
def test_jax_solution_without_jax_cannot_run_here():
    v = judge_file(SOL / "right_jax.py", seed=11, **FAST)
    assert v.exit_code == 3 and "jax is not installed" in v.cannot_run


def test_missing_nvcc_is_a_clear_message(monkeypatch, tmp_path):
    from gemmlab.cuda import tools
    from gemmlab.judge import userfile

    tools.find.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    pathfinder = pytest.importorskip("cuda.pathfinder")
    monkeypatch.setattr(pathfinder, "find_nvidia_binary_utility", lambda name: None, raising=False)
    try:
        with pytest.raises(SolutionError, match="nvcc not found"):
            userfile.nvcc_path()
    finally:
        tools.find.cache_clear()


def test_the_no_gpu_check_loads_through_the_judge_s_loader(tmp_path):
    """The TileLang check imports the file in its own process with `import_solve`, the loader the
    judge's child uses: the same words for a file without solve, and a class of the user's module by
    its bare name (tracebacks know the loader's module prefix). A plain file needs no TileLang."""
    from gemmlab.judge.langcheck import PASSED, check_file
    from gemmlab.judge.userfile import load

    right = tmp_path / "right.py"
    right.write_text("def solve(a, b, c, M, N, K):\n    c.copy_(a @ b)\n")
    assert check_file(right, "tilelang") == (True, PASSED["tilelang"])
    none = tmp_path / "none.py"
    none.write_text("solve = 3\n")
    with pytest.raises(SolutionError) as info:
        load(none, "torch")
    assert check_file(none, "tilelang") == (False, str(info.value)) == (False, "none.py defines no solve function")
    raises = tmp_path / "raises.py"
    raises.write_text("class Oops(Exception):\n    pass\n\nraise Oops('at import')\n")
    ok, text = check_file(raises, "tilelang")
    assert not ok and text.endswith("\nOops: at import") and "user_solution_" not in text, text
