"""Every bad argument of solve() raises its own clear error, before anything runs, leaving C alone."""

from __future__ import annotations

import pytest
import torch

from gemmlab import problem, registry
from gemmlab.cuda.compiler import NoGPUError
from gemmlab.reference import poison_, unwritten


def good(m=3, n=4, k=5, device="cpu"):
    a = torch.randn(m, n, device=device)
    b = torch.randn(n, k, device=device)
    c = poison_(torch.empty(m, k, device=device))
    return a, b, c


def test_flops_and_perf_shape():
    assert problem.flops(*problem.PERF_SHAPE) == 412_316_860_416
    assert problem.PERF_SHAPE == (8192, 6144, 4096)


def test_examples_are_consistent():
    for ex in problem.EXAMPLES:
        got = torch.tensor(ex.a, dtype=torch.float64) @ torch.tensor(ex.b, dtype=torch.float64)
        assert got.tolist() == ex.c


def _cases():
    a, b, c = good()
    yield "M", (a, b, c, 0, 4, 5), problem.DimensionError
    yield "N", (a, b, c, 3, 8193, 5), problem.DimensionError
    yield "K", (a, b, c, 3, 4, 5.0), problem.DimensionError
    yield "A", (a.double(), b, c, 3, 4, 5), problem.DTypeError
    yield "B", (a, b.half(), c, 3, 4, 5), problem.DTypeError
    yield "C", (a, b, c.numpy(), 3, 4, 5), problem.DTypeError
    yield "B", (a, b.to("meta"), c, 3, 4, 5), problem.DeviceError
    yield "A", (a.t().contiguous(), b, c, 3, 4, 5), problem.ShapeError
    yield "C", (a, b, torch.empty(3, 6), 3, 4, 5), problem.ShapeError
    at = torch.randn(4, 3).t()  # right shape, column-major strides
    yield "A", (at, b, c, 3, 4, 5), problem.LayoutError
    sq = torch.randn(4, 4)
    yield "C", (sq, torch.randn(4, 4), sq, 4, 4, 4), problem.AliasError
    buf = torch.randn(40)
    yield "C", (torch.randn(4, 4), buf[:16].view(4, 4), buf[8:24].view(4, 4), 4, 4, 4), problem.AliasError


@pytest.mark.parametrize("argument,args,error", list(_cases()))
def test_bad_argument_raises_and_leaves_c_untouched(argument, args, error):
    c = args[2]
    before = c.clone() if isinstance(c, torch.Tensor) and c.device.type != "meta" else None
    with pytest.raises(error) as info:
        registry.get("torch").solve(*args)
    assert info.value.argument == argument
    assert argument in str(info.value) and "expected" in str(info.value)
    if before is not None:
        assert torch.equal(c.view(torch.int32), before.view(torch.int32))


def test_valid_call_writes_every_element():
    a, b, c = good()
    registry.get("torch").solve(a, b, c, 3, 4, 5)
    assert unwritten(c) == 0
    torch.testing.assert_close(c, a @ b)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_cuda_implementation_without_gpu_is_a_clear_error():
    a, b, c = good()
    with pytest.raises(NoGPUError, match="CUDA"):
        registry.get("naive").solve(a, b, c, 3, 4, 5)
    assert unwritten(c) == c.numel()


def test_the_fast_path_accepts_only_what_the_full_checks_accept(monkeypatch):
    """`_conforms` is a shortcut, never a loophole: every call it lets through, the rule-by-rule
    checks let through too; and the plain case does take it."""
    from gemmlab import problem

    base = torch.empty(64 * 64 * 4)
    cases = []
    for m, n, k in [(4, 4, 4), (1, 7, 3), (5, 1, 1), (8, 8, 8)]:
        a = base[: m * n].view(m, n)
        b = base[1000: 1000 + n * k].view(n, k)
        c = base[3000: 3000 + m * k].view(m, k)
        cases += [(a, b, c, m, n, k), (a, b, a.new_empty(m, k), m, n, k),
                  (a, b, base[: m * k].view(m, k), m, n, k),  # C over A
                  (a.t().contiguous().t() if m > 1 and n > 1 else a, b, c, m, n, k),  # A column-major
                  (a, b, c.double(), m, n, k), (a, b, c, m, n, k + 1), (a, b, c, True, n, k),
                  (torch.nn.Parameter(a), b, c, m, n, k)]
    fast = problem._conforms
    for args in cases:
        took_shortcut = fast(*args)
        monkeypatch.setattr(problem, "_conforms", lambda *a: False)
        try:
            problem.validate(*args)
            full = True
        except problem.SolveArgumentError:
            full = False
        monkeypatch.setattr(problem, "_conforms", fast)
        assert full or not took_shortcut, [getattr(x, "shape", x) for x in args]
    assert all(fast(*args) for args in cases[::8])  # the first of each shape: plain and valid
    # A size-1 dimension's stride is no layout: both paths take a row of A whose row stride is odd.
    row = base[:7].as_strided((1, 7), (99, 1))
    odd = (row, base[1000:1021].view(7, 3), base[3000:3003].view(1, 3), 1, 7, 3)
    problem.validate(*odd)
    assert fast(*odd)
