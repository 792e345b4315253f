"""Every CUDA kernel compiles for sm_90a without a GPU, with no spills and the resources its design implies."""

from __future__ import annotations

from pathlib import Path

import pytest

from gemmlab import launches, registry
from gemmlab.cuda import compiler, hopper, pad, transposed
from gemmlab.cuda.compiler import HOPPER_ARCH, CompileError, compile_source, parse_ptxas_log
from gemmlab.cuda.cubin import max_threads
from gemmlab.policy import twins

#: Shared memory one block may have on sm_90 (227 KB, opt-in).
MAX_SMEM = 232448
#: Static shared memory of the wgmma pre-passes, from hopper.py's own facts: a transpose
#: tile with one float of padding per row, and none for the row copy.
_TRANSPOSE_SMEM = hopper.TRANSPOSE_TILE * (hopper.TRANSPOSE_TILE + 1) * 4
PREPASS_SMEM = {hopper.TRANSPOSE.entry: _TRANSPOSE_SMEM, hopper.TRANSPOSE_SPLIT.entry: _TRANSPOSE_SMEM,
                hopper.ROUND_ROWS.entry: 0, hopper.PAD_ROWS.entry: 0, hopper.CLEAR_FLAG.entry: 0,
                # the strict-FP32 fallback stages 16×16 tiles of A and B, rows padded by one
                hopper.SPECIAL.entry: 2 * 16 * 17 * 4,
                pad.PAD_COPY.entry: 0, transposed.TRANSPOSE_FP32.entry: _TRANSPOSE_SMEM}


def _kernels() -> list[tuple]:
    """Every kernel any launch may run (pre-passes included), once each, with the static
    shared memory its launch implies (`Launch.static_smem`)."""
    found: dict[tuple, tuple] = {}
    for impl in registry.IMPLEMENTATIONS:
        for launch in impl.launches:
            for kernel in launch.kernels():
                smem = launch.static_smem if kernel == launch.kernel else PREPASS_SMEM[kernel.entry]
                found.setdefault(kernel.key, (kernel, smem))
    return sorted(found.values(), key=lambda x: x[0].key)


KERNELS = _kernels()


@pytest.mark.parametrize("kernel,static_smem", KERNELS,
                         ids=lambda x: x.label if hasattr(x, "label") else str(x))
def test_compiles_for_hopper_without_spills(kernel, static_smem):
    module = kernel.compile(HOPPER_ARCH)
    res = module.resources[kernel.entry]
    assert res.spills == 0 and res.stack_bytes == 0, res
    assert 0 < res.registers <= 65536 // kernel.threads, res
    assert res.smem_bytes == static_smem, res
    assert res.smem_bytes + kernel.smem <= MAX_SMEM
    # The block's barrier, and the warp-specialised split's consumers' own (a team at named barrier 1)
    team = kernel.source in ("wgmma_3xtf32.cu", "wgmma_swap.cu") and kernel.defines.get("SPLIT")
    assert res.barriers == (0 if res.smem_bytes + kernel.smem == 0 else 2 if team else 1)
    assert module.cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("kernel", [k for k, _ in KERNELS], ids=lambda x: x.label)
def test_geometry_is_declared_once(kernel):
    """The block the registry launches is the block the kernel was compiled for.

    A kernel either leaves its block to the launch (no __launch_bounds__: it reads
    blockDim) or declares a limit, which must be exactly the launch's threads; with
    the shared-memory check above, which ties the launch's tile and step to the
    kernel's arrays, the registry and the kernel cannot disagree.
    """
    declared = max_threads(kernel.compile(HOPPER_ARCH).cubin, kernel.entry)
    if declared is None:
        source = compiler.source_path(kernel.source).read_text()
        assert "blockDim" in source, f"{kernel.source} neither declares nor reads its block"
        return
    assert declared[0] * declared[1] * declared[2] == kernel.threads, (kernel.label, declared)


def test_max_threads_reads_launch_bounds(tmp_path: Path):
    src = tmp_path / "bounds.cu"
    src.write_text('extern "C" __global__ void __launch_bounds__(96) k(float* x) { x[threadIdx.x] = 0; }\n'
                   'extern "C" __global__ void free_k(float* x) { x[threadIdx.x] = 1; }\n')
    cubin = compile_source(str(src), arch=HOPPER_ARCH).cubin
    assert max_threads(cubin, "k") == (96, 1, 1)
    assert max_threads(cubin, "free_k") is None


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
    first = compile_source("naive.cu", arch=HOPPER_ARCH)
    assert len(list(tmp_path.glob("cubin/*.cubin"))) == 1

    def no_compile(*args, **kwargs):
        raise AssertionError("cache miss")

    monkeypatch.setattr(compiler, "_build_isolated", no_compile)
    again = compile_source("naive.cu", arch=HOPPER_ARCH)
    assert again.cubin == first.cubin and again.resources == first.resources
    with pytest.raises(AssertionError, match="cache miss"):  # other options: another key
        compile_source("naive.cu", arch=HOPPER_ARCH, defines={"X": 1})
    with pytest.raises(AssertionError, match="cache miss"):
        compile_source("naive.cu", arch="sm_80")


def test_nvrtc_runs_in_a_process_of_its_own(tmp_path: Path, monkeypatch):
    """NVRTC's build of a source can depend on what its process compiled before (bigtile: 228
    registers instead of 245 after other kernels), so every compile runs in a fresh child:
    with NVRTC unusable in this process, a compile still succeeds, with its ptxas report."""
    import cuda.core

    def in_this_process(*args, **kwargs):
        raise AssertionError("NVRTC ran in the calling process")

    monkeypatch.setattr(cuda.core, "Program", in_this_process)
    monkeypatch.setenv("GEMMLAB_CACHE", str(tmp_path))
    module = compile_source("naive.cu", arch=HOPPER_ARCH, defines={"ISOLATED": 1})
    assert module.cubin and "naive" in module.resources


@pytest.mark.parametrize(("stdout", "raised", "match"), [
    ('{"import_error": "No module named \'cuda.core\'"}', ImportError, "cuda.core"),
    ("", CompileError, "status 1"),
])
def test_a_failed_child_is_a_clear_error(tmp_path: Path, monkeypatch, stdout, raised, match):
    """A child without cuda-core answers so (the commands then say CUDA cannot compile here);
    a child that died without an answer is a compile error naming its exit status."""
    import subprocess

    def child(*args, **kwargs):
        return subprocess.CompletedProcess(args, 1, stdout=stdout, stderr="Traceback: boom")

    monkeypatch.setattr(compiler.subprocess, "run", child)
    monkeypatch.setenv("GEMMLAB_CACHE", str(tmp_path))
    with pytest.raises(raised, match=match):
        compile_source("naive.cu", arch=HOPPER_ARCH)


def test_device_arch_without_gpu_is_a_clear_error(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(compiler.NoGPUError, match="explicit arch"):
        compiler.device_arch()


def test_buggy_row4_fixture_compiles():
    fixture = Path(__file__).parent / "fixtures" / "row4_notes_bug.cu"
    module = compile_source(str(fixture), arch=HOPPER_ARCH)
    assert "row4_notes_bug" in module.resources


def test_rung_numbers_live_in_the_registry_only():
    """A kernel's header names its idea, not its rung: the registry numbers the ladder."""
    import re

    for impl in registry.IMPLEMENTATIONS:
        for path in [*impl.source_paths(), registry.PACKAGE_DIR / impl.doc]:
            head = path.read_text().splitlines()[0]
            assert not re.search(r"\brung \d", head, re.I), f"{path.name}: {head}"



def _tail_twins() -> list:
    """Each bigtile build of `default`'s record, on a line of blocks (twins.tail_twin: experiments/tail-split)."""
    from gemmlab.policy import default

    found = {}
    for launch in default.launches_from(default.plan()[0], launches.RUNGS[default.BUILTIN]):
        if launch.source == "bigtile.cu" and launch.host is not None:
            twin = twins.tail_twin(launch)
            found.setdefault(twin.kernel.key, (twin, launch))
    return list(found.values())


@pytest.mark.parametrize("twin,plain", _tail_twins(), ids=lambda x: x.kernel.label)
def test_tail_split_builds_compile_without_spills_into_another_cubin(twin, plain):
    """bigtile.cu's SPLIT 2: every build `default` runs compiles with it in the registers its
    occupancy allows, without spills, and is another cubin than the build it turns (SPLIT 0 or 1:
    the tail's code is compiled out of those, so the shipped cubins are those they were measured with)."""
    module = twin.compile(HOPPER_ARCH)
    res = module.resources[twin.entry]
    assert res.spills == 0 and res.stack_bytes == 0, res
    assert res.registers <= min(255, 65536 // (twin.threads * int(twin.defines["MIN_BLOCKS"]))), res
    assert module.cubin != plain.compile(HOPPER_ARCH).cubin


def test_the_padded_copy_writes_four_columns_a_thread():
    """pad.cu's PAD_WIDE (experiments/tools/1-pad-width-h100-39ae1c7.jsonl: 4 beat 1 at every size timed, so only 4
    ships): set by cuda/pad.py, compiled without spills, its grid derived from it; any other width
    is refused by the source."""
    import dataclasses

    from gemmlab.cuda.compiler import CompileError
    from gemmlab.cuda.pad import PAD_BLOCK_COLS, PAD_COPY

    assert PAD_COPY.defines["PAD_WIDE"] == 4 and PAD_BLOCK_COLS == PAD_COPY.block[0] * 4
    res = PAD_COPY.compile(HOPPER_ARCH).resources[PAD_COPY.entry]
    assert res.spills == 0 and res.stack_bytes == 0, res
    for width in (1, 2):
        with pytest.raises(CompileError, match="pad_copy copies 4 columns a thread"):
            dataclasses.replace(PAD_COPY, defines={"PAD_WIDE": width}).compile(HOPPER_ARCH)


#: The persistent split-K twins no rung runs yet, each with the rung whose launches they split:
#: wgmma_swap.cu's SPLIT (experiments/swap-split) and wgmma_3xtf32.cu's (experiments/3x-split).
_PERSISTENT_SPLITS = [(x, "wgmma-swap") for x in launches.wgmma_swap_split_launches()] + [
    (x, "wgmma-3xtf32") for x in launches.wgmma_3xtf32_split_launches()]


@pytest.mark.parametrize("launch,rung", _PERSISTENT_SPLITS, ids=[f"{r}-{x.name}" for x, r in _PERSISTENT_SPLITS])
def test_the_persistent_split_builds_compile_without_spills_into_another_cubin(launch, rung):
    """The wgmma kernels' SPLIT: within the registers of 384 threads, no spills, the consumers'
    named barrier beside the block's (the shipped build has the block's alone), wgmma not
    serialised; SPLIT 0, the shipped build, is another cubin."""
    from gemmlab import launches

    module = launch.compile(HOPPER_ARCH)
    res = module.resources[launch.entry]
    assert res.spills == 0 and res.stack_bytes == 0 and res.registers <= 65536 // launch.threads, res
    assert res.barriers == 2, res
    assert "C7513" not in module.log and "serialized" not in module.log
    plain = next(x for x in launches.RUNGS[rung] if f"split-{x.name}" == launch.name)
    assert plain.compile(HOPPER_ARCH).resources[plain.entry].barriers == 1
    assert module.cubin != plain.compile(HOPPER_ARCH).cubin
