"""The torch rungs: ``torch.matmul`` with TF32 off (`torch`, the baseline) and on (`torch-tf32`).

Each factory imports `matmul`, and torch with it, only when the registry first calls the rung:
the registry is read without torch.
"""

from __future__ import annotations

from collections.abc import Callable


def torch_fp32() -> Callable[..., None]:
    """`matmul.solve`: cuBLAS SGEMM, TF32 off."""
    from .matmul import solve

    return solve


def torch_tf32() -> Callable[..., None]:
    """`matmul.solve_tf32`: cuBLAS on the tensor cores, TF32 on."""
    from .matmul import solve_tf32

    return solve_tf32
