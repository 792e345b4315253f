"""The reference product, the poison, and the error figures a result is judged by.

Every result is compared with the float64 product of the same float32 inputs.
Three figures are reported because each hides something the others show:

* ``max_abs``        – the worst element, in the units of the data;
* ``norm_max``       – ``max|C − ref| / scale``: the worst element relative to
  the scale of the answer, ``max|ref|``, but never below the cancellation floor
  ``max(|A|·|B|) / √N`` (`cancellation_floor`). This is the gate, per precision class;
* ``rel_fro``        – ``‖C − ref‖_F / ‖ref‖_F``: the typical error.

``leetgpu_violations`` counts elements outside LeetGPU's own check
``|C − T| ≤ 1e-4 + 1e-4·|T|`` where T is ``torch.matmul`` in FP32 (TF32 off);
``exact_violations`` counts those outside the same tolerance with T the float64
product: how a more accurate result is told apart from a wrong one (cuBLAS FP32
itself has some). Both count as ``torch.allclose`` would: where C or T is not
finite, only an equal value (the same infinity) is within.
C is poisoned with a NaN of a private bit pattern before every run, so an
element the kernel never wrote is told apart from one it computed as NaN.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import asdict, dataclass

import torch

# Precision and its gates are defined apart (torch-free, for the registry); the judge and bench
# take them from here, with the figures they gate.
from .precision import GATES, Precision

#: A quiet NaN with a payload no arithmetic produces (GPUs emit 0x7fffffff).
#: It is below 2**31, so it fits an int32 fill as it is.
POISON_BITS = 0x7FC0DEAD
LEETGPU_ATOL = 1e-4
LEETGPU_RTOL = 1e-4



def poison_(c: torch.Tensor) -> torch.Tensor:
    """Fill C with the poison NaN, in place."""
    c.view(torch.int32).fill_(POISON_BITS)
    return c


def unwritten(c: torch.Tensor) -> int:
    """How many elements still hold the poison pattern."""
    return int((c.view(torch.int32) == POISON_BITS).sum().item())


@contextlib.contextmanager
def _tf32(allowed: bool):
    old_mm = torch.backends.cuda.matmul.allow_tf32
    old_cudnn = torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = allowed
    torch.backends.cudnn.allow_tf32 = allowed
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old_mm
        torch.backends.cudnn.allow_tf32 = old_cudnn


def strict_fp32():
    """Make torch.matmul plain FP32 (no TF32) for the duration."""
    return _tf32(False)


def tf32_matmul():
    """Let torch.matmul use TF32 tensor cores for the duration (cuBLAS TF32)."""
    return _tf32(True)


def reference64(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The float64 product of the float32 inputs (on their device)."""
    return a.double() @ b.double()


def cancellation_floor(a: torch.Tensor, b: torch.Tensor) -> float:
    """The least scale ``norm_max`` divides by: the largest Σₙ |a_in|·|b_nj|, over √N.

    For zero-mean inputs that is about the size of a typical element of C. ``max|ref|``
    alone can be far smaller where one dot product's terms cancel (C of 1×1 from 42 terms,
    say), and then an error every correct TF32 product makes reads as a large one: an exact
    emulation of TF32 (both operands rounded to nearest) failed the 5e-3 gate in 118 of
    4,000 draws of 1×42×1, and 9 of 600 of the notes' 1×3×1. Where C is large the floor is
    below ``max|ref|`` and changes nothing (at the performance shape by a factor of 7). A
    dropped term still shows: it errs by about a typical |a·b|, 1/√N of the floor.
    Non-finite inputs give no floor (0).
    """
    if a.numel() == 0 or b.numel() == 0:
        return 0.0
    floor = float((a.double().abs() @ b.double().abs()).max().item()) / math.sqrt(a.shape[1])
    return floor if math.isfinite(floor) else 0.0


def references(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, float]:
    """What a result is judged against: the float64 product, LeetGPU's FP32 one, and the
    cancellation floor (the arguments of `error_figures` after C), the float64 copies of the
    inputs made once for both products."""
    a64, b64 = a.double(), b.double()
    return a64 @ b64, reference32(a, b), cancellation_floor(a64, b64)


def reference32(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """What LeetGPU compares against: torch.matmul in FP32, TF32 off."""
    with strict_fp32():
        return torch.matmul(a, b)


@dataclass(frozen=True)
class ErrorFigures:
    max_abs: float
    norm_max: float
    rel_fro: float
    leetgpu_violations: int
    unwritten: int
    nonfinite: int
    numel: int
    exact_violations: int  # LeetGPU's tolerance against the float64 product

    def to_dict(self) -> dict:
        return asdict(self)


def _nan_to_inf(x: float) -> float:
    return math.inf if math.isnan(x) else x


def _outside_leetgpu_tolerance(c: torch.Tensor, t: torch.Tensor) -> int:
    """Elements with |C − T| > 1e-4 + 1e-4·|T|, where both are finite; elsewhere, those unequal."""
    close = (c - t).abs() <= LEETGPU_ATOL + LEETGPU_RTOL * t.abs()
    ok = torch.where(torch.isfinite(c) & torch.isfinite(t), close, c == t)
    return int((~ok).sum().item())


def error_figures(
    c: torch.Tensor,
    ref64: torch.Tensor,
    ref32: torch.Tensor | None = None,
    floor: float = 0.0,
) -> ErrorFigures:
    """All figures of C against the float64 reference (and LeetGPU's FP32 one); ``floor``:
    the least scale of ``norm_max`` (`cancellation_floor` of the inputs)."""
    n_unwritten = unwritten(c)
    finite = torch.isfinite(c)
    nonfinite = int((~finite).sum().item())
    c64 = c.double()
    diff = (c64 - ref64).abs()
    if nonfinite:
        max_abs = math.inf
    else:
        max_abs = float(diff.max().item()) if diff.numel() else 0.0
    scale = max(float(ref64.abs().max().item()) if ref64.numel() else 0.0, floor)
    norm_max = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else math.inf)
    ref_norm = float(torch.linalg.vector_norm(ref64).item())
    err_norm = _nan_to_inf(float(torch.linalg.vector_norm(diff).item())) if not nonfinite else math.inf
    rel_fro = err_norm / ref_norm if ref_norm > 0 else (0.0 if err_norm == 0 else math.inf)
    exact = _outside_leetgpu_tolerance(c64, ref64)
    violations = _outside_leetgpu_tolerance(c, ref32) if ref32 is not None else 0
    return ErrorFigures(
        max_abs=max_abs,
        norm_max=norm_max,
        rel_fro=rel_fro,
        leetgpu_violations=violations,
        unwritten=n_unwritten,
        nonfinite=nonfinite,
        numel=c.numel(),
        exact_violations=exact,
    )


def verdict(fig: ErrorFigures, precision: Precision) -> tuple[bool, str]:
    """Pass or fail, with the reason a learner needs to see first."""
    if fig.unwritten:
        return False, f"{fig.unwritten} of {fig.numel} elements never written"
    if fig.nonfinite:
        return False, f"{fig.nonfinite} non-finite elements"
    gate = GATES[precision]
    if not fig.norm_max <= gate:
        return False, f"normalised max error {fig.norm_max:.2e} > {gate:.0e} ({precision})"
    return True, "ok"
