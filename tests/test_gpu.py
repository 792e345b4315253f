"""On a GPU: every implementation right on every case (the performance shape too), and the traps caught.

Marked `gpu`: skipped cleanly where CUDA is not available.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gemmlab import launches, registry
from gemmlab.cuda import driver as cl
from gemmlab.cuda.compiler import compile_source
from gemmlab.judge.cases import Case, standard_cases, uniform
from gemmlab.judge.runner import judge
from gemmlab.policy import twins
from gemmlab.reference import Precision, poison_, unwritten

pytestmark = pytest.mark.gpu
GPU = torch.device("cuda")
FIXTURES = Path(__file__).parent / "fixtures"


def _runs_here(impl) -> None:
    """Skip, saying why, an implementation this machine cannot run (a language rung whose toolchain,
    an optional extra, is not installed): the GPU run reports it instead of failing on it."""
    ok, why = impl.can_run_on(GPU)
    if not ok:
        pytest.skip(f"{impl.name}: {why}")


@pytest.mark.parametrize("impl", registry.IMPLEMENTATIONS, ids=lambda i: i.name)
def test_every_case_including_the_performance_shape(impl):
    _runs_here(impl)
    j = judge(impl.name, impl.solve, impl.precision, standard_cases(2026), GPU, 2026)
    assert j.passed, [(r.case, r.reason) for r in j.failed]
    assert any(r.group == "perf" and r.passed for r in j.results)


def _row4_bug():
    module = compile_source(str(FIXTURES / "row4_notes_bug.cu"))
    kernel = cl.get_kernel(module, "row4_notes_bug")

    def solve(a, b, c, m, n, k):
        cl.launch(kernel, (-(-k // 64), -(-m // 16), 1), (16, 16, 1), 0, a.data_ptr(),
                  b.data_ptr(), c.data_ptr(), cl.i32(m), cl.i32(n), cl.i32(k))

    return solve


def test_row4_notes_bug_is_rejected():
    j = judge("row4-notes-bug", _row4_bug(), Precision.FP32, standard_cases(5, perf=False), GPU, 5)
    assert not j.passed
    # Wrong exactly where a 64-wide tile has more than 16 columns.
    for r in j.results:
        assert r.passed == (r.shape[2] <= 16), (r.case, r.reason)


@pytest.mark.parametrize("name", ["float4", "double-buffer-128", "cp-async", "wmma-tf32", "warptile"])
def test_misaligned_pointers_take_the_fallback(name):
    impl = registry.get(name)
    m, n, k = 256, 128, 256
    store = uniform((1, m * n + 1), 1, GPU)
    a = store[0, 1:].view(m, n)  # 4 bytes past an aligned address
    b = uniform((n, k), 2, GPU)
    c = poison_(torch.empty(m, k, device=GPU))
    assert impl.dispatch(a, b, c, m, n, k).when is None
    impl.solve(a, b, c, m, n, k)
    torch.cuda.synchronize()
    assert unwritten(c) == 0
    torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shift", ["A", "B", "C"])
def test_bigtile_reads_a_through_its_transpose_whatever_a_is(shift):
    """bigtile reads Aᵀ, its own copy: a misaligned A keeps the fast path; a misaligned B or C
    takes the padded-B fallback. Either way C is right and fully written."""
    impl = registry.get("bigtile")
    m, n, k = 256, 128, 256
    def operand(rows, cols, seed, off):
        return uniform((1, rows * cols + 1), seed, GPU)[0, off:off + rows * cols].view(rows, cols)
    a = operand(m, n, 1, int(shift == "A"))
    b = operand(n, k, 2, int(shift == "B"))
    c = poison_(torch.empty(m * k + 1, device=GPU)[int(shift == "C"):][: m * k].view(m, k))
    assert (impl.dispatch(a, b, c, m, n, k).when is None) == (shift != "A")
    impl.solve(a, b, c, m, n, k)
    torch.cuda.synchronize()
    assert unwritten(c) == 0
    torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["float4", "double-buffer-64", "cp-async", "wmma-tf32", "warptile",
                                  "bigtile"])
def test_fast_path_is_taken_at_the_performance_shape(name):
    impl = registry.get(name)
    a = torch.empty(8192, 6144, device=GPU)
    b = torch.empty(6144, 4096, device=GPU)
    c = torch.empty(8192, 4096, device=GPU)
    assert impl.dispatch(a, b, c, 8192, 6144, 4096).when is not None


def test_launches_on_torchs_current_stream():
    impl = registry.get("cp-async")
    a, b = uniform((512, 512), 3, GPU), uniform((512, 512), 4, GPU)
    c = poison_(torch.empty(512, 512, device=GPU))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        impl.solve(a, b, c, 512, 512, 512)
    side.synchronize()
    assert unwritten(c) == 0


@pytest.mark.parametrize(
    "impl", [i for i in registry.IMPLEMENTATIONS if i.precision == Precision.FP32], ids=lambda i: i.name
)
def test_strict_fp32_is_bitwise_repeatable(impl):
    _runs_here(impl)
    case = Case("r", "random", (300, 257, 301))
    a, b = uniform((300, 257), 8, GPU), uniform((257, 301), 9, GPU)
    outs = []
    for _ in range(3):
        c = poison_(torch.empty(300, 301, device=GPU))
        impl.solve(a, b, c, *case.shape)
        outs.append(c.view(torch.int32).clone())
    torch.cuda.synchronize()
    assert torch.equal(outs[0], outs[1]) and torch.equal(outs[1], outs[2])


SOLUTIONS = FIXTURES / "solutions"


def test_cuda_user_file_right_and_wrong_end_to_end():
    from gemmlab.judge.isolate import judge_file

    right = judge_file(SOLUTIONS / "right.cu", seed=1, perf=True, iters=3)
    assert right.passed, (right.failure, right.log[-2000:])
    assert right.framework == "cuda" and right.timing["tflops"] > 0
    assert any(c["group"] == "perf" and c["status"] == "pass" for c in right.cases)
    wrong = judge_file(SOLUTIONS / "wrong.cu", seed=1, perf=False)
    assert not wrong.passed
    assert any("never written" in c["reason"] for c in wrong.cases)


@pytest.mark.parametrize("fixture,tool", [("out_of_bounds.cu", "memcheck"), ("race.cu", "racecheck")])
def test_sanitizer_catches_planted_faults(fixture, tool):
    from gemmlab.judge import sanitize as san
    from gemmlab.judge.isolate import judge_file

    v = judge_file(SOLUTIONS / fixture, seed=1, perf=False, groups=["notes"], time_shape=(64, 64, 64),
                   iters=1, wrapper=san.wrapper(tool), env=san.ENV, timeout=400)
    finding = san.parse(tool, v.log)
    assert finding.errors and finding.errors > 0, v.log[-3000:]
    clean = judge_file(SOLUTIONS / "right.cu", seed=1, perf=False, groups=["notes"],
                       time_shape=(64, 64, 64), iters=1, wrapper=san.wrapper(tool), env=san.ENV, timeout=400)
    assert san.parse(tool, clean.log).errors == 0, clean.log[-3000:]


def test_writes_on_another_stream_are_caught():
    from gemmlab.judge.isolate import judge_file

    v = judge_file(SOLUTIONS / "other_stream.py", seed=3, perf=False, groups=["notes"])
    assert not v.passed
    assert any("never written" in c["reason"] for c in v.cases)


def test_illegal_address_is_a_verdict_and_the_gpu_stays_usable():
    from gemmlab.judge.isolate import judge_file

    v = judge_file(SOLUTIONS / "illegal_address.cu", seed=4, perf=False, groups=["notes"], timeout=120)
    assert not v.passed
    assert "illegal" in (v.failure + " ".join(c["reason"] for c in v.cases)).lower()
    again = judge_file(SOLUTIONS / "right.cu", seed=4, perf=False, groups=["notes"], iters=2)
    assert again.passed, (again.failure, again.log[-2000:])


@pytest.mark.parametrize("name", ["bigtile", "splitk", "tma-warp", "wgmma-ws", "wgmma-3xtf32", "wgmma-swap"])
def test_a_replayed_call_reads_its_operands_afresh_and_survives_a_grown_workspace(name):
    """CudaSolver replays a call with the same pointers, shape and stream from its prepared
    launches: new contents in the same tensors must give the new product, and a larger call in
    between (which grows the scratch the small call's plan pointed into) must not break it."""
    impl = registry.get(name)
    m, n, k = 300, 260, 200
    a, b = uniform((m, n), 1, GPU), uniform((n, k), 2, GPU)
    c = poison_(torch.empty(m, k, device=GPU))
    tol = 1e-4 if impl.precision != "tf32" else 2e-2
    for seed in (3, 4):
        a.copy_(uniform((m, n), seed, GPU))
        impl.solve(a, b, c, m, n, k)
        torch.cuda.synchronize()
        torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=tol, atol=tol)
        big = 1024
        x, y = uniform((big, big), 5, GPU), uniform((big, big), 6, GPU)
        z = torch.empty(big, big, device=GPU)
        impl.solve(x, y, z, big, big, big)
    poison_(c)
    impl.solve(a, b, c, m, n, k)
    torch.cuda.synchronize()
    assert unwritten(c) == 0
    torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["default", "small", "tma", "wgmma-swap"])
def test_a_plan_called_again_replays_one_graph_also_inside_a_callers_capture(name):
    """From its second call a plan runs as one CUDA graph (CudaSolver._capture): the graph reads
    the operands' new contents and gives the bits the launches gave; and where the caller then
    captures a graph of their own around the same call, on the same stream, the launches go into
    theirs (a replay cannot be captured) and their graph computes the product too."""
    from gemmlab.cuda.dispatch import _Captured

    impl = registry.get(name)
    m, n, k = 777, 1029, 515  # a pre-pass where default runs one (odd N and K)
    a, b = uniform((m, n), 1, GPU), uniform((n, k), 2, GPU)
    c = poison_(torch.empty(m, k, device=GPU))
    tol = 1e-4 if impl.precision != "tf32" else 2e-2
    side = torch.cuda.Stream()  # a stream that can capture: the caller's graph below is made on it
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        impl.solve(a, b, c, m, n, k)
        first = c.clone()
        poison_(c)
        impl.solve(a, b, c, m, n, k)
        side.synchronize()
        plans = [p for key, p in impl._solve._plans.items()
                 if key[:6] == (a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k)]
        assert len(plans) == 1 and isinstance(plans[0][0], _Captured)
        assert torch.equal(c, first)
        a.copy_(uniform((m, n), 3, GPU))
        impl.solve(a, b, c, m, n, k)
        side.synchronize()
        torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=tol, atol=tol)
        theirs = torch.cuda.CUDAGraph()
        theirs.capture_begin()
        try:
            impl.solve(a, b, c, m, n, k)
        finally:  # a capture left open would fail every later test's GPU work
            theirs.capture_end()
        side.synchronize()
        a.copy_(uniform((m, n), 4, GPU))
        poison_(c)
        theirs.replay()
        side.synchronize()
    assert unwritten(c) == 0
    torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["small", "thin", "splitk"])
def test_a_first_call_inside_a_callers_capture_leaves_later_calls_right(name):
    """A call made for the first time inside the caller's graph capture: their graph, replayed
    twice on new inputs, computes the product, and a later call outside it too (the split-K
    counters made in the capture are their graph's, zeroed by each replay; none are kept)."""
    impl = registry.get(name)
    m, n, k = (4, 3000, 300) if name == "thin" else (200, 3000, 200)  # split-K over few tiles
    a, b = uniform((m, n), 1, GPU), uniform((n, k), 2, GPU)
    c = poison_(torch.empty(m, k, device=GPU))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        # First a smaller call on the same stream, twice: a plan and its graph alive, and scratch
        # the call in the capture outgrows (dropping them there would destroy a graph mid-capture).
        half = (m, n // 2, k // 2)
        a2, b2 = uniform(half[:2], 5, GPU), uniform(half[1:], 6, GPU)
        c2 = torch.empty(m, k // 2, device=GPU)
        for _ in range(2):
            impl.solve(a2, b2, c2, *half)
        theirs = torch.cuda.CUDAGraph()
        theirs.capture_begin()
        try:
            impl.solve(a, b, c, m, n, k)
        finally:
            theirs.capture_end()
        for seed in (3, 4):
            a.copy_(uniform((m, n), seed, GPU))
            poison_(c)
            theirs.replay()
            side.synchronize()
            assert unwritten(c) == 0
            torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=1e-4, atol=1e-4)
        for _ in range(3):  # a plan, then its graph, then the graph again
            poison_(c)
            impl.solve(a, b, c, m, n, k)
            side.synchronize()
            torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=1e-4, atol=1e-4)


def _unsplit(launch):
    """bigtile's launch with the same macros as a splitk launch, but SPLIT 0: the chain it splits."""
    import dataclasses

    from gemmlab.cuda.dispatch import CudaSolver

    defines = {key: v for key, v in launch.defines.items() if key != "SPLIT"}
    derived = launches.bigtile_derive(defines) | {"when": None}  # the caller's shape fits it
    return CudaSolver((dataclasses.replace(launch, defines=defines, **derived),))


@pytest.mark.parametrize("shape, split", [((1024, 1024, 1024), True), ((300, 2048, 200), True),
                                          ((300, 2048, 201), True), ((200, 4000, 300), True),
                                          ((256, 8192, 256), True), ((129, 8191, 131), True),
                                          ((1920, 1024, 2560), True),  # 300 tiles × 4 parts: more blocks than slots
                                          ((1, 5, 3), False), ((4096, 1024, 4096), False)], ids=str)
@pytest.mark.parametrize("name", ["splitk", "tma-warp"])  # tma-warp: the same kernel in blocks of one warp
def test_splitk_splits_where_tiles_are_few_deterministically(shape, split, name):
    """Few tiles, however long the reduction: each tile's reduction is split into parts summed
    in a fixed pairwise tree: right against float64, identical on a second call, every counter
    back at zero. Otherwise (tiles enough, or too short to split) it is bigtile, bit for bit."""
    from gemmlab.cuda import handoff

    m, n, k = shape
    impl = registry.get(name)
    a, b = uniform((m, n), 9, GPU), uniform((n, k), 10, GPU)
    c1, c2 = poison_(torch.empty(m, k, device=GPU)), poison_(torch.empty(m, k, device=GPU))
    launch = impl.dispatch(a, b, c1, m, n, k)
    assert (launch.host.parts(launch, m, n, k) > 1) == split
    impl.solve(a, b, c1, m, n, k)
    impl.solve(a, b, c2, m, n, k)
    ref = poison_(torch.empty(m, k, device=GPU))
    _unsplit(launch)(a, b, ref, m, n, k)
    torch.cuda.synchronize()
    assert unwritten(c1) == 0 and torch.equal(c1, c2)
    torch.testing.assert_close(c1.double(), a.double() @ b.double(), rtol=1e-4, atol=1e-4)
    assert int(handoff.counters(GPU, 0).abs().sum()) == 0
    assert torch.equal(c1, ref) != split


@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 5, 7), (64, 64, 64), (256, 256, 256), (100, 8000, 90),
                                   (255, 1023, 255), (33, 4096, 4000), (1000, 17, 1000), (7, 8192, 5)], ids=str)
@pytest.mark.parametrize("misaligned", [False, True])
def test_small_is_right_and_the_same_on_every_call(shape, misaligned):
    """`small`: one launch, A and B in place (16-byte loads where they allow it, else 4-byte),
    split-K where the tiles are few: right against float64 with LeetGPU's check, bit-identical
    on a second call, every counter back at zero, and nothing written outside C."""
    from gemmlab.cuda import handoff
    from gemmlab.reference import error_figures, reference64

    m, n, k = shape
    impl = registry.get("small")
    a = uniform((m * n + 1,), 21, GPU)[int(misaligned):][: m * n].view(m, n)
    b = uniform((n, k), 22, GPU)
    out = poison_(torch.empty(m * k + 64, device=GPU))  # C with 32 floats of guard on each side
    c1, c2 = out[32: 32 + m * k].view(m, k), poison_(torch.empty(m, k, device=GPU))
    impl.solve(a, b, c1, m, n, k)
    impl.solve(a, b, c2, m, n, k)
    torch.cuda.synchronize()
    fig = error_figures(c1, reference64(a, b))
    assert fig.unwritten == 0 and fig.exact_violations == 0, fig
    assert torch.equal(c1, c2)
    assert unwritten(out[:32]) == 32 and unwritten(out[32 + m * k:]) == 32
    assert int(handoff.counters(GPU, 0).abs().sum()) == 0


def test_two_calls_in_one_callers_capture_leave_other_tensors_alone():
    """Two calls of growing size in one capture: the second outgrows the scratch the first was
    captured with. That scratch stays the graph's: tensors made after the capture are not written
    by its replays (had it been freed, torch could hand it out again), and both products are right."""
    impl = registry.get("splitk")  # Aᵀ in scratch, split-K parts: scratch that grows with the shape
    shapes = [(300, 700, 260), (900, 1500, 700)]
    ops = [(uniform((m, n), 1, GPU), uniform((n, k), 2, GPU), torch.empty(m, k, device=GPU)) for m, n, k in shapes]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):  # scratch for the first shape made before the capture, outside its pool
            impl.solve(*ops[0], *shapes[0])
        theirs = torch.cuda.CUDAGraph()
        theirs.capture_begin()
        try:
            for (a, b, c), shape in zip(ops, shapes, strict=True):
                impl.solve(a, b, c, *shape)
        finally:
            theirs.capture_end()
    side.synchronize()
    others = [torch.full((n,), 7.0, device=GPU) for n in (1 << 16, 1 << 18, 1 << 20, 1 << 22) for _ in range(4)]
    for (_, _, c) in ops:
        poison_(c)
    with torch.cuda.stream(side):
        theirs.replay()
    side.synchronize()
    assert all(bool((t == 7.0).all()) for t in others), "a replay wrote into a tensor made after the capture"
    for (a, b, c), _ in zip(ops, shapes, strict=True):
        assert unwritten(c) == 0
        torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape,offset,twin", [
    ((64, 2967, 8001), 0, "tail-quarter-wave-odd scalar"), ((116, 6278, 7990), 0, "tail-one-wave-odd scalar"),
    ((100, 3001, 4000), 1, "tail-quarter-wave-odd-n scalar"),  # B one float off its 16 bytes
    ((300, 3001, 2001), 0, "tail-one-wave-odd"), ((1500, 2047, 2048), 1, "tail-few-waves-odd-n")])
def test_defaults_padded_twins_run_right(shape, offset, twin):
    """Before an odd class's b-padded winner `default` runs its 4-byte twin where C has few rows
    (tests/test_tune.py checks the choice on a CPU), each as its tail twin (`twins.tailed`):
    the twin, the winner, and their products, here."""
    impl = registry.get("default")
    m, n, k = shape
    a = uniform((m, n), 5, GPU)
    b = uniform((n * k + offset,), 6, GPU)[offset:].view(n, k) if offset else uniform((n, k), 6, GPU)
    c = poison_(torch.empty(m, k, device=GPU))
    assert impl.dispatch(a, b, c, m, n, k).name == twin
    impl.solve(a, b, c, m, n, k)
    _assert_strict_fp32_right(c, a, b)


@pytest.mark.parametrize("shape", [(2432, 4960, 2432), (2600, 2000, 2600), (3072, 2048, 3072)])
def test_defaults_split_twins_run_right(shape):
    """Where an unsplit winner would leave its last wave part empty, `default` runs its SPLIT 1 twin
    (tests/test_tune.py checks the choice on a CPU): the twin, and its product, here."""
    impl = registry.get("default")
    m, n, k = shape
    a, b = uniform((m, n), 3, GPU), uniform((n, k), 4, GPU)
    c = poison_(torch.empty(m, k, device=GPU))
    assert impl.dispatch(a, b, c, m, n, k).name.endswith(" split")
    impl.solve(a, b, c, m, n, k)
    _assert_strict_fp32_right(c, a, b)


def _assert_strict_fp32_right(c, a, b):
    """The judge's verdict on C at the strict-FP32 gate: every element written, finite, and the
    normalised max error against the float64 product within it. A fixed rtol and atol of 1e-4 is
    not a gate at reductions of thousands: elements near zero of a correct FP32 product fall
    outside it (7 of 5.9 million at 2432×4960×2432 on the H200, 2026-12-02)."""
    from gemmlab.reference import error_figures, references, verdict

    torch.cuda.synchronize()
    ref64, _, floor = references(a, b)
    ok, why = verdict(error_figures(c, ref64, floor=floor), Precision.FP32)
    assert ok, why


@pytest.mark.parametrize("shape", [(1172, 1340, 253), (148, 2514, 613), (647, 4920, 531), (395, 5070, 143)])
def test_default_is_as_exact_as_cublas_where_small_runs(shape):
    """Issue 27's accuracy point where `small` runs: inputs in U[-10, 10), no more elements outside
    LeetGPU's tolerance against the float64 product than cuBLAS FP32 leaves. At these shapes the
    random records had `small`'s interleaved chains above cuBLAS (223 against 165 at the first);
    its blocked sums are about a third of the chains' count (experiments/accuracy/tile_orders.py)."""
    from gemmlab.reference import error_figures, references

    m, n, k = shape
    for seed in (11, 12):
        a, b = uniform((m, n), seed, GPU, -10.0, 10.0), uniform((n, k), seed + 100, GPU, -10.0, 10.0)
        ref64, ref32, floor = references(a, b)
        c = poison_(torch.empty(m, k, device=GPU))
        registry.get("default").solve(a, b, c, m, n, k)
        ours = error_figures(c, ref64, ref32, floor)
        cublas = error_figures(ref32, ref64)
        assert ours.unwritten == 0 and ours.exact_violations <= cublas.exact_violations, (
            seed, ours.exact_violations, cublas.exact_violations)


@pytest.mark.parametrize("shape,offset", [
    ((8192, 1, 4096), 0), ((5675, 22, 5060), 0), ((1000, 32, 1000), 0), ((1000, 33, 1000), 0),
    ((63, 31, 129), 0), ((65, 7, 127), 1), ((3, 2, 5), 0), ((129, 16, 300), 1)])
def test_short_at_its_bound_past_it_and_at_every_edge(shape, offset):
    """`short`'s own kernel where N ≤ 32 (partial tiles at both edges, K odd, C one float off its
    16 bytes: the 4-byte stores), small's launch at N = 33; every element written and right."""
    impl = registry.get("short")
    m, n, k = shape
    a, b = uniform((m, n), 7, GPU), uniform((n, k), 8, GPU)
    c = (torch.empty(m * k + offset, device=GPU)[offset:].view(m, k) if offset
         else torch.empty(m, k, device=GPU))
    poison_(c)
    assert (impl.dispatch(a, b, c, m, n, k).name == "short") == (n <= launches.SHORT_N)
    impl.solve(a, b, c, m, n, k)
    _assert_strict_fp32_right(c, a, b)


@pytest.mark.parametrize("shape,offsets", [
    ((8045, 7676, 1), (0, 0)), ((7086, 638, 1), (0, 0)), ((2, 4663, 1), (0, 0)), ((17, 3, 1), (0, 0)),
    ((1, 1, 1), (0, 0)), ((33, 129, 1), (1, 3)), ((300, 1024, 1), (2, 0)), ((16, 130, 1), (0, 1)),
    ((40, 500, 2), (0, 0))])
def test_gemv_at_one_column_at_every_alignment_and_past_it(shape, offsets):
    """`gemv`'s kernel where K = 1: rows of A that start anywhere in 16 bytes (N odd, or A or B one
    to three floats off), a part of the reduction shorter than a row's head, rows past a block's
    last warp, the reduction split across blocks (few rows, long N); thin's launch at K = 2. Every
    element written, and no more elements outside LeetGPU's tolerance against the float64 product
    than cuBLAS FP32."""
    from gemmlab.reference import error_figures, references

    impl = registry.get("gemv")
    m, n, k = shape
    off_a, off_b = offsets
    a = uniform((m * n + off_a,), 7, GPU, -10.0, 10.0)[off_a:].view(m, n)
    b = uniform((n * k + off_b,), 8, GPU, -10.0, 10.0)[off_b:].view(n, k)
    c = poison_(torch.empty(m, k, device=GPU))
    assert (impl.dispatch(a, b, c, m, n, k).name == "gemv") == (k == 1)
    impl.solve(a, b, c, m, n, k)
    _assert_strict_fp32_right(c, a, b)
    ref64, ref32, floor = references(a, b)
    ours, cublas = error_figures(c, ref64, ref32, floor), error_figures(ref32, ref64)
    assert ours.unwritten == 0 and ours.exact_violations <= cublas.exact_violations


@pytest.mark.parametrize("shape", [(460, 8026, 70), (41, 1398, 3647), (34, 66, 18), (2, 2, 2), (130, 2048, 132),
                                   (8, 3001, 6), (300, 2050, 4)])
def test_tile_copies_of_each_width_give_the_same_bits(shape):
    """tile_copy.cuh's VEC_A and VEC_B, hoisted, each operand's copies as wide as its rows allow:
    C bit for bit as with 4-byte copies, within the strict gate: `small` as it ships (its width
    twins first) against `small` without them, and the 32×64 tile at every width against its
    4-byte launch alone."""
    import dataclasses

    small = registry.get("small")
    four_byte = tuple(x for x in small.launches if "VEC_A" not in x.defines)  # a width twin sets VEC_A
    assert len(four_byte) < len(small.launches)
    widths = dataclasses.replace(small, launches=tuple(launches.small_launch(1, widths=w)
                                                      for w in launches.COPY_WIDTHS))
    _assert_same_bits([dataclasses.replace(small, launches=four_byte), dataclasses.replace(small), widths,
                       dataclasses.replace(small, launches=(launches.small_launch(1),))], small.precision, shape)


def _assert_same_bits(impls, precision, shape):
    """Each of `impls` right within `precision`'s gate at `shape` (inputs in [-10, 10)), all with one C."""
    from gemmlab.reference import error_figures, references, verdict

    m, n, k = shape
    a, b = uniform((m, n), 8, GPU) * 10, uniform((n, k), 9, GPU) * 10
    ref64, _, floor = references(a, b)
    out = []
    for impl in impls:
        c = poison_(torch.empty(m, k, device=GPU))
        impl.solve(a, b, c, m, n, k)
        torch.cuda.synchronize()
        ok, why = verdict(error_figures(c, ref64, floor=floor), precision)
        assert ok, (impl.name, why)
        out.append(c.view(torch.int32).clone())
    assert all(torch.equal(out[0], x) for x in out[1:]), shape


#: Shapes of the tail split (twins.tail_twin, experiments/tail-split), by the rung whose bigtile launch
#: it turns: where its plan on an H200 splits the last wave's tiles (1348×248×6274: 2112 tiles of 64×64
#: whole, 66 in 4 parts; 1400×250×6300: 528 of 550 tiles of 128×128 whole, 22 in 4 parts), where it
#: splits every tile as SPLIT 1 does (829×4858×193, 472×6284×974, 1024³, 3×700×5), and where it splits
#: none (1100×250×2800: 198 tiles of 128×128 for 264 slots; 64³).
_TAIL_CASES = [("tma-warp", (1348, 248, 6274)), ("splitk", (1400, 250, 6300)), ("tma-warp", (829, 4858, 193)),
               ("splitk", (472, 6284, 974)), ("tma-warp", (3, 700, 5)), ("splitk", (1100, 250, 2800)),
               ("splitk", (64, 64, 64)), ("splitk", (1024, 1024, 1024))]


def _tail_solver(name: str, shape):
    """The bigtile launch `name` runs at `shape`, as its tail twin, alone (a solver of its own)."""
    import dataclasses

    from gemmlab.cuda.dispatch import CudaSolver

    impl = registry.get(name)
    _runs_here(impl)
    m, n, k = shape
    probe = torch.empty(1, device=GPU)
    launch = impl.dispatch(probe, probe, probe, m, n, k)
    assert launch.source == "bigtile.cu" and launch.host is not None
    twin = twins.tail_twin(launch)
    return twin, CudaSolver((dataclasses.replace(twin, when=None),))


def _right_twice(solve, shape, seeds=(51, 52)):
    """Two calls of `solve` on inputs in [-10, 10), a call on other inputs between them: C within the
    strict gate, every element written, the same bits both times, every split-K counter at zero."""
    from gemmlab.cuda import handoff

    m, n, k = shape
    a, b = uniform((m, n), seeds[0], GPU) * 10, uniform((n, k), seeds[1], GPU) * 10
    others = (uniform((m, n), seeds[0] + 10, GPU) * 10, uniform((n, k), seeds[1] + 10, GPU) * 10)
    out = []
    for x, y in ((a, b), others, (a, b)):
        c = poison_(torch.empty(m, k, device=GPU))
        solve(x, y, c, m, n, k)
        out.append(c)
    torch.cuda.synchronize()
    _assert_strict_fp32_right(out[0], a, b)
    assert unwritten(out[0]) == 0 and torch.equal(out[0].view(torch.int32), out[2].view(torch.int32))
    assert int(handoff.counters(GPU, 0).abs().sum()) == 0
    return out[0]


@pytest.mark.parametrize("name,shape", _TAIL_CASES, ids=[f"{n}-{s}" for n, s in _TAIL_CASES])
def test_a_tail_split_is_right_repeatable_and_leaves_the_counters_at_zero(name, shape):
    """bigtile.cu's SPLIT 2 (twins.tail_twin, experiments/tail-split): a line of blocks whose
    tiles need not all have as many parts. Within the strict gate, every element written, bit for bit
    the same on a second call, every counter back at zero; on an H200, the plans the shapes were
    chosen for, and where every tile has one part, the bits of the unsplit kernel."""
    twin, solve = _tail_solver(name, shape)
    c = _right_twice(solve, shape)
    plan = twin.host.plan(twin, *shape)
    if cl.sm_count(0) == 132:
        tail = plan.tail > 0 and plan.tail_parts > plan.lead_parts
        assert tail == (shape in ((1348, 248, 6274), (1400, 250, 6300))), plan
    if not plan.split:
        m, n, k = shape
        a, b = uniform((m, n), 51, GPU) * 10, uniform((n, k), 52, GPU) * 10
        chain = poison_(torch.empty(m, k, device=GPU))
        _unsplit(twin)(a, b, chain, m, n, k)
        torch.cuda.synchronize()
        assert torch.equal(c.view(torch.int32), chain.view(torch.int32))


@pytest.mark.parametrize("lead,lead_parts,tail_parts", [(13, 3, 5), (0, 1, 7), (39, 1, 9), (40, 2, 2), (17, 4, 1)],
                         ids=str)
def test_a_tail_split_is_right_for_any_plan(monkeypatch, lead, lead_parts, tail_parts):
    """SPLIT 2's line of blocks under plans the policy would not choose at 300×2000×500 (5 × 8 tiles
    of 64×64): lead tiles in several parts beside a tail in more or fewer, no lead, a tail of one
    tile, every tile in as many parts, a tail unsplit. Each right, repeatable, counters at zero."""
    from gemmlab.cuda import handoff
    from gemmlab.cuda.transposed import TransposedA

    shape = (300, 2000, 500)
    twin, solve = _tail_solver("tma-warp", shape)
    assert twin.tile == (64, 64)
    plan = handoff.TailPlan(40, lead, lead_parts, tail_parts)
    monkeypatch.setattr(TransposedA, "plan", staticmethod(lambda launch, m, n, k: plan))
    _right_twice(solve, shape)


#: The persistent split-K twins no rung runs yet, by the rung whose launches they split: their maker in
#: `launches`, a shape they split on an H200 (16 cluster tiles of 256 × 2·128; 16 tiles of 128×128),
#: and the shapes each is tried at (wgmma_swap.cu's and wgmma_3xtf32.cu's SPLIT).
_GPU_SPLITS = {
    "wgmma-swap": ("wgmma_swap_split_launches", (1024, 8192, 1024),
                   [(1024, 8192, 1024), (105, 7416, 699), (512, 4096, 512), (301, 4095, 299), (1000, 3001, 1003),
                    (3000, 600, 700), (2048, 2048, 2048), (1, 1, 1)]),
    "wgmma-3xtf32": ("wgmma_3xtf32_split_launches", (512, 4096, 512),
                     [(512, 4096, 512), (1024, 8192, 1024), (105, 7416, 699), (724, 2048, 723), (3000, 600, 700),
                      (2048, 2048, 2048), (1, 1, 1)]),
}
_GPU_SPLIT_CASES = [(rung, shape) for rung, (_, _, shapes) in _GPU_SPLITS.items() for shape in shapes]


def _split_twin(rung: str):
    """The rung as it ships, and the same rung with its persistent split twins as its launches."""
    import dataclasses

    plain = registry.get(rung)
    _runs_here(plain)
    maker = getattr(launches, _GPU_SPLITS[rung][0])
    return plain, dataclasses.replace(plain, name=f"{rung}-split", launches=maker())


@pytest.mark.parametrize("rung,shape", _GPU_SPLIT_CASES, ids=[f"{r}-{s}" for r, s in _GPU_SPLIT_CASES])
def test_the_persistent_split_twins_are_right_repeatable_and_leave_the_counters_at_zero(rung, shape):
    """The wgmma kernels' SPLIT (experiments/swap-split, experiments/3x-split): each tile's reduction
    in parts over the persistent grid, the consumers meeting in splitk.cuh's tree at their named
    barrier. Within the rung's gate, every element written, bit for bit the same on a second call
    and through a captured graph, every counter back at zero; one part: the rung's own bits."""
    from gemmlab.cuda import handoff
    from gemmlab.reference import error_figures, references, verdict

    m, n, k = shape
    plain, split = _split_twin(rung)
    a, b = uniform((m, n), 31, GPU) * 10, uniform((n, k), 32, GPU) * 10
    out = []
    for impl in (split, split, plain):
        c = poison_(torch.empty(m, k, device=GPU))
        impl.solve(a, b, c, m, n, k)
        out.append(c)
    again = poison_(torch.empty(m, k, device=GPU))
    for _ in range(3):  # one C: a plan, then its graph captured, then the graph replayed
        poison_(again)
        split.solve(a, b, again, m, n, k)
    torch.cuda.synchronize()
    assert torch.equal(again.view(torch.int32), out[0].view(torch.int32))
    ref64, _, floor = references(a, b)
    ok, why = verdict(error_figures(out[0], ref64, floor=floor), plain.precision)
    assert ok and unwritten(out[0]) == 0, why
    assert torch.equal(out[0].view(torch.int32), out[1].view(torch.int32))
    assert int(handoff.counters(GPU, 0).abs().sum()) == 0
    launch = split.dispatch(a, b, out[0], m, n, k)
    parts = launch.host.parts(launch, m, n, k)
    if shape == _GPU_SPLITS[rung][1] and cl.sm_count(0) >= 100:  # few tiles: the test splits somewhere
        assert parts > 1
    if parts == 1:
        assert torch.equal(out[0].view(torch.int32), out[2].view(torch.int32))


#: Special values planted in a split call of 512×4096×512 (8 parts of 16 steps on an H200), each
#: alone: where the product must take the strict fallback, and who raises its flag. Column 3000 of A
#: is in part 5; FLT_MAX is finite but its TF32 split rounds past it.
_SPLIT_SPECIALS = {
    "inf in A, a late part": lambda a, b: a.__setitem__((100, 3000), float("inf")),
    "nan in B": lambda a, b: b.__setitem__((17, 300), float("nan")),
    "FLT_MAX in A, a late part": lambda a, b: a.__setitem__((7, 2900), torch.finfo(torch.float32).max),
}


@pytest.mark.parametrize("plant", _SPLIT_SPECIALS.values(), ids=_SPLIT_SPECIALS.keys())
def test_the_3xtf32_split_twins_still_fall_back_on_specials(plant):
    """A split call with ±Inf or NaN in A (raised by the consumers of the part that holds it), in B
    (raised by the split of B), or a finite value of A whose split rounds past FLT_MAX: the strict
    fallback after the tree gives IEEE's answer (NaN and ±Inf exactly where the exact product has
    them, and otherwise within the FP32 gate), and the counters are back at zero for the next call."""
    from gemmlab.cuda import handoff

    m, n, k = 512, 4096, 512
    _, split = _split_twin("wgmma-3xtf32")
    a, b = uniform((m, n), 35, GPU), uniform((n, k), 36, GPU)
    plant(a, b)
    c = poison_(torch.empty(m, k, device=GPU))
    launch = split.dispatch(a, b, c, m, n, k)
    if cl.sm_count(0) >= 100:
        assert launch.host.parts(launch, m, n, k) > 1
    split.solve(a, b, c, m, n, k)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    ref32 = ref.float()
    assert torch.equal(torch.isnan(c), torch.isnan(ref32)) and torch.equal(torch.isinf(c), torch.isinf(ref32))
    finite = torch.isfinite(ref32)
    scale = ref[finite].abs().max()
    assert float(((c.double() - ref)[finite].abs() / scale).max()) <= 2e-5
    assert int(handoff.counters(GPU, 0).abs().sum()) == 0


@pytest.mark.parametrize("shape", [(2026, 28, 5270), (1024, 32, 1024), (2049, 1, 1023)], ids=str)
@pytest.mark.parametrize("name", ["3xtf32", "tf32"])
def test_the_tensor_dispatchers_run_the_strict_short_kernel_over_a_short_reduction_onto_many_outputs(name, shape):
    """`3xtf32` and `tf32` above their outputs floors with N <= 32 (policy.tensor, tensor_dispatch.md):
    the strict `short` kernel, right within the FP32 gate (stricter than their classes')."""
    impl = registry.get(name)
    m, n, k = shape
    a, b = uniform((m, n), 41, GPU) * 10, uniform((n, k), 42, GPU) * 10
    c = poison_(torch.empty(m, k, device=GPU))
    assert impl.dispatch(a, b, c, m, n, k).entry == "short_n"
    impl.solve(a, b, c, m, n, k)
    _assert_strict_fp32_right(c, a, b)


@pytest.mark.parametrize("shape,entry", [((3194, 2590, 1), "gemv"), ((7, 22, 1), "gemv"), ((1, 4489, 2), "thin_cols"),
                                         ((455, 2541, 8), "thin_cols"), ((3, 5482, 4750), "thin_rows")], ids=str)
@pytest.mark.parametrize("name", ["3xtf32", "tf32"])
def test_the_tensor_dispatchers_run_the_strict_thin_kernels_where_c_is_thin(name, shape, entry):
    """`3xtf32` and `tf32` where C is one column, at most 8 columns, or at most 4 rows over a large B
    (policy.tensor.STRICT_THIN, tensor_dispatch.md): `default`'s strict kernels for it, right within the
    FP32 gate (stricter than their classes')."""
    impl = registry.get(name)
    m, n, k = shape
    a, b = uniform((m, n), 43, GPU) * 10, uniform((n, k), 44, GPU) * 10
    c = poison_(torch.empty(m, k, device=GPU))
    assert impl.dispatch(a, b, c, m, n, k).entry == entry
    impl.solve(a, b, c, m, n, k)
    _assert_strict_fp32_right(c, a, b)
    assert unwritten(c) == 0


@pytest.mark.parametrize("name", ["default", "tf32", "3xtf32"])
def test_explain_at_a_shape_names_the_launch_the_dispatcher_selects(name):
    """`explain --shape` walks the chain on meta tensors; on the GPU, the launch it names is the one
    `dispatch` selects on real operands, at shapes across the classes and the tensor chains' rules."""
    from gemmlab.cli.ladder import at_shape

    impl = registry.get(name)
    for m, n, k in ((8192, 6144, 4096), (1348, 248, 6274), (934, 949, 282), (8192, 1024, 200), (3, 5, 7),
                    (8191, 6143, 4095), (64, 64, 64), (2048, 1, 2048)):
        a, b, c = torch.empty(m, n, device=GPU), torch.empty(n, k, device=GPU), torch.empty(m, k, device=GPU)
        assert at_shape(impl, (m, n, k))["launch"] == impl.dispatch(a, b, c, m, n, k).name, (name, m, n, k)
