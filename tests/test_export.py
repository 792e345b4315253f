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
from gemmlab.cuda.needs import Needs, When
from gemmlab.export import ExportError, export_text
from gemmlab.export.builds import BUILDS, Build, build_library, held, ranges, real_kernels, sass_of
from gemmlab.export.document import collect_variants, plan
from gemmlab.export.source import real_pass
from gemmlab.export.tma import layout_lines
from gemmlab.policy import twins
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
        assert text.startswith(f"// {impl.name}.cu: gemmlab step {impl.ref} `{impl.name}`")
        assert f"gemmlab judge {impl.name}.cu --precision {impl.precision}" in text


def test_a_rung_no_exporter_writes_is_refused():
    # TileLang's rung is a kernel plus a host in one Python module gemmlab does not flatten.
    with pytest.raises(ExportError, match=r"^tilelang-gemm is a TileLang rung; only CUDA, Triton, PyTorch, CuTe DSL "
                                          r"and Mojo rungs export \(naive, "):
        export_text(registry.get("tilelang-gemm"))


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


#: Each persistent split by its rung: the twins' maker in `launches`, the arguments its exported main
#: launches end with, their grid over the units, and the specials' fallbacks after them (3xTF32's).
_EXPORTED_SPLITS = {
    "wgmma-swap": ("wgmma_swap_split_launches", "C, M, N, K, work, counters, parts",
                   "persistent_grid(blocks * parts, fit_main, 2)", 0),
    "wgmma-3xtf32": ("wgmma_3xtf32_split_launches", "C, M, N, K, (int*)base, work, counters, parts",
                     "persistent_grid(tiles * parts, fit_main, 1)", 2),
}


@pytest.mark.parametrize("rung", _EXPORTED_SPLITS)
def test_the_persistent_split_twins_export_and_build_for_hopper(rung, tmp_path):
    """launches.wgmma_swap_split_launches (experiments/swap-split) and wgmma_3xtf32_split_launches
    (experiments/3x-split) in an exported file: the kernel's last arguments (scratch, counters,
    parts) passed in both launches (operands in place, and copied), the persistent grid over the
    units, 3xTF32's fallback after it, and the file built by nvcc for sm_90a."""
    from gemmlab import launches

    maker, args, grid, specials = _EXPORTED_SPLITS[rung]
    impl = replace(registry.get(rung), launches=getattr(launches, maker)())
    text = export_text(impl)
    assert text.count(args) == 2 and text.count(grid) == 2
    assert text.count('run("special_fp32"') == specials
    source = tmp_path / f"{rung}-split.cu"
    source.write_text(text)
    proc = build_library(source, "-arch=sm_90a", tmp_path / f"{rung}-split.so")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _solve_body(text: str) -> str:
    return text.split(SIGNATURE, 1)[1].rsplit("}", 1)[0]


@pytest.mark.parametrize("name", CUDA_NAMES)
def test_dispatch_tries_each_precondition_in_launch_order_and_ends_in_a_portable_fallback(name):
    impl = registry.get(name)
    p = plan(impl)
    body = _solve_body(export_text(impl))
    calls = re.findall(r"launch_(\d+)\(A, B, C, M, N, K\);", body)
    assert calls == [str(i) for i in range(len(p.launches))]
    tests = re.findall(r"^    if \((.*)\) \{  //", body, re.M)
    assert len(tests) == len(p.launches) - 1
    for launch, label, test in zip(p.launches, p.labels, tests, strict=False):
        if launch.when is not None:
            assert launch.when.cpp() in test and test.endswith(launch.when.cpp())
            assert f"// {label}: {launch.precondition}" in body
        # What the build's loaded code holds decides, not the GPU: -arch=sm_80 on an H200 has no TMA.
        assert ("image_has" in test) == (launch.all_needs is not Needs.ANY), test
        if launch.all_needs is not Needs.ANY:
            assert test.startswith(f"image_has({launch.all_needs.bit})"), test
        assert "compute_capability" not in test
    # The rung's own launches first; where the last of them needs more than plain CUDA, the floor.
    assert p.launches[:p.own] == tuple(impl.launches)
    assert p.launches[-1].all_needs is Needs.ANY and p.launches[-1].when is None
    if impl.launches[-1].all_needs is Needs.ANY:
        assert p.own == len(p.launches) and "floor_note" not in body
    else:
        assert p.floor == tuple(registry.get("warptile").launches)
        assert body.index("floor_note();") < body.index(f"launch_{p.own}(A, B, C, M, N, K);")
    last = body.rstrip().splitlines()[-1]
    assert last == f"    launch_{len(p.launches) - 1}(A, B, C, M, N, K);  // {p.labels[-1]}: always"


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
    assert "// ---- v1: float4.cu with BK=32, BM=64, MIN_BLOCKS=2, UNROLL_K=32 ----" in text


def test_each_variant_is_real_only_in_the_device_passes_with_its_features():
    """wgmma under sm_90a's feature macro, TMA under __CUDA_ARCH__ >= 900, cp.async under 800; in
    other passes the kernels keep their signatures and trap (the host never launches them)."""
    text = export_text(registry.get("wgmma-tma"))
    assert text.count(f"#if {real_pass(Needs.SM90A)}") == 1
    assert re.search(r"__global__ void\s+wgmma_tma\([^{]*\{ __trap\(\); \}", text)
    tma = export_text(registry.get("tma"))
    assert f"#if {real_pass(Needs.SM90)}" in tma and real_pass(Needs.SM90A) not in tma
    assert f"#if {real_pass(Needs.SM80)}" in export_text(registry.get("cp-async"))
    assert "#if !defined(__CUDA_ARCH__)" not in export_text(registry.get("naive"))


def test_a_variant_holds_only_the_kernels_the_rung_runs():
    """bigtile's pre-pass file also holds TF32 roundings (sm_80's cvt.rna.tf32): left out, they
    cannot stop the portable build."""
    text = export_text(registry.get("bigtile"))
    assert "transpose_fp32(" in text and "transpose_tf32(" not in text and "special_fp32(" not in text
    assert "transpose_tf32(" in export_text(registry.get("wgmma-tma"))


# ---- C++ that must say what the Python says ----------------------------------------------------


def _host_runtime() -> str:
    """host_runtime.cuh with what an exported file defines before it, for programs that call it."""
    import gemmlab.export

    here = Path(gemmlab.export.__file__).parent
    runtime = (here / "host_runtime.cuh").read_text() + (here / "host_tail.cuh").read_text()
    return ("#include <cuda_runtime.h>\n#include <cstdio>\n"
            "namespace gemmlab { __device__ int image_features = 0; }\n"
            'namespace gemmlab_host { static const char* const RUNG = "test", *OWN_NEEDS = "", '
            '*BUILD_ADVICE = ""; }\n' f"{runtime}\nusing namespace gemmlab_host;\n")


def _run_host_program(source: str, tmp_path: Path) -> list[str]:
    """Built by nvcc as CUDA (host_runtime.cuh's helpers, split_parts among them, come first)."""
    path = tmp_path / "prog.cu"
    path.write_text("#include <cstdint>\n#include <cstdio>\n#include <cstddef>\n" + _host_runtime() + source)
    exe = tmp_path / "prog"
    subprocess.run([nvcc(), "-std=c++17", "-o", str(exe), str(path)], check=True, capture_output=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()


def test_the_exported_split_k_policy_is_the_python_one(tmp_path):
    """split_parts (host_runtime.cuh) against handoff.parts over a grid of shapes and GPU sizes,
    with the accuracy floor's chain bound and with none."""
    from gemmlab.cuda import handoff
    from gemmlab.export.host import split_lines

    # N and K set the least parts at odd shapes (handoff.fewest); k_tiles is N's in tiles of `depth`.
    cases = [(t, n, k, slots, depth, chain) for t in (1, 3, 64, 100, 131, 132, 264, 300, 2048, 70000)
             for n in (1, 15, 128, 255, 1024, 4958, 7609) for k in (4, 7) for slots in (132, 264)
             for depth in (8, 16, 32) for chain in (handoff.LONGEST_CHAIN, 0)]
    calls = "".join("    {\n" f"        const int tiles = {t}, N = {n}, K = {k}, k_tiles = {-(-n // depth)};\n"
                    f"        {split_lines(depth, str(slots), chain)[0]}\n"
                    '        std::printf("%d\\n", parts);\n    }\n'
                    for t, n, k, slots, depth, chain in cases)
    got = _run_host_program(f"int main() {{\n{calls}    return 0;\n}}\n", tmp_path)
    want = [handoff.parts(t, -(-n // depth), slots, depth, handoff.fewest(n, k, chain))
            for t, n, k, slots, depth, chain in cases]
    assert [int(x) for x in got] == want
    alone = [handoff.parts(t, -(-n // depth), slots, depth) for t, n, k, slots, depth, _ in cases]
    assert any(w > a for w, a in zip(want, alone, strict=True)), "no case is split for accuracy"
    # With no chain to bound, time alone sets the parts.
    assert all(w == a for w, a, c in zip(want, alone, cases, strict=True) if not c[-1])


def test_the_exported_tail_plan_is_the_python_one(tmp_path):
    """split_tail_plan (host_tail.cuh) against handoff.tail_plan over a grid of tile counts,
    reductions, GPU sizes and depths, odd and even shapes (the accuracy floor), where a tail split
    is chosen and where it is not: the same lead, lead parts and tail parts."""
    from gemmlab.cuda import handoff

    cases = [(t, n, k, slots, depth) for t in (1, 7, 263, 265, 300, 550, 1089, 1122, 2178, 3283, 5000)
             for n in (15, 130, 197, 248, 1025, 2074, 5248) for k in (4, 7) for slots in (264, 1056)
             for depth in (8, 16)]
    calls = "".join("    {\n" f"        const int tiles = {t}, N = {n}, K = {k}, k_tiles = {-(-n // depth)};\n"
                    "        int lead = 0, lead_parts = 1, tail_parts = 1;\n"
                    f"        {handoff.tail_call('tiles', 'k_tiles', str(slots), depth)}\n"
                    '        std::printf("%d,%d,%d\\n", lead, lead_parts, tail_parts);\n    }\n'
                    for t, n, k, slots, depth in cases)
    got = _run_host_program(f"int main() {{\n{calls}    return 0;\n}}\n", tmp_path)
    want = []
    for t, n, k, slots, depth in cases:
        plan = handoff.tail_plan(t, -(-n // depth), slots, depth, handoff.fewest(n, k))
        want.append(f"{plan.lead},{plan.lead_parts},{plan.tail_parts}")
    assert got == want
    tails = sum(1 for t, x in zip(cases, want, strict=True) if int(x.split(",")[0]) < t[0])
    assert 0 < tails < len(cases), "the grid never tells a tail split from SPLIT 1's plan"


def test_the_tail_split_twins_export_and_build_for_hopper(tmp_path):
    """twins.tail_twin (experiments/tail-split) in an exported file: the plan in C++ and the line
    of blocks with its three numbers after the counters, in both of tma-warp's launches, and the file
    built by nvcc for sm_90a; the plan's helper only in a file that needs it."""

    impl = registry.get("tma-warp")
    text = export_text(replace(impl, launches=tuple(twins.tail_twin(x) for x in impl.launches)))
    assert text.count("maps[0], maps[1], C, M, N, K, work, counters, lead, lead_parts, tail_parts") == 2
    assert text.count("dim3(blocks)") == 2 and text.count("split_tail_plan(tiles, k_tiles,") == 2
    assert "split_tail_plan" not in export_text(impl)
    source = tmp_path / "tma-warp-tail.cu"
    source.write_text(text)
    proc = build_library(source, "-arch=sm_90a", tmp_path / "tma-warp-tail.so")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _exported_split_parts(rung: str):
    """A persistent split twin of `rung` and the C++ lines of its exported launch that set its parts
    (the units or tiles, then the parts)."""
    from gemmlab import launches
    from gemmlab.export.source import Variants
    from gemmlab.export.tma import _split_lines, swapped_body

    if rung == "wgmma-3xtf32":
        launch = launches.wgmma_3xtf32_split_launches()[0]
        return launch, _split_lines(launch)[:2]
    launch = launches.wgmma_swap_split_launches()[0]
    variants = Variants()
    variants.add(launch.kernel)
    body_lines = swapped_body(launch, variants)
    first = next(i for i, x in enumerate(body_lines) if x.startswith("const int units"))
    return launch, body_lines[first:first + 2]


@pytest.mark.parametrize("rung", ["wgmma-swap", "wgmma-3xtf32"])
def test_the_exported_persistent_split_parts_are_the_python_ones(rung, tmp_path, monkeypatch):
    """tma.swapped_body's parts (SwappedOperands.parts in C++) and tma.body's for the 3xTF32 split
    (TmaOperands.parts): the same over shapes that split and shapes that do not, on 132 and 114
    SMs (sm_count() stubbed in the program)."""
    from gemmlab.cuda import driver as cl

    launch, cpp = _exported_split_parts(rung)
    lines = [x.replace("sm_count()", "sms") for x in cpp]
    assert lines[1].startswith("const int parts")
    shapes = [(1024, 8192, 1024), (105, 7416, 699), (512, 4096, 512), (8192, 6144, 4096), (541, 57, 1338),
              (1, 1, 1), (2048, 2048, 2048), (300, 8000, 7000), (724, 2048, 724), (3000, 600, 700),
              (1448, 2048, 1448), (8192, 8192, 8192)]
    cases = [(sms, shape) for sms in (132, 114) for shape in shapes]
    body = "".join("    {\n" f"        sms = {sms}; const int M = {m}, N = {n}, K = {k};\n"
                   + "".join(f"        {x}\n" for x in lines) + '        std::printf("%d\\n", parts);\n    }\n'
                   for sms, (m, n, k) in cases)
    program = f"int main() {{\n    int sms = 0;\n{body}    return 0;\n}}\n"
    got = [int(x) for x in _run_host_program(program, tmp_path)]
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    want = []
    for sms, shape in cases:
        monkeypatch.setattr(cl, "sm_count", lambda index, sms=sms: sms)
        want.append(launch.host.parts(launch, *shape))
    assert got == want and max(want) > 1 and min(want) == 1


def test_the_split_twins_condition_in_cpp_decides_as_split_pays_does(tmp_path):
    """`default`'s split-K twins run where `SplitPays` holds: its C++ against it, at shapes that
    fill whole waves (2048³, 8192³) and shapes whose last wave is part empty (2438×4958×2453)."""
    from gemmlab.cuda.handoff import SplitPays

    conds = [SplitPays((128, 128), 16, 2, 132), SplitPays((128, 128), 32, 2, 132), SplitPays((64, 64), 16, 8, 114)]
    dims = (1, 100, 1000, 2048, 2438, 3101, 4958, 8192)
    shapes = list(itertools.product(dims, repeat=3))
    funcs = "".join(f"static bool pays{i}(int M, int N, int K) {{ return {c.cpp()}; }}\n" for i, c in enumerate(conds))
    table = ",".join("{" + ",".join(map(str, s)) + "}" for s in shapes)
    calls = "".join(f"putchar('0' + pays{i}(s[0], s[1], s[2]));" for i in range(len(conds)))
    got = _run_host_program(f"{funcs}static const int shapes[][3] = {{{table}}};\n"
                            f"int main() {{ for (auto& s : shapes) {{ {calls} putchar('\\n'); }} }}\n", tmp_path)
    want = ["".join(str(int(c(None, None, None, *s))) for c in conds) for s in shapes]
    assert got == want
    assert {"0", "1"} <= set("".join(want)), "the grid never tells the two apart"


class Pointer:
    def __init__(self, address: int):
        self.address = address

    def data_ptr(self) -> int:
        return self.address


def test_each_precondition_in_cpp_decides_as_requires_does(tmp_path):
    found = {launch.when for impl in registry.IMPLEMENTATIONS for launch in impl.launches if launch.when}
    wanted = sorted(found | {When(), When(m=3, align=8, operands="BC")}, key=repr)
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
    program = ""  # round_up: host_runtime.cuh's
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


def _slug(build: Build) -> str:
    return build.flags.removeprefix("-arch=") or "default"


def _build(name: str, build: Build, folder: Path) -> tuple[int, str, str, str]:
    """(nvcc's exit code, its output, the library's dynamic symbols, its SASS)."""
    lib = folder / f"{name}-{_slug(build)}.so"
    proc = build_library(folder / f"{name}.cu", build.flags, lib)
    if proc.returncode:
        return proc.returncode, proc.stdout + proc.stderr, "", ""
    symbols = subprocess.run(["nm", "-D", str(lib)], capture_output=True, text=True).stdout
    sass = sass_of(lib)
    lib.unlink()  # the SASS is what the tests read; 120 libraries would fill CI's disk
    return 0, proc.stdout + proc.stderr, symbols, sass


BUILD_MATRIX = [(name, build) for name in CUDA_NAMES for build in BUILDS]


def _plan(build: Build, folder: Path) -> str:
    """nvcc's dry run of a build, its temporary files' names blanked: two builds with one plan run
    the same tools with the same arguments (nvcc 13 with no -arch is -arch=sm_75)."""
    source = folder / "plan.cu"
    dry = build_library(source, f"{build.flags} --dryrun", folder / "plan.so")
    assert dry.returncode == 0, dry.stderr
    return re.sub(r"tmpxft_[0-9a-f_]+", "tmp", dry.stdout + dry.stderr)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[tuple[str, str], tuple[int, str, str, str]]:
    """Every CUDA rung exported and built with every grader's flags (`BUILDS`), two at a time
    (CI has two cores); where two flag sets plan the same build (`_plan`), it is built once."""
    nvcc()
    folder = tmp_path_factory.mktemp("export")
    for name in CUDA_NAMES:
        (folder / f"{name}.cu").write_text(export_text(registry.get(name)))
    first: dict[str, Build] = {}
    same = {build.flags: first.setdefault(_plan(build, folder), build) for build in BUILDS}
    jobs = [(name, build) for name, build in BUILD_MATRIX if same[build.flags] is build]
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(((name, build.flags) for name, build in jobs), pool.map(lambda job: _build(*job, folder), jobs),
                        strict=True))
    return {(name, build.flags): done[(name, same[build.flags].flags)] for name, build in BUILD_MATRIX}


def test_builds_that_plan_alike_are_one_build_and_the_others_differ(tmp_path):
    """The fixture's sharing holds only where nvcc's plans match: no -arch and -arch=sm_75 do
    (nvcc 13's default target), and every other pair differs."""
    nvcc()
    plans = {build.flags: _plan(build, tmp_path) for build in BUILDS}
    alike = {frozenset(f for f in plans if plans[f] == plan) for plan in plans.values()}
    assert {group for group in alike if len(group) > 1} <= {frozenset({"", "-arch=sm_75"})}
    assert len(alike) >= len(BUILDS) - 1


@pytest.mark.parametrize(("name", "build"), BUILD_MATRIX, ids=[f"{n}-{_slug(b)}" for n, b in BUILD_MATRIX])
def test_nvcc_builds_the_export_with_every_graders_flags(built, name, build):
    code, log, symbols, _ = built[(name, build.flags)]
    assert code == 0, log
    assert "warning" not in log.lower() and "error" not in log.lower(), log
    assert re.search(r"^[0-9a-f]+ T solve$", symbols, re.M), symbols
    # The TMA rungs reach the driver through the runtime: nothing left for -lcuda to resolve.
    assert not re.search(r" U cu[A-Z]", symbols), symbols


_BUILD_LINE = re.compile(r'^//   build "(.*)": launches (.*?); ', re.M)


@pytest.mark.parametrize(("name", "build"), BUILD_MATRIX, ids=[f"{n}-{_slug(b)}" for n, b in BUILD_MATRIX])
def test_the_headers_build_advice_is_what_each_build_holds(built, name, build):
    """The header says which launches each build holds; the build's SASS says which kernels have
    real code (a kernel whose features the target lacks is a trapping stand-in)."""
    impl = registry.get(name)
    text = export_text(impl)
    advice = dict(_BUILD_LINE.findall(text.split("#include", 1)[0]))
    assert set(advice) == {b.flags for b in BUILDS}
    p = plan(impl)
    variants = collect_variants(p.launches)
    real = real_kernels(built[(name, build.flags)][3])
    in_sass = [i for i, launch in enumerate(p.launches)
               if all(variants.ref(k).removeprefix("gemmlab::") in real for k in launch.kernels())]
    assert advice[build.flags] == ranges(in_sass) == ranges(held(p.launches, build))
    # Every build computes the product: its last launch, the portable floor, is always real.
    assert len(p.launches) - 1 in in_sass


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
    assert "// mine.cu: gemmlab step 1.1 `naive`" in target.read_text()
    target.write_text("keep")
    assert_one_line(invoke("export", "naive", "-o", target), 2, "exists", "--force")
    assert target.read_text() == "keep"
    assert invoke("export", "smem-16", "-o", target, "--force").exit_code == 0
    assert "`smem-16`" in target.read_text()


@pytest.mark.parametrize(("args", "fragments"), [
    (["no-such-rung"], ["unknown implementation 'no-such-rung'"]),
    (["tilelang-gemm"], ["tilelang-gemm is a TileLang rung", "only CUDA, Triton, PyTorch, CuTe DSL and Mojo rungs"]),
    (["triton", "-o", "x.cu"], ["triton is written as a .py file"]),
    (["naive", "-o", "missing/x.cu"], ["no such folder"]),
    (["naive", "-o", "."], ["is a folder"]),
])
def test_export_mistakes_exit_2_with_one_line_and_write_nothing(tmp_path, monkeypatch, args, fragments):
    monkeypatch.chdir(tmp_path)
    assert_one_line(invoke("export", *args), 2, *fragments)
    assert files_under(tmp_path) == set()


def test_export_builds_with_a_graders_flags_and_says_what_the_build_holds(tmp_path):
    nvcc()
    target = tmp_path / "bigtile.cu"
    result = invoke("export", "bigtile", "-o", target, "--nvcc-flags", "")
    assert result.exit_code == 0, result.output
    p = plan(registry.get("bigtile"))
    # nvcc's own target has no cp.async: only the portable floor (warptile's launches) is held.
    floor = ranges(list(range(p.own, len(p.launches))))
    held = len(p.launches) - p.own
    assert (f"holds {held} of its {len(p.launches)} launches (#{floor}); launches #{floor} are the portable floor"
            in " ".join(result.output.split()))


def test_export_nvcc_flags_mistakes(tmp_path):
    nvcc()
    target = tmp_path / "naive.cu"
    assert_one_line(invoke("export", "naive", "-o", target, "--nvcc-flags", "-arch=sm_90 -o x.so"), 2,
                    "-o is gemmlab's to choose")
    assert_one_line(invoke("export", "naive", "-o", target, "--nvcc-flags", "-arch='sm_90"), 2, "quotation")
    assert files_under(tmp_path) == set()
    failed = invoke("export", "naive", "-o", target, "--nvcc-flags", "-arch=sm_12")
    assert failed.exit_code == 1 and "nvcc -arch=sm_12 failed to build" in failed.output
    assert "Unsupported gpu architecture" in failed.output


# ---- on the GPU: each build of the exported file computes the product ------------------------

GPU_RUNGS = ["float4", "warptile", "bigtile", "splitk", "tma", "default", "mma-tf32", "wgmma-tma", "wgmma-ws",
             "wgmma-3xtf32", "wgmma-swap", "mma-split", "tf32", "3xtf32"]
#: Odd shapes (fallbacks, ragged edges), whole tiles (fast paths), one misaligned A (checked paths).
GPU_SHAPES = [(300, 257, 301), (1000, 1004, 999), (128, 128, 128), (512, 256, 384), (64, 36, 1000)]
#: And for the strict rungs that dispatch by size: tiny ones, 1024³ (split-K), the performance
#: shape and its all-odd variant (the many-waves classes); `default` also gets one shape per class.
SIZED = [(1, 1, 1), (3, 5, 7), (17, 19, 23), (1024, 1024, 1024), (8192, 6144, 4096), (8191, 6143, 4095)]
#: The builds a grader may make, plus -arch=native (which needs the GPU to build): each must load
#: and compute the product on this GPU, or (a build for another GPU) say so and leave C unwritten.
GPU_BUILDS = [*BUILDS, Build("-arch=native", "native", "the GPU at hand")]


def _gpu_shapes(name: str) -> list[tuple[int, int, int]]:
    from gemmlab.policy.classes import representatives

    shapes = GPU_SHAPES + (SIZED if name in ("bigtile", "splitk", "tma", "default") else [])
    if name in ("tf32", "3xtf32"):  # both sides of each dispatcher's outputs floor
        shapes += [(1024, 1024, 1024), (2048, 300, 1536)]
    if name in ("tf32", "3xtf32"):  # above the floors with a short reduction: the strict `short` kernel
        shapes += [(2026, 28, 1030)]
    if name == "default":
        shapes += [s for s in representatives().values() if s not in shapes]
    return shapes


def _loads_here(build: Build) -> bool:
    """Whether this GPU runs a build: code for its own target (or native), or PTX of an earlier
    plain target, which the driver compiles for it; never another GPU's arch-specific code."""
    if build.arch == "native":
        return True
    cc = torch.cuda.get_device_capability()
    target = Needs.SM90A if build.arch.endswith("a") else Needs.ANY
    from gemmlab.cuda.needs import cc_of

    return cc_of(build.arch) == cc if target is Needs.SM90A else cc_of(build.arch) <= cc


class _Libraries(dict):
    """Each GPU rung exported and built with every build's flags, seven at a time, when a test
    first asks for one of its builds: a run that selects a few rungs (-k) builds only theirs."""

    def __init__(self, folder: Path):
        super().__init__()
        self.folder = folder

    def __missing__(self, key: tuple[str, str]) -> Path:
        name = key[0]
        source = self.folder / f"{name}.cu"
        source.write_text(export_text(registry.get(name)))

        def build(b: Build) -> Path:
            lib = self.folder / f"{name}-{_slug(b)}.so"
            proc = build_library(source, b.flags, lib)
            assert proc.returncode == 0, f"{name} {b.label}: {proc.stdout}{proc.stderr}"
            return lib

        with ThreadPoolExecutor(max_workers=len(GPU_BUILDS)) as pool:
            for b, lib in zip(GPU_BUILDS, pool.map(build, GPU_BUILDS), strict=True):
                self[(name, b.flags)] = lib
        return self[key]


@pytest.fixture(scope="module")
def gpu_libraries(tmp_path_factory) -> dict[tuple[str, str], Path]:
    nvcc()
    return _Libraries(tmp_path_factory.mktemp("export-gpu"))


@cache
def _solve_of(lib: Path):
    solve = ctypes.CDLL(str(lib)).solve
    solve.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 3
    solve.restype = None
    return solve


@cache
def _case(m: int, n: int, k: int, misaligned: bool):
    """Operands and their float64 product, made once for every rung and build that uses them."""
    gen = torch.Generator(device="cuda").manual_seed(m * 7 + n * 3 + k)
    a = (torch.rand(m * n + 1, device="cuda", generator=gen) * 2 - 1)[int(misaligned):][: m * n].view(m, n)
    b = torch.rand(n, k, device="cuda", generator=gen) * 2 - 1
    return a, b, reference.reference64(a, b)


def _exported_figures(solve, m: int, n: int, k: int, misaligned: bool) -> reference.ErrorFigures:
    """One call of an exported file's `solve` through ctypes on `_case`'s operands, into a poisoned
    C, and its error figures against the float64 product."""
    a, b, ref = _case(m, n, k, misaligned)
    c = reference.poison_(torch.empty(m, k, device="cuda"))
    solve(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k)
    torch.cuda.synchronize()
    return reference.error_figures(c, ref)


@pytest.mark.gpu
@pytest.mark.parametrize("build", GPU_BUILDS, ids=_slug)
@pytest.mark.parametrize("name", GPU_RUNGS)
def test_each_build_of_the_exported_file_computes_the_product_on_the_gpu(name, build, gpu_libraries, capfd):
    impl = registry.get(name)
    ok, why = impl.can_run_on(torch.device("cuda"))
    if not ok:
        pytest.skip(why)
    solve = _solve_of(gpu_libraries[(name, build.flags)])
    if not _loads_here(build):  # another GPU's build: one line on stderr, C untouched, no crash
        a, b, _ = _case(64, 64, 64, False)
        c = reference.poison_(torch.empty(64, 64, device="cuda"))
        solve(a.data_ptr(), b.data_ptr(), c.data_ptr(), 64, 64, 64)
        torch.cuda.synchronize()
        assert reference.unwritten(c) == c.numel()
        assert "holds no device code this GPU" in capfd.readouterr().err
        return
    for (m, n, k), misaligned in itertools.product(_gpu_shapes(name), (False, True)):
        if misaligned and m * n * k > 2**30:
            continue  # the large shapes check the fast paths; the misaligned paths are checked above
        fig = _exported_figures(solve, m, n, k, misaligned)
        where = f"{name} ({build.label}) {m}×{n}×{k}{' A misaligned' if misaligned else ''}"
        assert fig.unwritten == 0, f"{where}: {fig.unwritten} elements unwritten"
        assert fig.norm_max <= reference.GATES[impl.precision], f"{where}: {fig}"
        # LeetGPU's check against the float64 product, where FP32 itself meets it (at the large
        # shapes even cuBLAS FP32 leaves elements outside: LADDER §4; the norm gate holds there).
        if impl.precision is not reference.Precision.TF32 and m * n * k <= 2**30:
            assert fig.exact_violations == 0, f"{where}: {fig}"


@pytest.mark.gpu
@pytest.mark.parametrize("rung", _EXPORTED_SPLITS)
def test_the_exported_persistent_split_twins_compute_the_product_on_the_gpu(rung, tmp_path):
    """The split twins' exported file (experiments/swap-split, experiments/3x-split), built for
    sm_90a and run through ctypes at shapes it splits (few tiles) and one it runs whole (3000×600×700,
    more than one wave), with A misaligned too (the copied path): every element written, within
    the rung's gate."""
    from gemmlab import launches

    impl = registry.get(rung)
    ok, why = impl.can_run_on(torch.device("cuda"))
    if not ok:
        pytest.skip(why)
    maker = _EXPORTED_SPLITS[rung][0]
    source = tmp_path / f"{rung}-split.cu"
    source.write_text(export_text(replace(impl, launches=getattr(launches, maker)())))
    lib = tmp_path / f"{rung}-split.so"
    proc = build_library(source, "-arch=sm_90a", lib)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    solve = _solve_of(lib)
    for (m, n, k), misaligned in itertools.product([(512, 4096, 512), (1024, 8192, 1024), (3000, 600, 700)],
                                                   (False, True)):
        fig = _exported_figures(solve, m, n, k, misaligned)
        where = f"{rung} split {m}×{n}×{k}{' A misaligned' if misaligned else ''}"
        assert fig.unwritten == 0 and fig.norm_max <= reference.GATES[impl.precision], f"{where}: {fig}"


@pytest.mark.gpu
def test_the_exported_tail_split_twins_compute_the_product_on_the_gpu(tmp_path):
    """The tail split's exported file (experiments/tail-split): tma-warp's launches as tail twins,
    built for sm_90a and run through ctypes where the last wave's tiles split (1348×248×6274:
    b-padded; 2112×256×2112: B in place), where every tile splits alike (829×4858×193) and where
    none does (64³), A misaligned too: every element written, within the strict gate."""

    impl = registry.get("tma-warp")
    ok, why = impl.can_run_on(torch.device("cuda"))
    if not ok:
        pytest.skip(why)
    source = tmp_path / "tma-warp-tail.cu"
    source.write_text(export_text(replace(impl, launches=tuple(twins.tail_twin(x) for x in impl.launches))))
    lib = tmp_path / "tma-warp-tail.so"
    proc = build_library(source, "-arch=sm_90a", lib)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    solve = _solve_of(lib)
    for (m, n, k), misaligned in itertools.product([(1348, 248, 6274), (2112, 256, 2112), (829, 4858, 193),
                                                    (64, 64, 64)], (False, True)):
        fig = _exported_figures(solve, m, n, k, misaligned)
        where = f"tail split {m}×{n}×{k}{' A misaligned' if misaligned else ''}"
        assert fig.unwritten == 0 and fig.norm_max <= reference.GATES[impl.precision], f"{where}: {fig}"


def test_nvcc_builds_an_export_whose_bigtile_takes_its_tiles_by_tma(tmp_path):
    """bigtile's TMA_COPY (experiments/bigtile-tma) exported: descriptors of Aᵀ and of B
    (as it lies, or its padded copy) encoded in C++ and passed in place of the two pointers."""
    base = registry.get("splitk")
    knobs = {"BK": 16, "STAGES": 3, "FETCH_BA": 1, "TMA_COPY": 1}
    impl = replace(base, name="splitk-tma", launches=tuple(x.with_defines(knobs) for x in base.launches))
    text = export_text(impl, "splitk_tma.cu")
    assert text.count("matrix_map(&maps[") == 4 and "maps[0], maps[1], C, M, N, K, work, counters" in text
    source = tmp_path / "splitk_tma.cu"
    source.write_text(text)
    proc = subprocess.run([nvcc(), *NVCC_FLAGS, "-o", str(tmp_path / "splitk_tma.so"), str(source)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr



def test_trapping_kernels_keep_the_macros_and_conditionals_their_declarations_use():
    """A Hopper variant's stand-ins for the other device passes: a declaration built from a
    macro, and two declarations one of which a conditional removes, come out as the source has
    them (bigtile.cu's BIGTILE_ARGS and SPLIT)."""
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
