"""The buffers the judge shares with the solution's process: A, B, C and C's snapshot.

One flat float32 arena, allocated by the judge and mapped by the child, so
nothing large crosses the channel: on a GPU it is shared through CUDA IPC
(torch.multiprocessing's reductions, pickled judge → child only); on the CPU
it is a file in shared memory that both processes map.

For a shape, A, B, C and S (the snapshot of C the child takes on the caller's
stream as soon as `solve` returns) sit at fixed offsets from the arena's
start, so every call at one shape sees the same addresses: a solution that
caches on addresses meets new values behind old pointers.
"""

from __future__ import annotations

import base64
import mmap
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

import torch

#: Offsets are multiples of 64 floats (256 bytes): enough for float4 and wider loads.
ALIGN = 64


def _up(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


@dataclass(frozen=True)
class Layout:
    shape: tuple[int, int, int]
    a: int
    b: int
    c: int
    s: int
    end: int

    def to_dict(self) -> dict:
        return {"shape": list(self.shape), "a": self.a, "b": self.b, "c": self.c, "s": self.s}


def layout(shape: tuple[int, int, int]) -> Layout:
    m, n, k = shape
    a = 0
    b = a + _up(m * n)
    c = b + _up(n * k)
    s = c + _up(m * k)
    return Layout(tuple(shape), a, b, c, s, s + _up(m * k))


def capacity(shapes) -> int:
    return max(layout(s).end for s in shapes)


def views(arena: torch.Tensor, shape, offsets) -> tuple[torch.Tensor, ...]:
    """A, B, C, S as contiguous row-major views of the arena."""
    m, n, k = shape
    dims = ((m, n), (n, k), (m, k), (m, k))
    return tuple(arena.narrow(0, off, r * c).view(r, c) for off, (r, c) in zip(offsets, dims, strict=True))


def layout_views(arena: torch.Tensor, lay: Layout) -> tuple[torch.Tensor, ...]:
    return views(arena, lay.shape, (lay.a, lay.b, lay.c, lay.s))


class Arena:
    """The judge's side: owns the memory for as long as the child may touch it."""

    def __init__(self, floats: int, device: torch.device, folder: Path):
        self.floats = floats
        self.device = device
        self._map: mmap.mmap | None = None
        if device.type == "cuda":
            self.tensor = torch.empty(floats, dtype=torch.float32, device=device)
            self.path = None
        else:
            self.path = folder / "arena"
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.ftruncate(fd, floats * 4)
                self._map = mmap.mmap(fd, floats * 4)
            finally:
                os.close(fd)
            self.tensor = torch.frombuffer(self._map, dtype=torch.float32, count=floats)

    def handle(self) -> dict:
        """What the child needs to map the same memory (sent over the trusted direction)."""
        if self.device.type == "cuda":
            import multiprocessing.reduction

            import torch.multiprocessing as _registers_reductions  # noqa: F401

            blob = multiprocessing.reduction.ForkingPickler.dumps(self.tensor)
            return {"kind": "cuda", "pickle": base64.b64encode(bytes(blob)).decode()}
        return {"kind": "cpu", "path": str(self.path), "floats": self.floats}


def open_in_child(handle: dict) -> torch.Tensor:
    """The child's side: map the judge's arena. The handle comes from the judge (trusted)."""
    if handle["kind"] == "cuda":
        import torch.multiprocessing as _registers_reductions  # noqa: F401

        return pickle.loads(base64.b64decode(handle["pickle"]))
    fd = os.open(handle["path"], os.O_RDWR)
    try:
        mapped = mmap.mmap(fd, handle["floats"] * 4)
    finally:
        os.close(fd)
    return torch.frombuffer(mapped, dtype=torch.float32, count=handle["floats"])
