"""What keeps a GPU timing honest besides the cross-check: L2 persistence undone, and physics.

* **Persisting L2.** A solution can set L2 aside for "persisting" accesses
  (``cudaLimitPersistingL2CacheSize`` and an access-policy window on its
  stream or launches) so that B, say, stays in L2 from one timed call to the
  next. Before every call the judge returns every persisting line to normal
  in its own context (the lines are the device's) before it writes the
  inputs, so those writes evict what was pinned, and the harness does it again
  just before ``solve``. What the solution set aside, and its stream's window,
  are reported with the timing.
* **The FMA floor.** Strict FP32 (``--precision fp32``: FP32 fused
  multiply-adds throughout) cannot beat 2·M·N·K FLOP at every FP32 lane of
  every SM doing one FMA per clock, at the fastest SM clock nvidia-smi saw
  during the calls (the device's maximum where it saw none). A time below that
  is impossible, so it is a rejection with the reason.
"""

from __future__ import annotations

from .. import problem
from . import procs


def reset_persisting_l2() -> None:
    """Return every persisting L2 line to normal (this process's context; the lines are the device's)."""
    try:
        from cuda.bindings import driver

        driver.cuCtxResetPersistingL2Cache()
    except Exception:  # no driver API here, or an old driver: nothing to reset
        pass


def l2_note(notes: dict) -> str:
    """The solution's use of persisting L2, in words ('' if none)."""
    parts = []
    if notes.get("l2_persisting"):
        parts.append(f"set aside {notes['l2_persisting'] / (1 << 20):.1f} MiB of L2 for persisting accesses")
    if notes.get("l2_window"):
        parts.append(f"left an access-policy window of {notes['l2_window'] / (1 << 20):.1f} MiB on the "
                     f"caller's stream")
    if not parts:
        return ""
    return ("the solution " + " and ".join(parts) + "; the judge returned every persisting line to normal "
            "before each call, so nothing stayed pinned from one call to the next")


def ffma_floor_ms(shape: tuple[int, int, int], sm_count: int, fp32_lanes: int, clock_mhz: float) -> float:
    """The least time 2·M·N·K FLOP take at one FP32 FMA (2 FLOP) per lane per clock."""
    return problem.flops(*shape) / (sm_count * fp32_lanes * 2 * clock_mhz * 1e6) * 1e3


def impossible(fastest_ms: float, floor: dict) -> str:
    """'' unless a strict-FP32 call beat the FMA floor; then why that cannot be."""
    if fastest_ms >= floor["floor_ms"]:
        return ""
    return (f"impossible timing: a timed call took {fastest_ms:.4f} ms, below the FP32 FMA floor of "
            f"{floor['floor_ms']:.4f} ms ({floor['sm_count']} SMs × {floor['fp32_lanes']} FMA lanes × 2 "
            f"FLOP at {floor['clock_mhz']:.0f} MHz, {floor['clock_source']}): no solution that computes "
            f"in FP32 FMAs can be that fast; if it uses tensor cores, judge it with --precision fp32x3 "
            f"or tf32")


class ClockRecord:
    """The SM clock while the timed calls run (bench's nvidia-smi sampler, exempt from the
    solution's process tree: the judge started it)."""

    def __init__(self):
        from ..measure.device import ClockSampler

        self.sampler = ClockSampler()

    def __enter__(self) -> ClockRecord:
        self.sampler.__enter__()
        if self.sampler.proc is not None:
            procs.EXEMPT.add(self.sampler.proc.pid)
        return self

    def __exit__(self, *exc) -> None:
        self.sampler.__exit__(*exc)
        if self.sampler.proc is not None:
            procs.EXEMPT.discard(self.sampler.proc.pid)

    def floor(self, shape: tuple[int, int, int]) -> dict:
        """The FMA floor at the fastest clock sampled (else the device's maximum clock)."""
        from ..measure.device import FP32_LANES, gpu

        info = gpu()
        summary = self.sampler.summary()
        if summary.get("samples"):
            clock, source = summary["sm_clock_mhz"]["max"], "the fastest clock seen during the calls"
        else:
            clock, source = info["max_sm_clock_mhz"], "the device's maximum clock"
        cc = tuple(int(x) for x in info["compute_capability"].split("."))
        lanes = FP32_LANES.get(cc, 128)
        return {"floor_ms": ffma_floor_ms(shape, info["sm_count"], lanes, clock), "clock_mhz": clock,
                "clock_source": source, "sm_count": info["sm_count"], "fp32_lanes": lanes}
