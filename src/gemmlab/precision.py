"""The precision classes an implementation promises, and the gate each is judged by.

Apart from `reference` (which computes the figures the gates are applied to) so that
the registry, the listing and the CLI name a precision without importing torch.
"""

from __future__ import annotations

from enum import StrEnum

from .exits import UsageError


class Precision(StrEnum):
    """What arithmetic an implementation promises."""

    FP32 = "fp32"  # IEEE FP32 fused multiply-add throughout
    FP32X3 = "fp32x3"  # tensor cores, three TF32 products: FP32-accurate
    TF32 = "tf32"  # tensor cores, inputs rounded to TF32 (10-bit mantissa)


#: The normalised-max-error gate of each precision class (`reference.verdict` applies it).
GATES = {Precision.FP32: 2e-5, Precision.FP32X3: 2e-5, Precision.TF32: 5e-3}


def given(value: str) -> Precision:
    """A precision a user typed (`judge --precision`, `submit --precision`); a usage error for any other."""
    if value not in {p.value for p in Precision}:
        raise UsageError(f"unknown precision {value!r}; known: {', '.join(p.value for p in Precision)}")
    return Precision(value)
