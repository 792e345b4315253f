"""Triton implementations are right on the whole shape list, through the interpreter on CPU."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

from gemmlab import registry
from gemmlab.judge.cases import standard_cases
from gemmlab.judge.runner import judge
from gemmlab.kernels.triton.matmul import split_tf32

TRITON = [i for i in registry.IMPLEMENTATIONS if i.family == "triton"]


@pytest.mark.parametrize("impl", TRITON, ids=lambda i: i.name)
def test_triton_correct_on_shape_list(impl, device):
    j = judge(impl.name, impl.solve, impl.precision, standard_cases(7, perf=False), device, 7)
    assert j.passed, [(r.case, r.reason) for r in j.failed]
    assert len(j.results) >= 24


@triton.jit
def _split_kernel(x_ptr, big_ptr, big_finite_ptr, small_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    big, big_finite, small = split_tf32(tl.load(x_ptr + i))
    tl.store(big_ptr + i, big)
    tl.store(big_finite_ptr + i, big_finite)
    tl.store(small_ptr + i, small)


def test_tf32_split_is_exact_and_keeps_special_values(device):
    g = torch.Generator(device=device).manual_seed(3)
    x = (torch.rand(256, generator=g, device=device) * 2 - 1) * 10.0 ** torch.randint(
        -30, 30, (256,), generator=g, device=device)
    specials = [float("inf"), float("-inf"), float("nan"), 3.4028235e38, -3.4028235e38, 0.0, -0.0]
    x[: len(specials)] = torch.tensor(specials, device=device)
    big, big_finite, small = (torch.empty_like(x) for _ in range(3))
    _split_kernel[(1,)](x, big, big_finite, small, BLOCK=256)

    finite = torch.isfinite(x)
    low_bits = big.view(torch.int32) & 0x1FFF
    assert torch.all(low_bits[finite] == 0), "big must carry TF32's 10-bit mantissa only"
    assert torch.equal((big + small)[finite], x[finite]), "big + small must be x exactly"
    rounded = x.abs() < 3.4e38  # nearest rounding; truncation right at FLT_MAX
    assert torch.all(small[rounded].abs() <= x[rounded].abs() * 2.0**-11)
    assert torch.all(small[finite].abs() <= x[finite].abs() * 2.0**-10)
    assert torch.isfinite(big[finite]).all(), "rounding near FLT_MAX must not give Inf"
    assert torch.equal(big[:2], x[:2]) and torch.isnan(big[2]), "±Inf and NaN pass through big"
    assert torch.all(big_finite[~finite] == 0) and torch.all(small[~finite] == 0)
    assert torch.equal(big_finite[finite], big[finite])


def test_presplit_runs_exactly_one_product_kernel(device):
    """The device flag picks the kernel: the plane product without ±Inf/NaN, the in-loop split with."""
    from gemmlab.kernels.triton.presplit import PreSplit
    from gemmlab.reference import poison_

    solver = PreSplit(32, 32, 16, 4, 4, 2, transpose_b=True)
    a, b = torch.rand(40, 24, device=device) - 0.5, torch.rand(24, 36, device=device) - 0.5
    for flag, writer in ((0, "planes"), (1, "in-loop")):
        gate = torch.tensor([flag], dtype=torch.int32, device=device)
        c = poison_(torch.empty(40, 36, device=device))
        solver.fallback(a, b, c, 40, 24, 36, gate=gate)
        assert torch.isnan(c).all() == (writer == "planes"), "the in-loop kernel runs only with the flag up"
    c = poison_(torch.empty(40, 36, device=device))
    solver(a, b, c, 40, 24, 36)
    torch.testing.assert_close(c, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("steps,promote", [(1, False), (1, True), (3, True), (2, False)])
@pytest.mark.parametrize("solver", ["in-loop", "presplit"])
def test_split_products_for_every_promotion_setting(solver, steps, promote, device):
    """Any number of steps per FP32 add, with a reduction that is not a multiple of it."""
    from gemmlab.kernels.triton.matmul import TritonMatmul
    from gemmlab.kernels.triton.presplit import PreSplit
    from gemmlab.reference import poison_

    if solver == "presplit":
        solve = PreSplit(32, 32, 16, 4, 4, 2, transpose_b=True, steps=steps, promote=promote)
    else:
        solve = TritonMatmul(32, 32, 16, 4, 4, 2, "split3", steps=steps, promote=promote)
    m, n, k = 33, 71, 40
    a, b = torch.rand(m, n, device=device) - 0.5, torch.rand(n, k, device=device) - 0.5
    c = poison_(torch.empty(m, k, device=device))
    solve(a, b, c, m, n, k)
    torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transpose", [False, True])
def test_split_planes_are_zero_in_their_padding(transpose, device):
    """The product kernel reads the padded reduction unmasked: the padding must be 0, not leftovers."""
    from gemmlab.kernels.triton.presplit import split_kernel

    rows, cols, rows_out, cols_out, pitch = 5, 7, 16, 32, 32
    if transpose:
        rows_out, cols_out = 32, 7
    x = torch.rand(rows, cols, device=device) + 0.5
    outer = cols_out if transpose else rows_out
    hi = torch.full((outer, pitch), float("nan"), device=device)
    lo = torch.full((outer, pitch), float("nan"), device=device)
    special = torch.zeros(1, dtype=torch.int32, device=device)
    split_kernel[(1, 1)](x, hi, lo, special, rows, cols, rows_out, cols_out, pitch,
                         TRANSPOSE=transpose, BLOCK_R=32, BLOCK_C=32)
    view = (lambda t: t[:, :rows_out].T) if transpose else (lambda t: t[:, :cols_out])
    h, small = view(hi), view(lo)
    torch.testing.assert_close(h[:rows, :cols] + small[:rows, :cols], x, rtol=0, atol=0)
    padding = torch.ones_like(h, dtype=torch.bool)
    padding[:rows, :cols] = False
    assert torch.all(h[padding] == 0) and torch.all(small[padding] == 0)
    assert special.item() == 0
