"""The task: LeetGPU challenge 02, "Matrix Multiplication".

C = A · B in float32, row-major. A is M×N, B is N×K, C is M×K. The reduction
index is **N** (most GEMM literature calls it K): A[m*N+n], B[n*K+k], C[m*K+k].

This module holds the contract and nothing else: the constraints, the
performance shape, the published examples, the FLOP count, and the validation
every `solve` call goes through before anything is launched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a call is checked: naming the task needs no torch
    import torch

MIN_DIM = 1
MAX_DIM = 8192

#: LeetGPU's performance case: M=8192, N=6144, K=4096.
PERF_SHAPE = (8192, 6144, 4096)


@dataclass(frozen=True)
class Example:
    name: str
    a: list[list[float]]
    b: list[list[float]]
    c: list[list[float]]

    @property
    def shape(self) -> tuple[int, int, int]:
        return len(self.a), len(self.b), len(self.b[0])


#: The two examples of the challenge text, with their published answers.
EXAMPLES = (
    Example("example-1", [[1, 2], [3, 4]], [[5, 6], [7, 8]], [[19, 22], [43, 50]]),
    Example("example-2", [[1, 2, 3]], [[4], [5], [6]], [[32]]),
)


def flops(m: int, n: int, k: int) -> int:
    """One multiply and one add per (row, column, reduction) triple."""
    return 2 * m * n * k


class SolveArgumentError(ValueError):
    """A `solve` argument breaks the contract. `argument` names it."""

    def __init__(self, argument: str, expected: str, got: object):
        self.argument = argument
        self.expected = expected
        self.got = got
        super().__init__(f"{argument}: expected {expected}, got {got}")


class DTypeError(SolveArgumentError, TypeError):
    pass


class DeviceError(SolveArgumentError):
    pass


class ShapeError(SolveArgumentError):
    pass


class LayoutError(SolveArgumentError):
    pass


class DimensionError(SolveArgumentError):
    pass


class AliasError(SolveArgumentError):
    pass


def _overlaps(x: torch.Tensor, y: torch.Tensor) -> bool:
    """Whether the bytes of x and y overlap (an empty tensor spans one element)."""
    (a0, a1), (b0, b1) = ((t.data_ptr(), t.data_ptr() + max(t.numel(), 1) * t.element_size()) for t in (x, y))
    return a0 < b1 and b0 < a1


def _conforms(A, B, C, M, N, K) -> bool:
    """The common case in a few microseconds: plain float32 tensors of the right shapes, on one
    device, row-major, C apart from A and B. False means "look closer": `validate` then checks each
    rule in turn. Row-major is `is_contiguous()`, the rule `validate` applies (a size-1 dimension
    may have any stride): one call a tensor, cheaper than comparing `stride()` tuples built one each."""
    import torch

    f32, tensor = torch.float32, torch.Tensor
    if not (type(M) is int and type(N) is int and type(K) is int
            and MIN_DIM <= M <= MAX_DIM and MIN_DIM <= N <= MAX_DIM and MIN_DIM <= K <= MAX_DIM):
        return False
    if not (type(A) is tensor and type(B) is tensor and type(C) is tensor
            and A.dtype is f32 and B.dtype is f32 and C.dtype is f32):
        return False
    device = A.device
    if not (B.device == device and C.device == device):
        return False
    if not (A.shape == (M, N) and B.shape == (N, K) and C.shape == (M, K)
            and A.is_contiguous() and B.is_contiguous() and C.is_contiguous()):
        return False
    c0, a0, b0 = C.data_ptr(), A.data_ptr(), B.data_ptr()
    c1 = c0 + 4 * M * K
    return (c1 <= a0 or a0 + 4 * M * N <= c0) and (c1 <= b0 or b0 + 4 * N * K <= c0)


def validate(A: object, B: object, C: object, M: object, N: object, K: object) -> None:
    """Check every argument of ``solve(A, B, C, M, N, K)``; raise before any launch.

    Order matters for clear messages: sizes first (they say what the shapes
    must be), then each tensor's type, dtype, device, shape and layout, then
    aliasing of the output with an input. A call that conforms in the plain way
    (`_conforms`) is through in a few microseconds: it runs on every call.
    """
    if _conforms(A, B, C, M, N, K):
        return
    import torch

    for name, value in (("M", M), ("N", N), ("K", K)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise DimensionError(name, "a Python int", type(value).__name__)
        if not MIN_DIM <= value <= MAX_DIM:
            raise DimensionError(name, f"{MIN_DIM} <= {name} <= {MAX_DIM}", value)
    expected = {"A": (M, N), "B": (N, K), "C": (M, K)}
    tensors = {"A": A, "B": B, "C": C}
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise DTypeError(name, "a torch.Tensor", type(t).__name__)
        if t.dtype != torch.float32:
            raise DTypeError(name, "dtype torch.float32", t.dtype)
    device = A.device  # type: ignore[union-attr]
    for name, t in tensors.items():
        if t.device != device:  # type: ignore[union-attr]
            raise DeviceError(name, f"the device of A ({device})", t.device)  # type: ignore[union-attr]
    for name, t in tensors.items():
        shape = tuple(t.shape)  # type: ignore[union-attr]
        if shape != expected[name]:
            raise ShapeError(name, f"shape {expected[name]}", shape)
    for name, t in tensors.items():
        if not t.is_contiguous():  # type: ignore[union-attr]
            raise LayoutError(name, "a contiguous row-major tensor", f"strides {t.stride()}")  # type: ignore[union-attr]
    for name in ("A", "B"):
        if _overlaps(C, tensors[name]):  # type: ignore[arg-type]
            raise AliasError("C", f"memory disjoint from {name}", f"an overlap with {name}")
