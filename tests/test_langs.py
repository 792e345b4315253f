"""CuTe DSL, Mojo and TileLang without a GPU: detection, the starters, signatures, what each
toolchain builds here, the rungs' claims about their own code, and exit 3 without the toolchain.

A test that needs a toolchain is skipped, saying which, where it is not installed (CI installs
all three: scripts/test.sh). What runs on the GPU is in tests/test_langs_gpu.py.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gemmlab import registry
from gemmlab.judge.isolate import UsageError, check_usage, judge_file
from gemmlab.judge.userfile import detected_framework
from gemmlab.langs import TOOLCHAINS, Toolchain
from tests.clitools import HAS_GPU, assert_one_line, invoke

PACKAGE = Path(registry.__file__).parent
TEMPLATES = PACKAGE / "templates"
SOL = Path(__file__).parent / "fixtures" / "solutions"


def needs(framework: str):
    why = TOOLCHAINS[framework].missing()
    return pytest.mark.skipif(why is not None, reason=why or "")


# -- detection --------------------------------------------------------------------------------

@pytest.mark.parametrize("source,framework", [
    ("import cutlass\nimport cutlass.cute as cute\n", "cute"),
    ("import cutlass.cute as cute\nimport torch\n", "cute"),
    ("from cutlass import cute\n", "cute"),
    ("import tilelang\nimport tilelang.language as T\nimport torch\n", "tilelang"),
    ("import torch\nimport triton\n", "triton"),
    ('"""Not CuTe DSL: import cutlass is only words here."""\nimport torch\n', "torch"),
    ("import torch  # import tilelang, in a comment\n", "torch"),
    ("def f():\n    import cutlass\n", "cute"),  # an import in any scope is an import
])
def test_the_framework_is_what_the_module_really_imports(tmp_path, source, framework):
    path = tmp_path / "s.py"
    path.write_text(source)
    assert detected_framework(path) == framework


def test_a_mojo_file_is_mojo_by_its_name(tmp_path):
    path = tmp_path / "s.mojo"
    path.write_text("import torch\n")  # whatever it says
    assert detected_framework(path) == "mojo"


@pytest.mark.parametrize("name,framework,fragment", [
    ("s.py", "mojo", "Mojo solutions are .mojo files"),
    ("s.mojo", "cuda", "CUDA solutions are .cu files"),
    ("s.mojo", "cute", "Mojo solutions are .mojo files"),
    ("s.txt", None, "name it .cu, .mojo or .py"),
])
def test_a_framework_that_does_not_fit_the_file_is_a_usage_error(tmp_path, name, framework, fragment):
    path = tmp_path / name
    path.write_text("x")
    with pytest.raises(UsageError, match=re.escape(fragment)):
        check_usage(path, framework, "fp32", None, None, None)


# -- the starters ----------------------------------------------------------------------------

def _signature(path: Path, name: str = "solve") -> tuple[list[str], list[str]]:
    """(parameter names, decorator sources) of a Python function."""
    tree = ast.parse(path.read_text())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return [a.arg for a in fn.args.args], [ast.unparse(d) for d in fn.decorator_list]


def test_the_cute_starter_has_leetgpu_s_signature():
    path = TEMPLATES / "solution_cute.py"
    params, decorators = _signature(path)
    assert params == ["A", "B", "C", "M", "N", "K"] and decorators == ["cute.jit"]
    text = path.read_text()
    assert "import cutlass\nimport cutlass.cute as cute\n" in text
    assert "def solve(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor, M, N, K):" in text
    assert detected_framework(path) == "cute"


def _mojo_solve(text: str) -> str:
    """The exported solve's signature, whitespace folded."""
    head = re.search(r"@export\s+def solve\((.*?)\):", text, re.S)
    assert head, "no @export def solve(...)"
    return " ".join(head.group(1).split())


MOJO_SIGNATURE = ("A: UnsafePointer[Float32], B: UnsafePointer[Float32], C: UnsafePointer[Float32], "
                  "M: Int32, N: Int32, K: Int32")


@pytest.mark.parametrize("path", [TEMPLATES / "solution.mojo", PACKAGE / "kernels" / "mojo" / "tiled.mojo"])
def test_the_mojo_files_have_leetgpu_s_signature_and_wait_for_their_kernels(path):
    text = path.read_text()
    assert _mojo_solve(text) == MOJO_SIGNATURE
    assert "DeviceContext()" in text and "ctx.synchronize()" in text  # C is written when solve returns


def test_the_tilelang_starter_is_a_solve_on_tensors():
    path = TEMPLATES / "solution_tilelang.py"
    params, _ = _signature(path)
    assert params == ["a", "b", "c", "M", "N", "K"] and detected_framework(path) == "tilelang"


@pytest.mark.parametrize("framework,name", [("cute", "solution_cute.py"), ("mojo", "solution.mojo"),
                                            ("tilelang", "solution_tilelang.py")])
def test_new_writes_each_starter(tmp_path, monkeypatch, framework, name):
    monkeypatch.chdir(tmp_path)
    result = invoke("new", "--framework", framework)
    assert result.exit_code == 0, result.output
    assert (tmp_path / name).read_text() == (TEMPLATES / name).read_text()
    assert f"gemmlab judge {name}" in result.output


# -- without the toolchain -------------------------------------------------------------------

@pytest.fixture
def no_toolchains(monkeypatch):
    monkeypatch.setattr(Toolchain, "missing",
                        lambda self: f"{self.title} is not installed here (pip install '{self.extra}')")


@pytest.mark.parametrize("name,extra", [("solution_cute.py", "gemmlab[cute]"), ("solution.mojo", "gemmlab[mojo]"),
                                        ("solution_tilelang.py", "gemmlab[tilelang]")])
def test_judge_without_the_toolchain_is_exit_3_in_one_line(no_toolchains, name, extra):
    assert_one_line(invoke("judge", TEMPLATES / name), 3, "not installed here", extra)


def test_list_and_check_say_which_extra_a_rung_needs(no_toolchains):
    listed = invoke("list").output
    for impl, extra in (("cute-tiled", "gemmlab[cute]"), ("mojo-tiled", "gemmlab[mojo]"),
                        ("tilelang-gemm", "gemmlab[tilelang]")):
        assert f"{impl}: needs {extra}, not installed here" in listed
        result = invoke("check", impl, "--group", "example")
        assert result.exit_code == 3, result.output
        assert f"not run: install {extra}" in result.output


def test_the_language_rungs_are_in_the_registry_with_their_sources():
    for name, family, precision, source in (("cute-tiled", "cute", "fp32", "kernels/cute/tiled.py"),
                                            ("mojo-tiled", "mojo", "fp32", "kernels/mojo/tiled.mojo"),
                                            ("tilelang-gemm", "tilelang", "tf32", "kernels/tilelang/gemm.py")):
        impl = registry.get(name)
        assert (impl.family, impl.precision, impl.sources) == (family, precision, (source,))
        # Its measurement, once: figures linked to the H200 record (tests/test_doc_figures.py checks each)
        text = (PACKAGE / impl.doc).read_text()
        assert text.count("**Measured**") == 1 and "pending" not in text, impl.doc
        assert f"experiments/langs-gpu/2-langs-bench.json#results.name={name}.median_ms" in text, impl.doc
    assert registry.get(name).chapter is registry.LANGUAGES  # the last such rung above
    # Their old numbers (aliases now) come after `default`'s, as old command lines knew them.
    assert min(registry.get(n).old_number for n in ("cute-tiled", "mojo-tiled", "tilelang-gemm")) > registry.get("default").old_number


# -- export ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name,suffix", [("cute-tiled", ".py"), ("mojo-tiled", ".mojo")])
def test_export_writes_the_rung_s_own_leetgpu_file(tmp_path, monkeypatch, name, suffix):
    monkeypatch.chdir(tmp_path)
    result = invoke("export", name)
    assert result.exit_code == 0, result.output
    written = tmp_path / f"{name}{suffix}"
    assert written.read_text() == (PACKAGE / registry.get(name).sources[0]).read_text()
    assert detected_framework(written) == name.split("-")[0]


def test_export_refuses_tilelang_and_nvcc_flags_for_a_source_format(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_one_line(invoke("export", "tilelang-gemm"), 2, "tilelang-gemm is a TileLang rung; only CUDA, Triton, PyTorch, CuTe DSL")
    assert_one_line(invoke("export", "cute-tiled", "--nvcc-flags", ""), 2, "--nvcc-flags builds an exported .cu")
    assert not list(tmp_path.iterdir())


# -- CuTe DSL, where installed ---------------------------------------------------------------

def _run(script: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """A script in a fresh interpreter (the DSL reads its settings from the environment once), from
    a file: CuTe DSL compiles a function from its source."""
    import os
    import tempfile

    from gemmlab.provenance import python_env

    with tempfile.TemporaryDirectory(prefix="gemmlab-langs-") as folder:
        path = Path(folder) / "script.py"
        path.write_text(script)
        return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600,
                              env=python_env({**os.environ, **(env or {})}))


@needs("cute")
@pytest.mark.skipif(HAS_GPU, reason="on a GPU the judge runs it: tests/test_langs_gpu.py")
def test_judge_compiles_a_cute_file_without_a_gpu_and_says_it_cannot_run_it():
    assert_one_line(invoke("judge", TEMPLATES / "solution_cute.py"), 3,
                    "compiles (cute.compile for sm_90a), but there is no CUDA GPU here")


@needs("cute")
@pytest.mark.skipif(HAS_GPU, reason="without a GPU only")
@pytest.mark.parametrize("edit,reason", [
    (("A[row, n]", "A[row, n, 3]"), "cute.compile failed"),  # a coordinate the layout does not have
    (("@cute.jit\ndef solve", "def solve"), "imports (its solve is not @cute.jit"),  # a plain function: exit 3
])
def test_a_cute_file_s_mistakes_are_the_dsl_s_own_words(tmp_path, edit, reason):
    path = tmp_path / "s.py"
    path.write_text((TEMPLATES / "solution_cute.py").read_text().replace(*edit))
    v = judge_file(path)
    assert reason in (v.failure or v.cannot_run), (v.failure, v.cannot_run)
    assert v.exit_code == (1 if "failed" in reason else 3)


@needs("cute")
@pytest.mark.parametrize("shape", [(1, 1), (3, 1), (1, 3), (16, 16)])
def test_every_cute_view_is_row_major_as_solve_was_compiled_for(shape):
    """A 1×1 C (LeetGPU's second example) and a K = 1 operand have stride 1 in both dimensions:
    the view names its leading dimension instead of deducing it (the DSL refuses the first and
    takes the second as column-major: seen on the H200). Its row stride is dynamic, its last is 1."""
    import torch

    from gemmlab.langs import cute

    view = cute._view(torch.zeros(*shape))
    assert tuple(view.dynamic_strides_mask) == (1, 0)
    assert str(view).endswith(":(?{i64},1)>"), str(view)


CUTE_SASS = """
import importlib.util, os, sys, torch
from gemmlab.langs import cute
spec = importlib.util.spec_from_file_location("r", sys.argv[1] if len(sys.argv) > 1 else {path!r})
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
cute.compile_solve(m.solve, torch.device("cpu"))
"""


@needs("cute")
def test_cute_tiled_compiles_to_what_its_notes_claim(tmp_path):
    """512 FFMA (8×8 outputs × BK 8), 128 LDS, 128 registers, no local memory (tiled.md)."""
    from gemmlab.cuda import tools

    source = PACKAGE / "kernels" / "cute" / "tiled.py"
    proc = _run(CUTE_SASS.format(path=str(source)),
                {"CUTE_DSL_ARCH": "sm_90a", "CUTE_DSL_KEEP": "cubin", "CUTE_DSL_DUMP_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    cubin = next(tmp_path.glob("*.cubin"))
    objdump = tools.find("cuobjdump")
    usage = subprocess.run([objdump, "-res-usage", str(cubin)], capture_output=True, text=True).stdout
    assert re.search(r"REG:128 STACK:0 .* LOCAL:0 ", usage), usage
    sass = subprocess.run([objdump, "-sass", str(cubin)], capture_output=True, text=True).stdout
    ops = re.findall(r"^\s+/\*[0-9a-f]+\*/\s+([A-Z][A-Z0-9.]*)", sass, re.M)
    assert ops.count("FFMA") == 512 and ops.count("LDS") == 128 and "STS.128" in ops
    assert not any(op.startswith(("HMMA", "HGMMA")) for op in ops)  # no tensor cores: strict FP32


@needs("cute")
def test_the_cute_dsl_offers_no_tf32_wgmma_but_its_ir_builds_one():
    """The evidence in kernels/cute/wgmma_tf32.md, checked against the installed DSL."""
    proc = _run("""
import cutlass, cutlass.cute as cute, torch
from cutlass import Float32, TFloat32
from cutlass.cute.nvgpu import OperandMajorMode, warpgroup
from cutlass.cute.nvgpu.warpgroup import mma as wgm
from cutlass.cute.runtime import from_dlpack
from cutlass.utils import hopper_helpers
print("public ops:", sorted(n for n in dir(warpgroup) if n.startswith("Mma") and n.endswith("Op") and n != "MmaOp"))
try:
    hopper_helpers.make_trivial_tiled_mma(TFloat32, TFloat32, OperandMajorMode.K, OperandMajorMode.K,
                                          Float32, (1, 1, 1), (64, 64))
except TypeError as exc:
    print("helper refuses tf32:", type(exc).__name__)

class Probe(wgm.MmaOp):
    def __init__(self):
        super().__init__(TFloat32, TFloat32, Float32, (64, 64, 8), warpgroup.OperandSource.SMEM,
                         OperandMajorMode.K, OperandMajorMode.K)
    def _make_trait(self, *, loc=None, ip=None, **kw):
        shape = wgm._pack_shape(self.shape_mnk, loc=loc, ip=ip)
        ty = wgm._cute_nvgpu_ir.MmaAtomSM90Type.get(shape.type.attribute, self.a_major_mode._to_ir(),
             self.b_major_mode._to_ir(), self.a_dtype.mlir_type, self.b_dtype.mlir_type,
             self.acc_dtype.mlir_type, self.a_src._to_ir())
        return wgm.MmaF16BF16Trait(wgm.make_atom(ty, [cutlass.Boolean(False).ir_value(loc=loc, ip=ip)],
                                                 loc=loc, ip=ip))

@cute.jit
def probe(x: cute.Tensor):
    try:
        warpgroup.MmaF16BF16Op(TFloat32, Float32, (64, 64, 8), warpgroup.OperandSource.SMEM,
                               OperandMajorMode.K, OperandMajorMode.K)
    except Exception as exc:
        print("public op refuses tf32:", "Float16 or BFloat16" in str(exc))
    print("ir atom:", cute.make_tiled_mma(Probe()).shape_mnk)

cute.compile(probe, from_dlpack(torch.zeros(4)))
""", {"CUTE_DSL_ARCH": "sm_90a"})
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "public ops: ['MmaF16BF16Op', 'MmaF8Op', 'MmaI8Op']" in out, out
    assert "helper refuses tf32: TypeError" in out and "public op refuses tf32: True" in out, out
    assert "ir atom: (64, 64, 8)" in out, out


# -- Mojo, where installed -------------------------------------------------------------------

@needs("mojo")
@pytest.mark.skipif(HAS_GPU, reason="on a GPU the judge runs it: tests/test_langs_gpu.py")
@pytest.mark.parametrize("path", [TEMPLATES / "solution.mojo", PACKAGE / "kernels" / "mojo" / "tiled.mojo",
                                  SOL / "first_call_only.mojo", SOL / "modifies_a.mojo", SOL / "second_stream.mojo"])
def test_mojo_files_build_without_a_gpu(path):
    assert_one_line(invoke("judge", path), 3, "builds (mojo build --emit shared-lib --target-accelerator sm_90a)",
                    "no CUDA GPU here")


@needs("mojo")
def test_a_mojo_compile_error_is_a_rejection_with_the_compiler_s_words(tmp_path):
    path = tmp_path / "broken.mojo"
    path.write_text((TEMPLATES / "solution.mojo").read_text().replace("acc += A[", "acc += AA["))
    v = judge_file(path)
    assert v.exit_code == 1 and "mojo build failed for broken.mojo" in v.failure, v.failure
    assert "use of unknown declaration 'AA'" in v.failure and "Crashpad" not in v.failure


@needs("mojo")
@pytest.mark.skipif(HAS_GPU, reason="without a GPU only: the call fails at DeviceContext, as it should")
def test_a_built_mojo_solve_is_called_through_its_entry_and_its_error_comes_back(tmp_path):
    """An exported Mojo ``def`` takes a hidden result slot first: called as C's solve it crashed
    (SIGSEGV on the H200, and here). Through gemmlab's entry, the error DeviceContext raises
    without a GPU comes back as a MojoError, in a process that lives on."""
    script = f"""
import ctypes, sys
from gemmlab.langs import mojo
call = mojo.entry(ctypes.CDLL(str(mojo.build(sys.argv[1], "sm_90a", {str(tmp_path)!r}))))
try:
    call(0, 0, 0, 1, 1, 1)
except mojo.MojoError as exc:
    print("MojoError:", exc)
print("alive")
"""
    proc = subprocess.run([sys.executable, "-c", script, str(TEMPLATES / "solution.mojo")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "MojoError: solve raised an error" in proc.stdout and "alive" in proc.stdout, proc.stdout
    assert "solve raised:" in proc.stderr, proc.stderr[-2000:]


@needs("mojo")
def test_mojo_tiled_builds_to_what_its_notes_claim(tmp_path):
    """Both instantiations: 512 fma.rn.f32, 64 ld.shared.v4, vector global loads and stores, no
    local memory (tiled.md); the library carries PTX for sm_90a and exports solve."""
    from gemmlab.langs import mojo

    lib = mojo.build(PACKAGE / "kernels" / "mojo" / "tiled.mojo", "sm_90a", tmp_path)
    text = lib.read_bytes().decode("latin-1")
    count = lambda pattern: len(re.findall(pattern, text))  # noqa: E731
    assert ".target sm_90a" in text
    assert count(r"fma\.rn\.f32") == 512 and count(r"ld\.shared\.v4") == 64
    assert count(r"ld\.global\.v4") == 2 and count(r"st\.global\.v4") >= 1
    assert count(r"\.local") == 0
    nm = subprocess.run(["nm", "-D", str(lib)], capture_output=True, text=True).stdout
    assert re.search(r" T solve$", nm, re.M) and re.search(r" T gemmlab_solve$", nm, re.M), nm


# -- TileLang, where installed ---------------------------------------------------------------

TILELANG_LOWER = """
import importlib.util, re, sys
from gemmlab.langs.tilelang import lowered_source
spec = importlib.util.spec_from_file_location("t", {path!r})
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
for name in {names!r}:
    src = lowered_source(getattr(m, name))
    found = sorted(set(re.findall(r"mma_sync<tl::DataType::\\w+|tma_load|cp_async\\w*|wgmma\\w*", src)))
    print(name, found)
"""


@needs("tilelang")
def test_tilelang_gemm_lowers_to_tf32_mma_and_its_starter_to_none():
    """The precision class stated in gemm.md, read from the CUDA TileLang generates for sm_90a."""
    gemm = PACKAGE / "kernels" / "tilelang" / "gemm.py"
    proc = _run(TILELANG_LOWER.format(path=str(gemm), names=["gemm_aligned", "gemm_any"]))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "gemm_aligned ['mma_sync<tl::DataType::kTensorFloat32', 'tma_load']" in proc.stdout, proc.stdout
    assert "gemm_any ['mma_sync<tl::DataType::kTensorFloat32']" in proc.stdout, proc.stdout  # no TMA
    starter = _run(TILELANG_LOWER.format(path=str(TEMPLATES / "solution_tilelang.py"), names=["matmul_kernel"]))
    assert starter.returncode == 0, starter.stderr[-3000:]
    assert "matmul_kernel []" in starter.stdout, starter.stdout  # FMAs only: strict FP32


@needs("tilelang")
@pytest.mark.skipif(HAS_GPU, reason="without a GPU only")
def test_judge_imports_a_tilelang_file_without_a_gpu_and_says_it_cannot_run_it():
    assert_one_line(invoke("judge", TEMPLATES / "solution_tilelang.py"), 3, "imports and defines solve",
                    "no CUDA GPU here")
