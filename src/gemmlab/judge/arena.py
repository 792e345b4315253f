"""The buffers the judge shares with the solution's process: A, B, C, C's snapshot, and guards.

One flat float32 arena, allocated by the judge and mapped by the child, so
nothing large crosses the channel: on a GPU it is shared through CUDA IPC
(torch.multiprocessing's reductions, pickled judge → child only); on the CPU
it is a memfd, sealed against shrinking and growing (``F_SEAL_SHRINK |
F_SEAL_GROW``) before the child gets it over the channel. So no name exists in
/dev/shm, and a child that truncates the file gets an error instead of the
judge getting SIGBUS when it next reads a page.

For a shape, S (the snapshot of C the child takes on the caller's stream as
soon as `solve` returns), A, B and C sit at fixed offsets, so every call at
one shape sees the same addresses: a solution that caches on addresses meets
new values behind old pointers. Every buffer has a guard on each side, at
least one of its rows long, that the judge fills with a fresh pattern before
every call and reads after it (`guards`). C comes last: a write that runs on
past C's end meets its guard, then the end of the arena.
"""

from __future__ import annotations

import base64
import fcntl
import mmap
import os
import pickle
from dataclasses import dataclass

import torch

#: Offsets are multiples of 64 floats (256 bytes): enough for float4 and wider loads.
ALIGN = 64
#: The shortest guard (floats); a guard is also at least one row of its buffer.
GUARD_MIN = 1024
#: Buffer names in arena order, and what the judge calls each in a verdict.
ORDER = ("S", "A", "B", "C")
TITLES = {"A": "A", "B": "B", "C": "C", "S": "the judge's snapshot of C"}


def _up(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


@dataclass(frozen=True)
class Region:
    """One buffer and its two guards, in floats from the arena's start."""

    name: str
    offset: int
    rows: int
    cols: int
    guard_before: tuple[int, int]  # [start, end)
    guard_after: tuple[int, int]

    @property
    def end(self) -> int:
        return self.offset + self.rows * self.cols


@dataclass(frozen=True)
class Layout:
    shape: tuple[int, int, int]
    regions: dict[str, Region]
    end: int

    def offsets(self) -> list[int]:
        """A, B, C and S's offsets, in the order a request carries them."""
        return [self.regions[name].offset for name in "ABCS"]


def layout(shape: tuple[int, int, int]) -> Layout:
    m, n, k = shape
    dims = {"A": (m, n), "B": (n, k), "C": (m, k), "S": (m, k)}
    regions = {}
    pos = 0
    for name in ORDER:
        rows, cols = dims[name]
        guard = _up(max(GUARD_MIN, cols))
        offset = pos + guard
        end = offset + rows * cols
        after = _up(end) + guard  # the unaligned tail up to the next boundary is guarded too
        regions[name] = Region(name, offset, rows, cols, (pos, offset), (end, after))
        pos = after
    return Layout(tuple(shape), regions, pos)


def capacity(shapes) -> int:
    return max(layout(s).end for s in shapes)


def layout_views(arena: torch.Tensor, lay: Layout) -> tuple[torch.Tensor, ...]:
    """A, B, C, S as contiguous row-major views of the arena."""
    regions = [lay.regions[name] for name in "ABCS"]
    return tuple(arena.narrow(0, r.offset, r.rows * r.cols).view(r.rows, r.cols) for r in regions)


class Arena:
    """The judge's side: owns the memory for as long as the child may touch it."""

    def __init__(self, floats: int, device: torch.device):
        self.floats = floats
        self.device = device
        self.fd: int | None = None
        self._map: mmap.mmap | None = None
        if device.type == "cuda":
            self.tensor = torch.empty(floats, dtype=torch.float32, device=device)
            return
        fd = os.memfd_create("gemmlab-arena", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(fd, floats * 4)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
            self._map = mmap.mmap(fd, floats * 4)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        st = os.fstat(fd)
        self.inode = (st.st_dev, st.st_ino)
        self.tensor = torch.frombuffer(self._map, dtype=torch.float32, count=floats)

    def handle(self) -> tuple[dict, list[int]]:
        """What the child needs to map the same memory (sent over the trusted direction), and the
        file descriptors that go with it."""
        if self.device.type == "cuda":
            import multiprocessing.reduction

            import torch.multiprocessing as _registers_reductions  # noqa: F401

            blob = multiprocessing.reduction.ForkingPickler.dumps(self.tensor)
            return {"kind": "cuda", "pickle": base64.b64encode(bytes(blob)).decode()}, []
        return {"kind": "cpu", "floats": self.floats}, [self.fd]

    def own_files(self) -> set[tuple[int, int]]:
        """The arena's (device, inode), which the memory limit does not count against the solution."""
        return {self.inode} if self.fd is not None else set()

    def close(self) -> None:
        self.tensor = None
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:  # a view of it is still alive somewhere: the mapping goes with it
                pass
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def open_in_child(handle: dict, fds: list[int]):
    """The child's side: map the judge's arena. The handle comes from the judge (trusted).

    Returns (arena tensor, mmap or None): on the CPU the mmap is the harness's own
    view of the same bytes, which it copies through without torch."""
    if handle["kind"] == "cuda":
        import torch.multiprocessing as _registers_reductions  # noqa: F401

        return pickle.loads(base64.b64decode(handle["pickle"])), None
    (fd,) = fds
    try:
        mapped = mmap.mmap(fd, handle["floats"] * 4)
    finally:
        os.close(fd)
    return torch.frombuffer(mapped, dtype=torch.float32, count=handle["floats"]), mapped
