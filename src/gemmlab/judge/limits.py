"""How long a call may take, and how much the solution's processes may hold and write.

A call's budget is derived from its work: a few seconds of slack plus its
FLOPs at a floor rate far below any sensible solution (on the CPU, Triton's
interpreter runs at about 30 MFLOP/s; on a GPU the slowest rung does
5 TFLOP/s). The first call gets extra time for what a first call does
(Triton's JIT, cuBLAS handles, JAX's compile). A hang is thus reported within
seconds of its budget instead of after a flat five minutes. ``--timeout``
replaces every call's budget with one figure.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .. import problem

BASE_S = 5.0
FIRST_CALL_EXTRA_S = {"cpu": 5.0, "cuda": 30.0}
FLOOR_FLOP_PER_S = {"cpu": 2e6, "cuda": 5e10}
#: Starting the child and importing the solution (torch, Triton, JAX, the .so).
LOAD_S = 60.0
#: More for the frameworks that compile while the solution loads: CuTe DSL's `cute.compile`,
#: TileLang's first call (nvcc on its generated CUDA).
LOAD_EXTRA_S = {"cute": 60.0, "tilelang": 180.0}
#: Leaving after the verdict, before the tree is killed.
EXIT_GRACE_S = 2.0
#: compute-sanitizer slows kernels by one or two orders of magnitude.
SANITIZER_FACTOR = 20.0
#: Default host-memory limit for the whole process tree: the smaller of these.
MEMORY_CAP_BYTES = 16 << 30
MEMORY_FRACTION = 0.5
#: The least --memory-limit: below it a solution's process dies as it starts (Python and torch
#: alone hold about this much), before the watch can name the limit as the cause.
MEMORY_FLOOR_BYTES = 1 << 28
#: Processes the solution's tree may run at once (torch.compile's worker pool fits well inside).
PROCESS_LIMIT = 256
#: The largest file any of its processes may write (RLIMIT_FSIZE).
FILE_LIMIT_BYTES = 4 << 30
#: What its scratch folder may hold in all (the judge watches it: blocks in use, and files deleted
#: there but held open); a folder on the judge's disk, filled, would fill the disk.
DISK_LIMIT_BYTES = 4 << 30
#: Entries (files, folders, links) it may hold: each takes an inode, and empty ones no blocks.
#: Far above what the toolchains' caches make there.
DISK_LIMIT_ENTRIES = 100_000


@dataclass(frozen=True)
class Limits:
    device: str  # cpu | cuda
    timeout: float | None = None  # the user's override, per call
    memory_bytes: int | None = None
    slow: float = 1.0  # a wrapper's slow-down factor
    processes: int = PROCESS_LIMIT
    file_bytes: int = FILE_LIMIT_BYTES
    disk_bytes: int = DISK_LIMIT_BYTES
    disk_entries: int = DISK_LIMIT_ENTRIES
    load_extra_s: float = 0.0  # the framework's compile while loading (LOAD_EXTRA_S)

    def call_s(self, shape: tuple[int, int, int], first: bool) -> float:
        if self.timeout is not None:
            return self.timeout
        s = BASE_S + problem.flops(*shape) / FLOOR_FLOP_PER_S[self.device]
        if first:
            s += FIRST_CALL_EXTRA_S[self.device]
        return s * self.slow

    def load_s(self) -> float:
        return max((LOAD_S + self.load_extra_s) * self.slow, self.timeout or 0.0)

    def exit_s(self) -> float:
        return EXIT_GRACE_S * self.slow

    def memory(self) -> int:
        return self.memory_bytes if self.memory_bytes is not None else default_memory_bytes()


def default_memory_bytes() -> int:
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return int(min(MEMORY_CAP_BYTES, MEMORY_FRACTION * total))


def gib(n: int) -> str:
    return f"{n / (1 << 30):.2f} GiB"


def size_text(n: int) -> str:
    """Bytes in GiB, or MiB below one GiB."""
    return gib(n) if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"
