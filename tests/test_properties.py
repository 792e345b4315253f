"""Property tests over random shapes, and hostile inputs (NaN, ±Inf, overflow).

On CPU these run what runs there (torch, Triton's interpreter); on a GPU, everything.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gemmlab import registry, runtime
from gemmlab.judge.cases import Case
from gemmlab.judge.runner import run_case
from gemmlab.reference import Precision, poison_

DEVICE = runtime.default_device()
RUNNABLE = [i for i in registry.IMPLEMENTATIONS if i.can_run_on(DEVICE)[0]]
dims = st.integers(min_value=1, max_value=300)


@pytest.mark.parametrize("impl", RUNNABLE, ids=lambda i: i.name)
def test_random_shapes(impl):
    examples = 25 if DEVICE.type == "cuda" or impl.family == "torch" else 6

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(m=dims, n=dims, k=dims, seed=st.integers(0, 2**31 - 3))
    def check(m, n, k, seed):
        r = run_case(impl.solve, impl.precision, Case("h", "random", (m, n, k)), seed, DEVICE)
        assert r.passed, (m, n, k, seed, r.reason)

    check()


#: Hostile inputs, each also alone: a rung with one fallback for every special (3xTF32 recomputes
#: all of C in strict FP32 once any is seen) would hide a missed kind behind a caught one.
HOSTILE = {
    "all": ("nan", "nan bits", "inf", "-inf in B", "overflow"),
    "NaN and Inf in A": ("nan", "inf"),
    "NaNs with every mantissa bit set, in A": ("nan bits",),
    "-Inf in B": ("-inf in B",),
    "overflow": ("overflow",),
}


def _hostile(device, plants: tuple[str, ...]):
    g = torch.Generator(device=device).manual_seed(0)
    a = torch.rand(70, 90, generator=g, device=device) * 2 - 1
    b = torch.rand(90, 50, generator=g, device=device) * 2 - 1
    if "nan" in plants:
        a[3, 7] = float("nan")
    if "nan bits" in plants:  # as GPU arithmetic makes them: a split that adds to the bits
        bits = a.view(torch.int32)  # must not carry these into ±0
        bits[12, 2] = 0x7FFFFFFF
        bits[13, 4] = -1  # 0xFFFFFFFF
    if "inf" in plants:
        a[10, 20] = float("inf")
    if "-inf in B" in plants:
        b[40, 5] = float("-inf")
    if "overflow" in plants:  # with b[:, 30] below: C[50, 30] = 90 · 9e38, past FLT_MAX
        a[50, :] = 3e19
        b[:, 30] = 3e19
    return a, b


@pytest.mark.parametrize("plants", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("impl", RUNNABLE, ids=lambda i: i.name)
def test_nan_inf_and_overflow_propagate_as_ieee_says(impl, plants):
    a, b = _hostile(DEVICE, plants)
    m, n, k = 70, 90, 50
    c = poison_(torch.empty(m, k, device=DEVICE))
    impl.solve(a, b, c, m, n, k)
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()
    ref = a.double() @ b.double()
    ref32 = ref.float()  # FP32 of the exact product: ±Inf where it overflows
    assert torch.equal(torch.isnan(c), torch.isnan(ref32))
    inf = torch.isinf(ref32)
    assert torch.equal(torch.isinf(c), inf)
    assert torch.equal(torch.sign(c[inf]), torch.sign(ref32[inf]))
    assert bool(torch.isnan(ref32).any() or inf.any()), "the planted values should show in C"
    if "overflow" in plants:
        assert inf[50, 30], "the planted overflow should give Inf"


@pytest.mark.parametrize("impl", [i for i in RUNNABLE if i.precision != Precision.TF32], ids=lambda i: i.name)
def test_the_largest_finite_value_stays_finite(impl):
    """A = FLT_MAX somewhere: rounding it to TF32 goes past FLT_MAX, so a 3xTF32 split must not
    hand the tensor cores ±Inf for it (rung 19 flags it and recomputes in strict FP32). The FP32
    classes keep every element finite where the exact product is (TF32 may not: its own largest
    value is below FLT_MAX)."""
    g = torch.Generator(device=DEVICE).manual_seed(3)
    m, n, k = 40, 64, 48
    a = torch.rand(m, n, generator=g, device=DEVICE) * 2 - 1
    b = torch.rand(n, k, generator=g, device=DEVICE) - 0.5
    a[7, 9] = torch.finfo(torch.float32).max
    c = poison_(torch.empty(m, k, device=DEVICE))
    impl.solve(a, b, c, m, n, k)
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()
    ref = (a.double() @ b.double()).float()
    assert bool(torch.isfinite(ref).all())
    assert bool(torch.isfinite(c).all()), "an element overflowed where the exact product is finite"
    assert float(((c - ref).abs() / ref.abs().max()).max()) <= 2e-5
