"""The figures and gates a result is judged by."""

from __future__ import annotations

import math

import pytest
import torch

from gemmlab.reference import (
    GATES,
    POISON_BITS,
    Precision,
    cancellation_floor,
    error_figures,
    poison_,
    reference32,
    reference64,
    unwritten,
    verdict,
)


def test_poison_is_a_nan_no_arithmetic_makes():
    c = poison_(torch.empty(3, 3))
    assert torch.isnan(c).all() and unwritten(c) == 9
    c[0, 0] = float("nan")  # a computed NaN is not the poison
    assert unwritten(c) == 8
    assert POISON_BITS < 2**31


def test_figures_of_an_exact_result():
    a, b = torch.randn(20, 30), torch.randn(30, 10)
    c = (a.double() @ b.double()).float()
    fig = error_figures(c, reference64(a, b), reference32(a, b))
    assert fig.unwritten == 0 and fig.nonfinite == 0
    assert fig.norm_max < 1e-7 and fig.rel_fro < 1e-7
    assert verdict(fig, Precision.FP32) == (True, "ok")


def test_figures_see_a_single_wrong_element():
    a, b = torch.randn(20, 30), torch.randn(30, 10)
    c = (a @ b).clone()
    c[7, 3] += 1.0
    fig = error_figures(c, reference64(a, b), reference32(a, b))
    assert fig.max_abs > 0.99 and fig.leetgpu_violations == 1 and fig.exact_violations == 1
    ok, reason = verdict(fig, Precision.FP32)
    assert not ok and "normalised max error" in reason


def test_the_exact_count_uses_leetgpus_tolerance_against_the_float64_product():
    """An element 1.5e-4 + 1e-4·|T| off T is counted against the float64 product, 0.5e-4 off is
    not; an infinity where T has the same infinity is within (as torch.allclose has it), in
    both counts."""
    a, b = torch.randn(20, 30), torch.randn(30, 10)
    ref = reference64(a, b)
    c = ref.float().clone()
    c[1, 1] = float(ref[1, 1] + 1.5e-4 + 1e-4 * abs(ref[1, 1]))
    c[2, 2] = float(ref[2, 2] + 0.5e-4)
    assert error_figures(c, ref).exact_violations == 1
    ref[3, 3], c[3, 3] = math.inf, math.inf
    ref[4, 4], c[4, 4] = -math.inf, math.inf
    fig = error_figures(c, ref, ref.float())
    assert fig.exact_violations == 2 and fig.leetgpu_violations == 2  # [1, 1] and the opposite infinity


def test_unwritten_and_nonfinite_fail_first():
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    c = poison_(torch.empty(4, 4))
    c[:2] = a[:2] @ b
    fig = error_figures(c, reference64(a, b))
    assert fig.unwritten == 8 and math.isinf(fig.max_abs)
    assert verdict(fig, Precision.TF32)[1].startswith("8 of 16 elements never written")
    c = a @ b
    c[0, 0] = float("inf")
    assert "non-finite" in verdict(error_figures(c, reference64(a, b)), Precision.FP32)[1]


def _serial_fp32(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C as a strict-FP32 rung makes it: each output one chain in reduction order, in float32."""
    return (a[:, :, None] * b[None, :, :]).cumsum(dim=1)[:, -1, :]


def test_each_gate_passes_its_class_s_product_at_the_longest_reduction_and_fails_a_coarser_one():
    # The gates are facts about arithmetic, not numbers to restate: FP32's (and fp32x3's, which is
    # the same) passes one float32 chain over N = 8192, the most a correct strict-FP32 rung can err,
    # and fails a TF32 product; TF32's passes that TF32 product.
    g = torch.Generator().manual_seed(5)
    a = torch.rand(4, 8192, generator=g) * 2 - 1
    b = torch.rand(8192, 4, generator=g) * 2 - 1
    ref, ref32 = reference64(a, b), reference32(a, b)
    chain, tf32 = error_figures(_serial_fp32(a, b), ref, ref32), error_figures(_tf32_product(a, b), ref, ref32)
    assert chain.norm_max > 0  # a real rounding error, not an exact sum
    for precision in (Precision.FP32, Precision.FP32X3):
        assert verdict(chain, precision)[0], (precision, chain.norm_max)
        assert not verdict(tf32, precision)[0], (precision, tf32.norm_max)
    assert verdict(tf32, Precision.TF32)[0]
    assert GATES[Precision.FP32] < GATES[Precision.TF32]


def test_readme_states_the_gates_the_verdict_applies():
    from pathlib import Path

    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text().split())
    fp32, tf32 = (f"{GATES[p]:.0e}".replace("e-0", "e-") for p in (Precision.FP32, Precision.TF32))
    assert GATES[Precision.FP32X3] == GATES[Precision.FP32]
    assert f"(the gate: {fp32} for `fp32` and `fp32x3`, {tf32} for `tf32`;" in readme


def test_tf32_sized_error_passes_only_the_tf32_gate():
    a, b = torch.randn(64, 256), torch.randn(256, 64)
    ref = reference64(a, b)
    c = (ref * (1 + 1e-3 * torch.randn_like(ref))).float()
    fig = error_figures(c, ref, reference32(a, b))
    assert not verdict(fig, Precision.FP32)[0]
    assert verdict(fig, Precision.TF32)[0]
    assert fig.leetgpu_violations > 0


# ---- the cancellation floor of norm_max ---------------------------------------------------------

def _tf32(x: torch.Tensor) -> torch.Tensor:
    """Round to TF32 (10 mantissa bits), to nearest, ties away from zero: what cvt.rna and a
    TFLOAT32 tensor map do."""
    bits = x.view(torch.int32)
    sign = torch.where(bits < 0, -1, 1)
    return ((bits.abs() + 0x1000) & ~0x1FFF).mul(sign).int().view(torch.float32)


def _tf32_product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (_tf32(a).double() @ _tf32(b).double()).float()


@pytest.mark.parametrize("shape,draws", [((1, 3, 1), 600), ((1, 42, 1), 1000), ((2, 3, 1), 600)])
def test_a_correct_tf32_product_passes_where_its_terms_cancel(shape, draws):
    """Without the floor, an exact TF32 product failed the 5e-3 gate in 9 of 600 draws of 1×3×1
    and 118 of 4,000 of 1×42×1 (max|C| tiny from cancellation); with it, none does."""
    from gemmlab.judge.cases import Case
    from gemmlab.judge.runner import make_inputs

    before = 0
    for seed in range(draws):
        a, b = make_inputs(Case("h", "notes", shape), seed, torch.device("cpu"))
        c, ref = _tf32_product(a, b), reference64(a, b)
        before += not verdict(error_figures(c, ref), Precision.TF32)[0]
        ok, reason = verdict(error_figures(c, ref, floor=cancellation_floor(a, b)), Precision.TF32)
        assert ok, (seed, reason)
    assert before > 0, "these draws should include cancelling ones (else the test proves nothing)"


@pytest.mark.parametrize("shape", [(1, 42, 1), (1, 3, 1), (64, 96, 128)])
@pytest.mark.parametrize("precision", [Precision.FP32, Precision.TF32])
def test_a_dropped_term_still_fails_with_the_floor(shape, precision):
    from gemmlab.judge.cases import Case
    from gemmlab.judge.runner import make_inputs

    m, n, k = shape
    for seed in range(20):
        a, b = make_inputs(Case("h", "notes", shape), seed, torch.device("cpu"))
        # The term that weighs most (a term near zero is lost in rounding: no check can see it).
        dropped = int((a.abs().sum(0) * b.abs().sum(1)).argmax())
        keep = torch.ones(n, dtype=torch.bool)
        keep[dropped] = False
        c = (a[:, keep].double() @ b[keep, :].double()).float()  # reduction index `dropped` left out
        fig = error_figures(c, reference64(a, b), floor=cancellation_floor(a, b))
        assert not verdict(fig, precision)[0], (seed, fig.norm_max)


def test_the_floor_changes_nothing_where_c_is_large():
    a = torch.rand(64, 96, generator=torch.Generator().manual_seed(1)) * 2 - 1
    b = torch.rand(96, 128, generator=torch.Generator().manual_seed(2)) * 2 - 1
    c, ref = _tf32_product(a, b), reference64(a, b)
    floor = cancellation_floor(a, b)
    assert 0 < floor < ref.abs().max().item()
    assert error_figures(c, ref, floor=floor) == error_figures(c, ref)


def test_non_finite_inputs_give_no_floor():
    a, b = torch.ones(2, 3), torch.ones(3, 2)
    a[0, 0] = float("inf")
    assert cancellation_floor(a, b) == 0.0
    assert cancellation_floor(torch.ones(0, 3), torch.ones(3, 2)) == 0.0
