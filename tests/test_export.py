"""`gemmlab export`: every CUDA rung becomes one LeetGPU `.cu` that nvcc builds and that dispatches
exactly as `CudaSolver` does; the CLI refuses mistakes with one line and writes nothing."""

from __future__ import annotations

import ctypes
import itertools
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
import torch

from gemmlab import reference, registry
from gemmlab.cuda import hopper, tools
from gemmlab.cuda.requires import Requires
from gemmlab.cuda.rung import ARCH_SPECIFIC_CC
from gemmlab.export import ExportError, export_text
from gemmlab.export.host import condition
from gemmlab.export.source import SM90A_PASS
from gemmlab.export.tma import layout_lines
from tests.clitools import assert_one_line, files_under, invoke

CUDA_RUNGS = [i for i in registry.IMPLEMENTATIONS if i.family is registry.Family.CUDA]
CUDA_NAMES = [i.name for i in CUDA_RUNGS]
SIGNATURE = 'extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {'
NVCC_FLAGS = ["-arch=sm_90a", "-std=c++17", "-shared", "-Xcompiler", "-fPIC"]


def nvcc() -> str:
    try:
        return tools.find("nvcc")
    except tools.ToolMissing as exc:
        pytest.skip(f"nvcc is needed to build exported files: {exc}")


# ---- what the text says ------------------------------------------------------------------------


def test_every_cuda_rung_exports():
    for impl in CUDA_RUNGS:
        text = export_text(impl)
        assert text.count(SIGNATURE) == 1, impl.name
        assert text.startswith(f"// {impl.name}.cu: gemmlab rung {impl.rung} `{impl.name}`")
        assert f"gemmlab judge {impl.name}.cu --precision {impl.precision}" in text


@pytest.mark.parametrize("name", ["torch", "triton", "torch-tf32"])
def test_a_rung_that_is_not_cuda_is_refused(name):
    with pytest.raises(ExportError, match=rf"^{name} is a \w+ rung; only CUDA rungs export \(naive, "):
        export_text(registry.get(name))


class UnknownHost:
    """A host kind the exporter has never heard of."""


def test_a_host_of_an_unknown_kind_is_refused_saying_what_is_supported():
    impl = registry.get("wgmma-tma")
    odd = replace(impl, launches=(replace(impl.launches[0], host=UnknownHost()),))
    with pytest.raises(ExportError) as info:
        export_text(odd)
    message = str(info.value)
    assert "\n" not in message
    assert "host of kind UnknownHost" in message and "hopper.TmaOperands hosts" in message


def _solve_body(text: str) -> str:
    return text.split(SIGNATURE, 1)[1].rsplit("}", 1)[0]


@pytest.mark.parametrize("name", CUDA_NAMES)
def test_dispatch_tries_each_precondition_in_launch_order_and_ends_in_the_fallback(name):
    impl = registry.get(name)
    body = _solve_body(export_text(impl))
    calls = re.findall(r"launch_(\d+)\(A, B, C, M, N, K\);", body)
    assert calls == [str(i) for i in range(len(impl.launches))]
    tests = re.findall(r"^    if \((.*)\) \{  //", body, re.M)
    for launch, test in zip(impl.launches, tests, strict=False):
        if launch.when is not None:
            assert launch.when.cpp() in test and test.endswith(launch.when.cpp())
            assert f"// {impl.launch_label(launch)}: {launch.requires}" in body
        if launch.min_cc >= (8, 0):  # sm_90a's wgmma and setmaxnreg: that GPU only, not later ones
            op = "==" if launch.min_cc == ARCH_SPECIFIC_CC else ">="
            assert f"compute_capability() {op} {launch.min_cc[0]}{launch.min_cc[1]}" in test
    fallback = impl.launches[-1]
    last = body.rstrip().splitlines()[-1]
    if condition(fallback) is None:  # the fallback runs unconditionally, as the last statement
        assert len(tests) == len(impl.launches) - 1
        assert last == f"    launch_{len(impl.launches) - 1}(A, B, C, M, N, K);  " \
                       f"// {impl.launch_label(fallback)}: always"
    else:  # it needs a compute capability: where none holds, solve says so rather than do nothing
        assert len(tests) == len(impl.launches) and "no launch runs on compute capability" in last


def _variant_blocks(text: str) -> list[str]:
    return re.findall(r"^namespace v\d+ \{\n(.*?)^\}  // namespace v\d+$", text, re.M | re.S)


@pytest.mark.parametrize("name", CUDA_NAMES)
def test_every_macro_a_variant_defines_is_undefined_before_the_next(name):
    text = export_text(registry.get(name))
    blocks = _variant_blocks(text)
    assert blocks and len(blocks) == text.count("// ---- v")
    for block in blocks:
        defined = set(re.findall(r"^\s*#\s*define\s+(\w+)", block, re.M))
        undefined = set(re.findall(r"^#undef (\w+)$", block, re.M))
        assert defined <= undefined, defined - undefined
        assert 'extern "C"' not in block  # a kernel inside a namespace is a C++ name
    assert text.count("// ---- common.cuh ----") == 1 and "#pragma once" not in text
    assert '#include "' not in text.replace('// #include "', "")


def test_each_macro_set_of_a_source_is_its_own_variant():
    impl = registry.get("float4")
    text = export_text(impl)
    fast, checked, fallback = impl.launches
    assert re.search(r"namespace v0 \{\n(#define \w+ \d+\n)*#define EXACT_TILES 1\n", text)
    assert "gemmlab::v0::float4_tiled" in text and "gemmlab::v1::float4_tiled" in text
    assert "gemmlab::v2::tiling2d" in text
    assert "// ---- v1: 07_float4.cu with BK=32, BM=64, MIN_BLOCKS=2, UNROLL_K=32 ----" in text


def test_hopper_kernels_trap_in_a_device_pass_that_cannot_run_them():
    text = export_text(registry.get("wgmma-tma"))
    assert text.count(f"#if {SM90A_PASS}") == 1
    assert re.search(r"__global__ void\s+wgmma_tma\([^{]*\{ __trap\(\); \}", text)


# ---- C++ that must say what the Python says ----------------------------------------------------


def _run_host_program(source: str, tmp_path: Path) -> list[str]:
    path = tmp_path / "prog.cpp"
    path.write_text("#include <cstdint>\n#include <cstdio>\n#include <cstddef>\n" + source)
    exe = tmp_path / "prog"
    subprocess.run([nvcc(), "-std=c++17", "-o", str(exe), str(path)], check=True, capture_output=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()


def test_the_exported_split_k_policy_is_the_python_one(tmp_path):
    """split_parts (host_runtime.cuh) against handoff.parts over a grid of shapes and GPU sizes."""
    import gemmlab.export
    from gemmlab.cuda import handoff

    runtime = (Path(gemmlab.export.__file__).parent / "host_runtime.cuh").read_text()
    cases = [(t, s, n, slots, step) for t in (1, 3, 64, 100, 131, 132, 264, 300) for s in (1, 15, 16, 64, 128, 256)
             for n in (5, 1024, 2048, 2049) for slots in (132, 264) for step in (8, 16)]
    calls = "".join(f'    std::printf("%d\\n", gemmlab_host::split_parts({t}, {s}, {n}, {slots}, '
                    f'{handoff.SPLIT_MAX_N}, {handoff.min_steps(step)}));\n' for t, s, n, slots, step in cases)
    path = tmp_path / "policy.cu"
    path.write_text("#include <cuda_runtime.h>\n#include <cstdio>\n"
                    'namespace gemmlab_host { static const char* const RUNG = "test"; }\n'
                    f"{runtime}\nint main() {{\n{calls}    return 0;\n}}\n")
    exe = tmp_path / "policy"
    subprocess.run([nvcc(), "-std=c++17", "-o", str(exe), str(path)], check=True, capture_output=True)
    got = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    assert [int(x) for x in got] == [handoff.parts(*case) for case in cases]


class Pointer:
    def __init__(self, address: int):
        self.address = address

    def data_ptr(self) -> int:
        return self.address


def test_each_precondition_in_cpp_decides_as_requires_does(tmp_path):
    found = {launch.when for impl in registry.IMPLEMENTATIONS for launch in impl.launches if launch.when}
    wanted = sorted(found | {Requires(), Requires(m=3, align=8, operands="BC")}, key=repr)
    sizes = (1, 3, 4, 8, 16, 32, 64, 96, 128, 256, 384)
    offsets = [(0, 0, 0), (4, 0, 0), (0, 8, 0), (0, 0, 16), (32, 32, 32), (16, 16, 16), (8, 8, 8)]
    cases = list(itertools.product(sizes, sizes, sizes, offsets))
    funcs = "".join(f"static bool req{i}(int M, int N, int K, const float* A, const float* B, "
                    f"const float* C) {{ return {r.cpp()}; }}\n" for i, r in enumerate(wanted))
    table = ",".join("{" + ",".join(map(str, (m, n, k, *o))) + "}" for m, n, k, o in cases)
    calls = "".join(f"putchar('0' + req{i}(c[0], c[1], c[2], p(c[3]), p(c[4]), p(c[5])));"
                    for i in range(len(wanted)))
    program = (f"{funcs}static const float* p(int off) {{ return (const float*)(uintptr_t)(4096 + off); }}\n"
               f"static const int cases[][6] = {{{table}}};\nint main() {{ for (auto& c : cases) "
               f"{{ {calls} putchar('\\n'); }} }}\n")
    lines = _run_host_program(program, tmp_path)
    assert len(lines) == len(cases)
    for (m, n, k, offs), line in zip(cases, lines, strict=True):
        a, b, c = (Pointer(4096 + o) for o in offs)
        assert line == "".join(str(int(r(a, b, c, m, n, k))) for r in wanted), (m, n, k, offs)


def test_the_cpp_workspace_layout_is_tma_operands_layout(tmp_path):
    kinds = [hopper.TmaOperands(a=a, b=b) for a in ("in place", "round", "pad") for b in ("round", "split")]
    shapes = [(1, 1, 1), (300, 257, 301), (1000, 1004, 999), (8192, 6144, 4096), (7, 8191, 3)]
    program = "static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }\n"
    for i, host in enumerate(kinds):
        planes = 1 if host.b == "round" else 2
        body = "\n".join(layout_lines(host))
        prints = " ".join(f'printf("%zu ", b_at[{p}]);' for p in range(planes))
        program += (f"static void layout{i}(int M, int N, int K) {{\n{body}\n"
                    f'printf("%zu ", a_at); {prints} printf("%zu\\n", total); }}\n')
    program += "int main() {\n" + "".join(f"layout{i}({m}, {n}, {k});\n" for i in range(len(kinds))
                                          for m, n, k in shapes) + "}\n"
    got = _run_host_program(program, tmp_path)
    want = []
    for host in kinds:
        for m, n, k in shapes:
            a_at, b_at, total = host._layout(m, n, k)
            want += [str(a_at), *map(str, b_at), str(total)]
    assert got == want


# ---- nvcc builds every exported file -----------------------------------------------------------


def _build(name: str, folder: Path) -> tuple[int, str, str]:
    source = folder / f"{name}.cu"
    source.write_text(export_text(registry.get(name)))
    lib = folder / f"{name}.so"
    proc = subprocess.run([nvcc(), *NVCC_FLAGS, "-o", str(lib), str(source)], capture_output=True,
                          text=True)
    if proc.returncode:
        return proc.returncode, proc.stdout + proc.stderr, ""
    symbols = subprocess.run(["nm", "-D", str(lib)], capture_output=True, text=True).stdout
    return 0, proc.stdout + proc.stderr, symbols


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, tuple[int, str, str]]:
    """Every CUDA rung exported and built with nvcc, two at a time (CI has two cores)."""
    nvcc()
    folder = tmp_path_factory.mktemp("export")
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(CUDA_NAMES, pool.map(lambda n: _build(n, folder), CUDA_NAMES), strict=True))


@pytest.mark.parametrize("name", CUDA_NAMES)
def test_nvcc_builds_the_export_as_a_shared_library_with_solve_unmangled(built, name):
    code, log, symbols = built[name]
    assert code == 0, log
    assert "warning" not in log.lower() and "error" not in log.lower(), log
    assert re.search(r"^[0-9a-f]+ T solve$", symbols, re.M), symbols
    # The TMA rungs reach the driver through the runtime: nothing left for -lcuda to resolve.
    assert not re.search(r" U cu[A-Z]", symbols), symbols


def test_the_exported_3xtf32_product_gets_the_specials_flag():
    """Its consumers raise the flag where A holds specials; the fallback reads the same pointer.
    Each launch function passes the workspace's start to all four kernels of the plan."""
    text = export_text(registry.get("wgmma-3xtf32"))
    launches = len(registry.get("wgmma-3xtf32").launches)
    assert text.count("maps[2], C, M, N, K, (int*)base)") == launches
    assert text.count("(const int*)base, A, B, C, M, N, K") == launches


# ---- the command line --------------------------------------------------------------------------


def test_export_writes_name_cu_here_and_says_how_to_judge_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("export", "wgmma-3xtf32")
    assert result.exit_code == 0, result.output
    assert files_under(tmp_path) == {"wgmma-3xtf32.cu"}
    assert (tmp_path / "wgmma-3xtf32.cu").read_text().count(SIGNATURE) == 1
    assert "gemmlab judge wgmma-3xtf32.cu --precision fp32x3" in result.output


def test_export_to_a_named_file_and_force(tmp_path):
    target = tmp_path / "mine.cu"
    assert invoke("export", "naive", "-o", target).exit_code == 0
    assert "// mine.cu: gemmlab rung 1 `naive`" in target.read_text()
    target.write_text("keep")
    assert_one_line(invoke("export", "naive", "-o", target), 2, "exists", "--force")
    assert target.read_text() == "keep"
    assert invoke("export", "smem-16", "-o", target, "--force").exit_code == 0
    assert "`smem-16`" in target.read_text()


@pytest.mark.parametrize(("args", "fragments"), [
    (["no-such-rung"], ["unknown implementation 'no-such-rung'"]),
    (["torch"], ["torch is a torch rung", "only CUDA rungs export"]),
    (["triton", "-o", "x.cu"], ["triton is a triton rung"]),
    (["naive", "-o", "missing/x.cu"], ["no such folder"]),
    (["naive", "-o", "."], ["is a folder"]),
])
def test_export_mistakes_exit_2_with_one_line_and_write_nothing(tmp_path, monkeypatch, args, fragments):
    monkeypatch.chdir(tmp_path)
    assert_one_line(invoke("export", *args), 2, *fragments)
    assert files_under(tmp_path) == set()


# ---- on the GPU: the exported file computes what the rung computes ----------------------------

GPU_RUNGS = ["float4", "warptile", "bigtile", "splitk", "mma-tf32", "wgmma-tma", "wgmma-ws", "wgmma-3xtf32",
             "wgmma-swap"]
#: Odd shapes (fallbacks, ragged edges), whole tiles (fast paths), one misaligned A (checked paths).
GPU_SHAPES = [(300, 257, 301), (1000, 1004, 999), (128, 128, 128), (512, 256, 384), (64, 36, 1000)]


@cache
def _load(name: str, folder: Path):
    from gemmlab.cuda.compiler import device_arch

    source = folder / f"{name}.cu"
    source.write_text(export_text(registry.get(name)))
    lib = folder / f"{name}.so"
    number = device_arch().removeprefix("sm_")
    subprocess.run([nvcc(), "-std=c++17", "-shared", "-Xcompiler", "-fPIC", "-O3",
                    f"-gencode=arch=compute_{number},code=sm_{number}", "-o", str(lib), str(source)],
                   check=True, capture_output=True)
    solve = ctypes.CDLL(str(lib)).solve
    solve.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 3
    solve.restype = None
    return solve


def _operands(m: int, n: int, k: int, misaligned: bool):
    gen = torch.Generator(device="cuda").manual_seed(m * 7 + n * 3 + k)
    a = torch.randn(m * n + 1, device="cuda", generator=gen)[int(misaligned):][: m * n].view(m, n)
    b = torch.randn(n, k, device="cuda", generator=gen)
    return a, b, reference.poison_(torch.empty(m, k, device="cuda"))


@pytest.mark.gpu
@pytest.mark.parametrize("name", GPU_RUNGS)
def test_exported_solve_matches_the_reference_on_the_gpu(name, tmp_path_factory):
    impl = registry.get(name)
    ok, why = impl.can_run_on(torch.device("cuda"))
    if not ok:
        pytest.skip(why)
    solve = _load(name, tmp_path_factory.mktemp(name))
    for (m, n, k), misaligned in itertools.product(GPU_SHAPES, (False, True)):
        a, b, c = _operands(m, n, k, misaligned)
        solve(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k)
        torch.cuda.synchronize()
        fig = reference.error_figures(c, reference.reference64(a, b))
        where = f"{name} {m}×{n}×{k}{' A misaligned' if misaligned else ''}"
        assert fig.unwritten == 0, f"{where}: {fig.unwritten} elements unwritten"
        assert fig.norm_max <= reference.GATES[impl.precision], f"{where}: {fig}"


def test_nvcc_builds_an_export_whose_bigtile_takes_its_tiles_by_tma(tmp_path):
    """bigtile's TMA_COPY (results/experiments/bigtile-tma) exported: descriptors of Aᵀ and of B
    (as it lies, or its padded copy) encoded in C++ and passed in place of the two pointers."""
    base = registry.get("splitk")
    knobs = {"BK": 16, "STAGES": 3, "FETCH_BA": 1, "TMA_COPY": 1}
    impl = replace(base, name="splitk-tma", launches=tuple(x.with_defines(knobs) for x in base.launches))
    text = export_text(impl, "splitk_tma.cu")
    assert text.count("matrix_map(&maps[") == 4 and "maps[0], maps[1], C, M, N, K, work, flags" in text
    source = tmp_path / "splitk_tma.cu"
    source.write_text(text)
    proc = subprocess.run([nvcc(), *NVCC_FLAGS, "-o", str(tmp_path / "splitk_tma.so"), str(source)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr



def test_trapping_kernels_keep_the_macros_and_conditionals_their_declarations_use():
    """A Hopper variant's stand-ins for the other device passes: a declaration built from a
    macro, and two declarations one of which a conditional removes, come out as the source has
    them (16_bigtile.cu's BIGTILE_ARGS and SPLIT)."""
    from gemmlab.export.source import _trapping_kernels

    source = "\n".join([
        "#ifndef SPLIT", "#define SPLIT 0", "#endif",
        "#define ARGS const float* A, \\", "             float* C",
        "#if SPLIT",
        "__global__ void __launch_bounds__(128, 2) k(ARGS, float* work) {", "    int x = 0;", "}",
        "#else",
        "__global__ void __launch_bounds__(128, 2) k(ARGS) {", "#if SPLIT", "    x = 1;", "#endif", "}",
        "#endif",
    ])
    stubs = _trapping_kernels(source)
    lines = stubs.splitlines()
    assert "             float* C" in lines  # the continuation line of a multi-line #define
    assert "int x" not in stubs and "__launch_bounds__" not in stubs
    first, second = (lines.index(x) for x in lines if x.startswith("__global__"))
    assert lines[first - 1] == "#if SPLIT" and lines[first + 1] == "#else" and lines[second + 1] == "#if SPLIT"
    assert lines[first] == "__global__ void k(ARGS, float* work) { __trap(); }"
    opened = sum(x.startswith("#if") for x in lines)  # #if, #ifdef, #ifndef
    assert lines[-1] == "#endif" and opened == sum(x == "#endif" for x in lines) == 3
