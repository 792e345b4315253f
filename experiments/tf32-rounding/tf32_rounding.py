"""Does cuBLAS TF32 round or truncate each operand? One nonzero product per output, at the performance shape.

Usage: python experiments/tf32-rounding/tf32_rounding.py   (a developer's tool; needs a GPU; writes nothing)
A (M×N) and B (N×K) are zero but for column 0 of A and row 0 of B, so every C[m][k] is one
product: a value between two TF32 numbers in one operand, 1 in the other, shows what the
tensor-core path made of that operand. On the H200 (2026-11-30) both operands were rounded to
nearest, ties to even.
"""

from __future__ import annotations

import torch

from gemmlab import problem
from gemmlab.reference import tf32_matmul


def product(which: str, x: float) -> float:
    m, n, k = problem.PERF_SHAPE
    a = torch.zeros(m, n, device="cuda")
    b = torch.zeros(n, k, device="cuda")
    a[:, 0], b[0, :] = (x, 1.0) if which == "A" else (1.0, x)
    with tf32_matmul():
        return (a @ b)[5, 7].item()


def main() -> None:
    # 1 + 3·2⁻¹²: nearest TF32 is 1 + 2⁻¹⁰, truncation gives 1. -(1 + 2⁻¹¹): a tie; to even gives -1.
    for x in (1.0 + 3 * 2.0**-12, -(1.0 + 2.0**-11)):
        for which in ("A", "B"):
            print(f"cuBLAS TF32, {which} holds {x!r}: C = {product(which, x)!r}")


if __name__ == "__main__":
    main()
