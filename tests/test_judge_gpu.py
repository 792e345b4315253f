"""On a GPU: the judge's boundary with CUDA IPC buffers, CUDA cheats and races, and timing fidelity.

Marked `gpu`: skipped cleanly where CUDA is not available. Run on the H200 with
``python3 -m pytest -q -m gpu tests/test_judge_gpu.py tests/test_gpu.py``.

Issue 29's GPU variants are the second half: guard bytes around IPC buffers (a .cu that writes one
row past C), persisting L2 (a .cu that pins B), the cross-check's tolerance against a forger on
CUDA events, the FMA floor, --nvcc-flags and --profile.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gemmlab import problem
from gemmlab.judge.isolate import judge_file
from gemmlab.judge.timing import allowance_ms

pytestmark = pytest.mark.gpu
SOL = Path(__file__).parent / "fixtures" / "solutions"
FAST = dict(perf=False, groups=["example", "notes", "wide"], time_shape=(256, 256, 256), iters=3, warmup=1)


@pytest.mark.parametrize("name,reason", [
    ("first_call_only.cu", "never written"),
    ("modifies_a.cu", "modified its input A"),
    ("second_stream.cu", "C changed after solve returned"),
])
def test_cuda_cheats_and_races_are_rejected(name, reason):
    v = judge_file(SOL / name, seed=41, **FAST)
    assert not v.passed and v.exit_code == 1, (v.failure, v.log[-2000:])
    assert reason in v.failure, v.failure


def test_writing_only_on_the_first_call_is_caught_by_the_timed_calls():
    # The notes' shapes are all different, so only the timed calls reuse C.
    v = judge_file(SOL / "first_call_only.cu", seed=42, **(FAST | {"groups": ["notes"]}))
    assert not v.passed and v.failure.startswith("timed call 2 of 4"), v.failure
    assert "never written" in v.failure


@pytest.mark.parametrize("name,reason", [
    ("forges_verdict.py", "exited with code 0"),
    ("patches_matmul.py", "normalised max error"),
    ("patches_verdict.py", "never written"),
    ("zeroes_a.py", "modified its input A"),
    ("scales_a.py", "modified its input A"),
    ("skips_wide_inputs.py", "never written"),
    ("skips_same_c.py", "never written"),
    ("address_cache.py", "normalised max error"),
    ("wrong_beyond_9.py", "normalised max error"),
    ("writes_channel.py", "protocol violation"),
    ("forges_report.py", "timing disagreement"),  # shaving half of every report
])
def test_python_cheats_are_rejected_on_the_gpu(name, reason):
    env = {"GEMMLAB_TEST_SHAVE_MS": "50%"} if name == "forges_report.py" else None
    v = judge_file(SOL / name, seed=43, env=env, **FAST)
    assert not v.passed and reason in v.failure, (v.failure, v.log[-2000:])


@pytest.mark.parametrize("name", ["right_torch.py", "sets_default_dtype.py", "bad_output.py",
                                  "triton_right.py", "right.cu"])
def test_right_files_are_accepted_on_the_gpu(name):
    v = judge_file(SOL / name, seed=44, **FAST)
    assert v.passed and v.exit_code == 0, (v.failure, v.log[-2000:])
    assert v.timing["baseline"].startswith("cuBLAS") and "CUDA events" in v.timing["method"]


def test_patched_cuda_events_do_not_change_the_figure():
    v = judge_file(SOL / "patches_clock.py", seed=45, **FAST)
    assert v.passed, (v.failure, v.log[-2000:])
    assert v.timing["median_ms"] >= 20.0  # about 30 ms of torch.cuda._sleep per call


def test_cuda_hang_is_a_verdict_and_the_gpu_stays_usable():
    t0 = time.monotonic()
    v = judge_file(SOL / "hangs.cu", seed=46, timeout=10, **FAST)
    assert not v.passed and "time limit" in v.failure and time.monotonic() - t0 < 10 + 30
    again = judge_file(SOL / "right.cu", seed=46, **FAST)
    assert again.passed, (again.failure, again.log[-2000:])


@pytest.fixture(scope="module")
def float4_cu(tmp_path_factory) -> Path:
    """The registry's float4 rung as a LeetGPU .cu (gemmlab export): the very kernels bench times."""
    from gemmlab import registry
    from gemmlab.export import export_text

    path = tmp_path_factory.mktemp("export") / "float4.cu"
    path.write_text(export_text(registry.get("float4"), path.name))
    return path


def test_float4_cu_is_accepted_at_the_performance_shape(float4_cu):
    v = judge_file(float4_cu, seed=47)
    assert v.passed, (v.failure, v.log[-2000:])
    assert any(c["group"] == "perf" and c["status"] == "pass" for c in v.cases)
    assert v.timing["shape"] == list(problem.PERF_SHAPE) and v.timing["checked_calls"] in (15, 30)
    assert v.timing["tflops"] > 20


def test_judged_float4_time_is_within_3_percent_of_bench(float4_cu):
    """Hardening must not distort timing: judge's figure for the .cu vs bench's for the rung."""
    from gemmlab.bench.run import run

    judged = judge_file(float4_cu, seed=7, groups=["example"], perf=False)
    assert judged.passed, judged.failure
    record = run(["float4"], warmup=5, iters=10, seed=7)
    benched = next(r for r in record["results"] if r["name"] == "float4")["median_ms"]
    ratio = judged.timing["median_ms"] / benched
    print(f"judge {judged.timing['median_ms']:.3f} ms, bench {benched:.3f} ms, ratio {ratio:.3f}")
    assert abs(ratio - 1) <= 0.03


@pytest.mark.parametrize("name", ["wgmma-ws", "wgmma-3xtf32", "wgmma-swap"])
def test_exported_wgmma_tma_solution_is_accepted(tmp_path, name):
    """A LeetGPU-format .cu with wgmma, TMA and setmaxnreg, built by nvcc for sm_90a, judged."""
    from gemmlab import registry
    from gemmlab.export import export_text

    impl = registry.get(name)
    path = tmp_path / f"{name}.cu"
    path.write_text(export_text(impl, path.name))
    v = judge_file(path, precision=str(impl.precision), seed=48)
    assert v.passed, (v.failure, v.log[-2000:])
    assert any(c["group"] == "perf" and c["status"] == "pass" for c in v.cases)


# -- issue 29 on the GPU ------------------------------------------------------------------------


@pytest.mark.parametrize("name,reason", [
    ("writes_row_past_c.py", "wrote past the end of C"),
    ("writes_before_a.py", "wrote before the start of A"),
    ("transposes_c.py", "C's tensor object was changed"),
    ("swaps_c_storage.py", "the solution replaced C's storage"),
    ("defers_work.py", "never written"),
])
def test_boundary_fixtures_get_their_reasons_on_the_gpu(name, reason):
    v = judge_file(SOL / name, seed=70, **FAST)
    assert not v.passed and v.exit_code == 1 and reason in v.failure, (v.failure, v.log[-2000:])


def test_a_cu_writing_one_row_past_c_is_rejected_naming_where():
    v = judge_file(SOL / "out_of_bounds.cu", seed=71, **FAST)
    assert not v.passed and v.exit_code == 1, (v.failure, v.log[-2000:])
    assert "wrote past the end of C" in v.failure and "the first 0 floats past its last element" in v.failure


def test_a_cu_that_pins_b_in_l2_is_judged_and_its_set_aside_reported():
    v = judge_file(SOL / "pins_b_in_l2.cu", seed=72, **FAST)
    assert v.passed, (v.failure, v.log[-2000:])
    assert v.timing["l2"]["l2_persisting"] > 0, v.timing["l2"]
    assert any(n.startswith("the solution set aside") and "returned every persisting line to normal" in n
               for n in v.notes), v.notes


def test_an_old_style_forger_gains_nothing_on_the_gpu():
    v = judge_file(SOL / "forges_timing.py", seed=73, **FAST)
    assert v.timing is not None and "timing disagreement" not in v.failure, v.failure
    assert v.timing["median_ms"] >= 20.0  # about 30 ms of torch.cuda._sleep per call, as it is


def test_a_forger_just_under_the_tolerance_gains_at_most_the_tolerance():
    """On a GPU the figure is the harness's CUDA events, so a relay that shaves every report by
    less than 10 % + 0.5 ms is accepted: that is exactly what the cross-check concedes, no more."""
    v = judge_file(SOL / "forges_report.py", seed=74, env={"GEMMLAB_TEST_SHAVE_MS": "1.5"}, **FAST)
    assert v.passed, (v.failure, v.log[-2000:])
    real = v.timing["outside_ms"]  # the judge's own clock, less the harness's overhead
    assert v.timing["median_ms"] < real  # it was shaved
    assert v.timing["median_ms"] >= real - allowance_ms(v.timing["median_ms"], "cuda") - 0.1


def test_a_forger_past_the_tolerance_is_a_disagreement_on_the_gpu():
    v = judge_file(SOL / "forges_report.py", seed=75, env={"GEMMLAB_TEST_SHAVE_MS": "10"}, **FAST)
    assert not v.passed and v.failure.startswith("timing disagreement"), v.failure


def test_a_strict_fp32_time_below_the_fma_floor_is_impossible():
    # No sleep, every report shaved to 0: inside the 0.5 ms tolerance at 256³, but below physics.
    env = {"GEMMLAB_TEST_SLEEP_MS": "0", "GEMMLAB_TEST_SHAVE_MS": "100%"}
    v = judge_file(SOL / "forges_report.py", seed=76, env=env, **FAST)
    assert not v.passed and v.failure.startswith("impossible timing"), v.failure
    assert v.timing["fma_floor"]["floor_ms"] > 0
    tensor = judge_file(SOL / "forges_report.py", seed=76, env=env, precision="fp32x3", **FAST)
    assert "impossible" not in tensor.failure  # the FMA floor is strict FP32's only


def test_nvcc_flags_build_for_a_grader_s_target():
    v = judge_file(SOL / "right.cu", seed=77, nvcc_flags="-arch=sm_80", **FAST)
    assert v.passed and v.build.endswith("-arch=sm_80"), (v.failure, v.build)
    assert "sm_90a" in judge_file(SOL / "right.cu", seed=77, **FAST).build  # the default: the H200's own


def test_native_builds_for_this_gpu_though_nvcc_sees_none_in_the_sandbox():
    import torch

    major, minor = torch.cuda.get_device_capability()
    v = judge_file(SOL / "right.cu", seed=79, nvcc_flags="-arch=native", **FAST)
    assert v.passed and f"-arch=sm_{major}{minor} (-arch=native: the GPU here)" in v.build, (v.failure, v.build)


def test_a_hopper_solution_under_sm_80_flags_is_a_compile_verdict():
    # gemmlab's own exports guard their Hopper kernels and build anywhere (test_export.py), so
    # the file here is one that does not: an unguarded setmaxnreg, which ptxas refuses for sm_80.
    path = SOL / "needs_sm90a.cu"
    assert judge_file(path, seed=78, **FAST).passed  # right where it was written for
    v = judge_file(path, seed=78, nvcc_flags="-arch=sm_80", **FAST)
    assert not v.passed and v.exit_code == 1 and "nvcc failed to compile" in v.failure, v.failure


def test_profile_shows_the_solution_beside_cublas():
    from tests.clitools import invoke

    result = invoke("judge", SOL / "right.cu", "--profile", "--group", "example", "--no-perf", "--iters", "1",
                    "--warmup", "0")
    if result.exit_code == 3:  # no ncu here, or no counter access: one line, as promised
        assert len([ln for ln in result.output.splitlines() if ln.strip()]) == 1, result.output
        pytest.skip(result.output.strip())
    assert result.exit_code == 0, result.output
    out = result.output
    assert "yours: mm" in out and "cuBLAS: " in out and "duration (ms)" in out and "top stalls" in out
    assert out.rstrip().endswith("ACCEPTED")
