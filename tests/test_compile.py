"""Every CUDA kernel compiles for sm_90a without a GPU, with no spills and the resources its design implies."""

from __future__ import annotations

from pathlib import Path

import pytest

from gemmlab import registry
from gemmlab.cuda import compiler
from gemmlab.cuda.compiler import HOPPER_ARCH, CompileError, compile_source, parse_ptxas_log

#: Every kernel any launch may run (pre-passes included), once each.
KERNELS = sorted(
    {k.key: k for impl in registry.IMPLEMENTATIONS for launch in impl.launches
     for k in launch.kernels()}.values(),
    key=lambda x: (x.source, x.entry, sorted(x.defines.items())),
)
#: Shared memory one block may have on sm_90 (227 KB, opt-in).
MAX_SMEM = 232448


def expected_smem(launch) -> int:
    """Static shared bytes implied by the tile: A and B tiles, times the buffers, plus padding."""
    d = dict(launch.defines)
    name = launch.source
    if name.startswith(("01_", "02_", "12_", "13_", "14_", "15_")):
        return 0  # none, or dynamic only (below)
    if name == "hopper_prepass.cu":
        return {"transpose_tf32": 64 * 65 * 4, "transpose_split_tf32": 64 * 65 * 4,
                "special_fp32": 2 * 16 * 17 * 4}.get(launch.entry, 0)
    if name.startswith("03_"):
        return 2 * 16 * 16 * 4
    if name.startswith("04_"):
        return (16 * 16 + 16 * 64) * 4
    if name.startswith(("05_", "06_")):
        return (64 * 16 + 16 * 64) * 4
    if name.startswith("07_"):
        bm, bk = d.get("BM", 64), d.get("BK", 32)
        return 2 * bm * bk * 4
    if name.startswith("08_"):
        return 2 * 2 * d["BM"] * 16 * 4
    if name.startswith("09_"):
        return 2 * 2 * 128 * 16 * 4
    if name.startswith("10_"):
        return (128 * (32 + 4) + 32 * (128 + 4)) * 4
    if name.startswith("11_"):
        return 2 * d["BK"] * (2 * 128 + d.get("PAD_A", 0)) * 4
    raise AssertionError(f"no expectation for {name}")


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda x: f"{x.entry}{dict(x.defines) or ''}")
def test_compiles_for_hopper_without_spills(kernel):
    module = kernel.compile(HOPPER_ARCH)
    res = module.resources[kernel.entry]
    assert res.spills == 0 and res.stack_bytes == 0, res
    assert 0 < res.registers <= 65536 // kernel.threads, res
    assert res.smem_bytes == expected_smem(kernel), res
    assert res.smem_bytes + kernel.smem <= MAX_SMEM
    assert res.barriers == (0 if res.smem_bytes + kernel.smem == 0 else 1)
    assert module.cubin[:4] == b"\x7fELF"


def test_every_cuda_rung_has_a_fallback_and_sources():
    for impl in registry.IMPLEMENTATIONS:
        if impl.family != "cuda":
            continue
        assert impl.launches and impl.launches[-1].when is None, impl.name
        for path in impl.source_paths():
            assert path.exists(), path
        assert impl.explanation().strip()


def test_parse_ptxas_log():
    log = (
        "ptxas info    : Compiling entry function 'k1' for 'sm_90a'\n"
        "ptxas info    : Function properties for k1\n"
        "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 42 registers, used 1 barriers, 16 bytes cumulative stack size, 2048 bytes smem\n"
        "ptxas info    : Compiling entry function 'k2' for 'sm_90a'\n"
        "ptxas info    : Function properties for k2\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 8 registers\n"
    )
    got = parse_ptxas_log(log)
    assert got["k1"].registers == 42 and got["k1"].smem_bytes == 2048 and got["k1"].spills == 12
    assert got["k1"].stack_bytes == 16 and got["k1"].barriers == 1
    assert got["k2"].registers == 8 and got["k2"].smem_bytes == 0 and got["k2"].spills == 0


def test_compile_error_carries_the_log(tmp_path: Path):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void broken(float* x) { x[0] = undeclared_name; }\n')
    with pytest.raises(CompileError) as info:
        compile_source(str(bad), arch=HOPPER_ARCH)
    assert "undeclared_name" in info.value.log and "bad.cu" in str(info.value)


def test_cache_is_keyed_and_reused(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GEMMLAB_CACHE", str(tmp_path))
    first = compile_source("01_naive.cu", arch=HOPPER_ARCH)
    assert len(list(tmp_path.glob("cubin/*.cubin"))) == 1

    import cuda.core

    def no_compile(*args, **kwargs):
        raise AssertionError("cache miss")

    monkeypatch.setattr(cuda.core, "Program", no_compile)
    again = compile_source("01_naive.cu", arch=HOPPER_ARCH)
    assert again.cubin == first.cubin and again.resources == first.resources
    with pytest.raises(CompileError, match="cache miss"):  # other options: another key
        compile_source("01_naive.cu", arch=HOPPER_ARCH, defines={"X": 1})
    with pytest.raises(CompileError, match="cache miss"):
        compile_source("01_naive.cu", arch="sm_80")


def test_device_arch_without_gpu_is_a_clear_error(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(compiler.NoGPUError, match="explicit arch"):
        compiler.device_arch()


def test_buggy_row4_fixture_compiles():
    fixture = Path(__file__).parent / "fixtures" / "row4_notes_bug.cu"
    module = compile_source(str(fixture), arch=HOPPER_ARCH)
    assert "row4_notes_bug" in module.resources
