"""Host-side dispatch of a CUDA rung: which kernel runs for this call, and its grid.

A rung is an ordered list of `Launch` entries; the first whose precondition
holds for the call runs, and the last must hold always (the fallback). Every
kernel takes ``(A, B, C, M, N, K)`` and owns a ``tile`` of C per block, so the
grid is always ``ceil(K / tile_cols) × ceil(M / tile_rows)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import torch

from . import launch as cl
from .compiler import CompiledModule, compile_source, device_arch

Precondition = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, int, int, int], bool]


@dataclass(frozen=True)
class Launch:
    source: str
    entry: str
    block: tuple[int, int]
    tile: tuple[int, int]  # (rows of C, columns of C) per block
    defines: Mapping[str, int] = field(default_factory=dict)
    when: Precondition | None = None  # None: always (a fallback)
    requires: str = ""  # the precondition in words, for `explain` and `inspect`
    min_cc: tuple[int, int] = (5, 0)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1]

    def grid(self, m: int, k: int) -> tuple[int, int, int]:
        rows, cols = self.tile
        return (-(-k // cols), -(-m // rows), 1)

    def compile(self, arch: str | None = None) -> CompiledModule:
        return compile_source(self.source, arch=arch, defines=dict(self.defines))

    def applies(self, a, b, c, m, n, k) -> bool:
        if self.min_cc > torch.cuda.get_device_capability(a.device):
            return False
        return self.when is None or self.when(a, b, c, m, n, k)


def aligned(*tensors: torch.Tensor, to: int) -> bool:
    return all(t.data_ptr() % to == 0 for t in tensors)


def vec4_ok(a, b, c, m, n, k) -> bool:
    """float4 paths: rows of A, B and C start on 16-byte boundaries."""
    return n % 4 == 0 and k % 4 == 0 and aligned(a, b, c, to=16)


class CudaSolver:
    """Callable ``solve`` for one rung: select a launch, compile once, launch."""

    def __init__(self, launches: tuple[Launch, ...]):
        if not launches or launches[-1].when is not None:
            raise ValueError("a rung's last launch must be an unconditional fallback")
        self.launches = launches
        self._loaded: dict[tuple[int, str], object] = {}

    def select(self, a, b, c, m, n, k) -> Launch:
        return next(x for x in self.launches if x.applies(a, b, c, m, n, k))

    def kernel(self, index: int):
        arch = device_arch()
        key = (index, arch)
        kernel = self._loaded.get(key)
        if kernel is None:
            spec = self.launches[index]
            kernel = cl.get_kernel(spec.compile(arch), spec.entry)
            self._loaded[key] = kernel
        return kernel

    def __call__(self, a, b, c, m, n, k) -> None:
        spec = self.select(a, b, c, m, n, k)
        kernel = self.kernel(self.launches.index(spec))
        cl.launch(
            kernel,
            spec.grid(m, k),
            (*spec.block, 1),
            0,
            a.data_ptr(),
            b.data_ptr(),
            c.data_ptr(),
            cl.i32(m),
            cl.i32(n),
            cl.i32(k),
        )
