"""A Triton or PyTorch rung as one LeetGPU .py file: `solve(A, B, C, M, N, K)` on the GPU's
tensors, with nothing imported from gemmlab. A Triton rung's modules are inlined in the order
they import each other and its configuration is written out; a PyTorch rung is written as the
call it makes, TF32 set for the call as the rung sets it."""

from __future__ import annotations

import re

from .. import registry

_FUTURE = "from __future__ import annotations\n"
_RELATIVE = re.compile(r"^from \.\S* import .*\n", re.M)

_TORCH = '''{header}
import torch


def solve(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, M: int, N: int, K: int):
    # {why}
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = {tf32}
    try:
        torch.matmul(A, B, out=C)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before
'''


def _triton(impl: registry.Implementation, header: str) -> str:
    factory = impl.factory
    # The rung's own module last: each inlined module comes after those it imports.
    parts = []
    for source in reversed(impl.sources):
        text = (registry.PACKAGE_DIR / source).read_text()
        parts.append(_RELATIVE.sub("", text.replace(_FUTURE, "")).strip() + "\n")
    config = ", ".join(f"{k}={v!r}" for k, v in factory.config.items())
    return (f"{header}\n{_FUTURE}\n" + "\n\n".join(parts)
            + f"\n\n_SOLVER = {factory.cls}({config})\n\n\n"
            "def solve(A, B, C, M: int, N: int, K: int):\n"
            "    _SOLVER(A, B, C, M, N, K)\n")


def export(impl: registry.Implementation, header: str) -> str:
    """The file's text; `header` is its opening comment (each line starting with #)."""
    if impl.family is registry.Family.TRITON:
        return _triton(impl, header)
    tf32 = str(impl.precision) == "tf32"
    why = ("TF32 on: cuBLAS on the tensor cores, about 1e-3 relative error (fails LeetGPU's 1e-4 check)"
           if tf32 else "TF32 off for the call: cuBLAS's strict FP32 SGEMM, whatever the caller set")
    return _TORCH.format(header=header, why=why, tf32=tf32)
