"""What keeps a timing honest besides the cross-check: L2 persistence undone, and physics.

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
  is impossible, so it is a rejection with the reason. On the CPU the floor is
  every logical CPU doing `CPU_FLOP_PER_CLOCK` at `CPU_CLOCK_CEILING_MHZ`, and a
  median below it gets no rate and no ratio, not a rejection: a figure there is
  the judge's clock less the harness's overhead, which a busy machine jitters
  and a process working beside the harness's round trip shaves.
"""

from __future__ import annotations

import os

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


def gpu_floor(shape: tuple[int, int, int], sm_count: int, fp32_lanes: int, clock_mhz: float, source: str) -> dict:
    """`ffma_floor_ms` with what it rests on, as the verdict reports it."""
    return {"floor_ms": ffma_floor_ms(shape, sm_count, fp32_lanes, clock_mhz), "clock_mhz": clock_mhz,
            "clock_source": source, "sm_count": sm_count, "fp32_lanes": fp32_lanes,
            "what": f"{sm_count} SMs × {fp32_lanes} FMA lanes × 2 FLOP at {clock_mhz:.0f} MHz, {source}"}


#: FP32 FLOP one CPU core does a clock at most: two FMA pipes of 16 lanes (AVX-512), 2 FLOP each. No
#: x86 or Arm core does more in FP32; with every logical CPU counted (SMT adds no pipe), no honest time
#: falls below the floor these set.
CPU_FLOP_PER_CLOCK = 64
#: Above any CPU's boost clock (the fastest shipped boost to about 6.2 GHz).
CPU_CLOCK_CEILING_MHZ = 7000


def cpu_floor(shape: tuple[int, int, int]) -> dict:
    """The least time 2·M·N·K FLOP take on this machine's CPUs at `CPU_FLOP_PER_CLOCK` a clock."""
    cpus = os.cpu_count() or 1
    ms = problem.flops(*shape) / (cpus * CPU_FLOP_PER_CLOCK * CPU_CLOCK_CEILING_MHZ * 1e6) * 1e3
    return {"floor_ms": ms, "cpus": cpus, "flop_per_clock": CPU_FLOP_PER_CLOCK, "clock_mhz": CPU_CLOCK_CEILING_MHZ,
            "what": f"{cpus} CPUs × {CPU_FLOP_PER_CLOCK} FLOP a clock at {CPU_CLOCK_CEILING_MHZ} MHz, above any "
                    f"CPU's boost"}


def impossible(figure_ms: float, floor: dict) -> str:
    """'' unless a strict-FP32 figure (the fastest call on a GPU, the median on the CPU) beat the FMA
    floor; then why that cannot be."""
    if figure_ms >= floor["floor_ms"]:
        return ""
    return (f"impossible timing: the timed calls took {figure_ms:.4f} ms, below the FP32 FMA floor of "
            f"{floor['floor_ms']:.4f} ms ({floor['what']}): no solution that computes in FP32 FMAs can be "
            f"that fast; if it uses tensor cores, judge it with --precision fp32x3 or tf32")


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
        return gpu_floor(shape, info["sm_count"], lanes, clock, source)
