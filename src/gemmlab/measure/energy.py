"""Joules per call, from NVML's total-energy counter (millijoules since the driver loaded).

Why: under sustained tensor-core load the GPU sits at its power cap and its clock falls with it
(LADDER.md §6), so TFLOP per joule, not the instruction mix, ranks kernels there. How: the counter
steps too coarsely for one call (experiments/energy/probe.json), so each implementation runs a
block of back-to-back calls of at least `BLOCK_S` while a thread notes every step of the counter;
power is the energy between the first and last step inside the block (after `SETTLE_S`) over the
time between them, and joules per call that power × the block's wall time / its calls, host gaps
included. Blocks alternate between implementations, so drift falls on all alike.
"""

from __future__ import annotations

import ctypes
import math
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

#: Seconds each implementation's block of calls lasts, at least: five steps of the counter.
BLOCK_S = 0.5
#: The start of a block whose counter steps are not used.
SETTLE_S = 0.1
#: At most this many calls per block (a call of a few microseconds is host-bound anyway).
MAX_CALLS = 100_000


@dataclass
class Meter:
    """NVML's energy counter of one GPU, or why there is none."""

    read_mj: Callable[[], int] | None
    why_not: str = ""


def _nvml_handle(lib, bus_id: bytes | None):
    handle = ctypes.c_void_p()
    if bus_id is not None and lib.nvmlDeviceGetHandleByPciBusId_v2(bus_id, ctypes.byref(handle)) == 0:
        return handle
    if lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) == 0:
        return handle
    return None


@cache
def meter() -> Meter:
    """The current torch CUDA device's counter (through libnvidia-ml by ctypes: no package needed)."""
    try:
        import torch

        if not torch.cuda.is_available():
            return Meter(None, "no CUDA GPU")
        lib = ctypes.CDLL("libnvidia-ml.so.1")
        if lib.nvmlInit_v2() != 0:
            return Meter(None, "nvmlInit failed")
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        bus = f"{p.pci_domain_id:08x}:{p.pci_bus_id:02x}:{p.pci_device_id:02x}.0".encode()
        handle = _nvml_handle(lib, bus)
    except (OSError, AttributeError) as exc:
        return Meter(None, f"NVML unavailable: {exc}")
    if handle is None:
        return Meter(None, "NVML has no handle for this GPU")

    def read_mj() -> int:
        value = ctypes.c_ulonglong()
        if lib.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(value)) != 0:
            raise RuntimeError("nvmlDeviceGetTotalEnergyConsumption failed")
        return value.value

    try:
        read_mj()
    except RuntimeError as exc:
        return Meter(None, f"{exc} (the GPU may not report energy)")
    return Meter(read_mj)


class _Steps(threading.Thread):
    """Polls the counter until stopped; keeps (time, mJ) at each step it sees."""

    def __init__(self, read_mj: Callable[[], int]):
        super().__init__(daemon=True)
        self.read_mj, self.steps, self.done = read_mj, [], threading.Event()

    def run(self) -> None:
        last, t_last = self.read_mj(), time.perf_counter()
        while not self.done.is_set():
            value = self.read_mj()
            now = time.perf_counter()
            if value != last:
                # The step fell between the two reads: take the middle.
                self.steps.append(((now + t_last) / 2, value))
                last = value
            t_last = now


def block(read_mj: Callable[[], int], call: Callable[[], None], calls: int, sync: Callable[[], None]) -> dict:
    """One block of `calls` back-to-back calls: its power from the counter steps inside it."""
    poller = _Steps(read_mj)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(5e-4)  # the poller must see each step soon, between launches
    try:
        sync()
        poller.start()
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        sync()
        t1 = time.perf_counter()
    finally:
        poller.done.set()
        poller.join()
        sys.setswitchinterval(switch)
    inside = [(t, e) for t, e in poller.steps if t0 + SETTLE_S <= t <= t1]
    if len(inside) < 2:
        return {"calls": calls, "seconds": t1 - t0, "watts": None, "steps": len(inside)}
    (ta, ea), (tb, eb) = inside[0], inside[-1]
    return {"calls": calls, "seconds": t1 - t0, "watts": (eb - ea) / 1e3 / (tb - ta), "steps": len(inside)}


def per_call(calls: dict[str, Callable[[], None]], ms_per_call: dict[str, float], rounds: int = 1,
             block_s: float = BLOCK_S) -> dict[str, dict]:
    """{name: {"joules_per_call", "watts", "calls", "seconds"}} for each call, or {"note"} where
    the GPU has no counter. Each block runs about `block_s` from the call's timed median."""
    import torch

    m = meter()
    if m.read_mj is None:
        return {name: {"joules_per_call": None, "note": m.why_not} for name in calls}
    blocks: dict[str, list[dict]] = {name: [] for name in calls}
    order = list(calls)
    for r in range(rounds):
        for name in order if r % 2 == 0 else reversed(order):
            n = min(MAX_CALLS, max(3, math.ceil(block_s * 1e3 / max(ms_per_call[name], 1e-3))))
            blocks[name].append(block(m.read_mj, calls[name], n, torch.cuda.synchronize))
    out = {}
    for name, bs in blocks.items():
        good = [b for b in bs if b["watts"] is not None]
        if not good:
            out[name] = {"joules_per_call": None, "note": "the counter did not step inside the block"}
            continue
        calls_n = sum(b["calls"] for b in good)
        joules = sum(b["watts"] * b["seconds"] for b in good)
        seconds = sum(b["seconds"] for b in good)
        out[name] = {"joules_per_call": joules / calls_n, "watts": joules / seconds, "calls": calls_n,
                     "seconds": seconds, "method": f"NVML total energy, {len(good)} block(s) of ≥ {block_s} s"}
    return out


def tflop_per_joule(flop: int, joules_per_call: float | None) -> float | None:
    return flop / joules_per_call / 1e12 if joules_per_call else None
