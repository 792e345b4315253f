"""On a GPU: CuTe DSL, Mojo and TileLang solutions judged: each starter and rung accepted, and in
each language the cheats the judge exists for (first call only, an input changed in place, work
left on another stream) rejected for what they are.

Marked `gpu` (skipped cleanly without CUDA); each language's tests also skip, saying which extra,
where its toolchain is not installed. On the H200: ``bash scripts/gpu_session.sh langs`` (it
installs the toolchains from a wheel folder first).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gemmlab import registry
from gemmlab.judge.isolate import judge_file
from gemmlab.langs import TOOLCHAINS

pytestmark = pytest.mark.gpu
PACKAGE = Path(registry.__file__).parent
TEMPLATES = PACKAGE / "templates"
SOL = Path(__file__).parent / "fixtures" / "solutions"
FAST = dict(perf=False, groups=["example", "notes", "wide"], time_shape=(256, 256, 256), iters=3, warmup=1)


def language_of(path: Path) -> str:
    if path.suffix == ".mojo":
        return "mojo"
    return "cute" if "cute" in str(path) else "tilelang"


def skip_without(framework: str) -> None:
    why = TOOLCHAINS[framework].missing()
    if why:
        pytest.skip(why)


@pytest.mark.parametrize("path,precision", [
    (TEMPLATES / "solution_cute.py", "fp32"), (TEMPLATES / "solution.mojo", "fp32"),
    (TEMPLATES / "solution_tilelang.py", "fp32"),
    (PACKAGE / "kernels" / "cute" / "tiled.py", "fp32"), (PACKAGE / "kernels" / "mojo" / "tiled.mojo", "fp32"),
    (PACKAGE / "kernels" / "tilelang" / "gemm.py", "tf32"),
], ids=lambda p: f"{language_of(p)}:{p.name}" if isinstance(p, Path) else p)
def test_each_language_s_starter_and_rung_are_accepted(path, precision):
    skip_without(language_of(path))
    v = judge_file(path, precision=precision, seed=61, **FAST)
    assert v.passed and v.exit_code == 0, (v.failure, v.log[-3000:])
    assert v.timing["baseline"].startswith("cuBLAS") and "CUDA events" in v.timing["method"]


@pytest.mark.parametrize("name", ["cute-tiled", "mojo-tiled"])
def test_the_exported_file_is_accepted_at_the_performance_shape(tmp_path, name):
    """`gemmlab export` writes the file LeetGPU takes; judged as a user's, the performance case too."""
    from gemmlab.export import export_text

    impl = registry.get(name)
    skip_without(str(impl.family))
    path = tmp_path / f"{name}{Path(impl.sources[0]).suffix}"
    path.write_text(export_text(impl, path.name))
    v = judge_file(path, seed=62, groups=["example", "leetgpu", "perf"], iters=5, warmup=2)
    assert v.passed, (v.failure, v.log[-3000:])
    assert any(c["group"] == "perf" and c["status"] == "pass" for c in v.cases)


@pytest.mark.parametrize("name,reason", [
    ("first_call_only_cute.py", "never written"),
    ("modifies_a_cute.py", "modified its input A"),
    ("second_stream_cute.py", "C changed after solve returned"),
    ("first_call_only.mojo", "never written"),
    ("modifies_a.mojo", "modified its input A"),
    ("second_stream.mojo", "C changed after solve returned"),
    ("first_call_only_tilelang.py", "never written"),
    ("modifies_a_tilelang.py", "modified its input A"),
    ("second_stream_tilelang.py", "C changed after solve returned"),
])
def test_each_language_s_cheats_are_rejected(name, reason):
    skip_without(language_of(SOL / name))
    v = judge_file(SOL / name, seed=63, **FAST)
    assert not v.passed and v.exit_code == 1, (v.failure, v.log[-3000:])
    assert reason in v.failure, v.failure


@pytest.mark.parametrize("name", ["cute-tiled", "mojo-tiled", "tilelang-gemm"])
def test_the_registry_s_language_rung_passes_check(name):
    from gemmlab.judge.cases import standard_cases
    from gemmlab.judge.runner import judge
    from gemmlab.runtime import default_device

    impl = registry.get(name)
    skip_without(str(impl.family))
    device = default_device()
    cases = [c for c in standard_cases(64, perf=False) if c.group in ("example", "notes", "leetgpu")]
    j = judge(impl.name, impl.solve, impl.precision, cases, device, 64)
    assert j.passed, [(r.case, r.reason) for r in j.failed]
