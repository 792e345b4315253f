"""PyTorch: ``torch.matmul(A, B, out=C)``, i.e. cuBLAS SGEMM.

This is what a user would call instead of writing a kernel, and the yardstick
every other rung is measured against. TF32 is switched off for the call, so
cuBLAS runs its strict FP32 (SIMT, FFMA) kernels; with TF32 on it would use
the tensor cores at several times the speed and about 1e-3 relative error.
"""

from __future__ import annotations

import torch

from ...reference import strict_fp32, tf32_matmul


def solve(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, m: int, n: int, k: int) -> None:
    with strict_fp32():
        torch.matmul(a, b, out=c)


def solve_tf32(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, m: int, n: int, k: int) -> None:
    """cuBLAS on the tensor cores (TF32 on for the call): the yardstick of the `tf32` rungs."""
    with tf32_matmul():
        torch.matmul(a, b, out=c)
