"""`gemmlab bench`: implementations timed interleaved with cuBLAS (`measure.timing`), then the C
each last wrote judged against the float64 reference: a wrong result is reported as failed, never
as fast. Without a GPU the same harness times what runs on the CPU, with a host clock."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial

import torch

from .. import problem, registry
from ..measure import device as device_info
from ..measure import energy as energy_meter
from ..measure.inputs import TIMING_HIGH, TIMING_LOW, fresh_seed, timing_operands
from ..measure.timing import QUEUE_AHEAD_CYCLES, is_small, summarize, tflops, time_interleaved
from ..policy import default as tuned_default
from ..reference import GATES, error_figures, references, verdict

CPU_SHAPE = (256, 256, 256)
FLUSH_BYTES = 256 << 20  # several times the 60 MB L2 of an H200


@dataclass
class _Entry:
    impl: registry.Implementation
    c: torch.Tensor
    times: list[float] = field(default_factory=list)
    error: str = ""
    energy: dict | None = None


def _median_of(entries: list[_Entry], name: str) -> float | None:
    e = next((e for e in entries if e.impl.name == name), None)
    return summarize(e.times)["median_ms"] if e and e.times else None


def _kernel_used(impl: registry.Implementation, a, b, c, m, n, k) -> str | None:
    if a.device.type != "cuda":
        return None
    launch = impl.dispatch(a, b, c, m, n, k)
    return impl.launch_label(launch) if launch else None


def run(names: list[str] | None, *args, **kwargs) -> dict:
    """`measure` of the registry implementations named (all by default), beside the baseline."""
    return measure(registry.select(names), *args, **kwargs)


@dataclass(frozen=True)
class Lineup:
    """What one measurement times: the implementations that run on its device, cuBLAS among them
    (every ratio is against it, timed in the same rounds), and why each other one does not. Asked
    once a command: the command line stops on it before anything runs, `measure` then times it."""

    runnable: list[registry.Implementation]
    skipped: dict[str, str]


def lineup(impls: list[registry.Implementation], device) -> Lineup:
    if all(i.name != registry.BASELINE for i in impls):
        impls = [registry.get(registry.BASELINE), *impls]
    runnable, skipped = [], {}
    for impl in impls:
        ok, why = impl.can_run_on(device)
        if ok:
            runnable.append(impl)
        else:
            skipped[impl.name] = why
    return Lineup(runnable, skipped)


def measure(
    impls: list[registry.Implementation] | Lineup,
    shape: tuple[int, int, int] | None = None,
    warmup: int = 5,
    iters: int = 10,
    flush_l2: bool = False,
    seed: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    energy: Collection[str] | None = None,
    energy_rounds: int = 2,
) -> dict:
    """Measure and check `impls` (or a `lineup` already asked) beside the baseline; the results
    record (`results.py`). On a GPU the joules per call of the names in `energy` (None: every one;
    empty: none; the baselines always) are read after the timing, in `energy_rounds` blocks each
    (`measure.energy`)."""
    gpu = torch.cuda.is_available()
    device = torch.device("cuda" if gpu else "cpu")
    m, n, k = shape or (problem.PERF_SHAPE if gpu else CPU_SHAPE)
    seed = fresh_seed() if seed is None else seed
    chosen = impls if isinstance(impls, Lineup) else lineup(impls, device)
    runnable, skipped = chosen.runnable, chosen.skipped
    a, b = timing_operands((m, n, k), seed, device)
    entries = [_Entry(i, torch.empty((m, k), dtype=torch.float32, device=device)) for i in runnable]
    say = counter(progress, len(entries) + iters + 1)
    sampler = device_info.ClockSampler(torch.cuda.current_device()) if gpu else None
    with sampler or contextlib.nullcontext():
        _time(entries, a, b, (m, n, k), warmup, iters, flush_l2 and gpu, gpu, say)
    if gpu and (energy is None or energy):
        say("energy: blocks of back-to-back calls under NVML's counter")
        _energy(entries, a, b, (m, n, k), energy, energy_rounds)
    say("checking results against the float64 reference")
    info = device_info.gpu() if gpu else {"name": "cpu"}
    peaks = device_info.peaks(info) if gpu else {"fp32": None, "tf32": None}
    rows = _rows(entries, a, b, (m, n, k), peaks)
    return {
        "schema": 1,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "platform": "gpu" if gpu else "cpu",
        "device": info,
        "versions": device_info.versions(),
        "shape": [m, n, k],
        "flop": problem.flops(m, n, k),
        "inputs": {"distribution": "uniform", "low": TIMING_LOW, "high": TIMING_HIGH, "seed": seed},
        "warmup": warmup, "iters": iters, "flush_l2": flush_l2,
        "timing": "cuda-events, interleaved" if gpu else "host clock (CPU figures)",
        "baseline": registry.BASELINE,
        "peaks_tflops": peaks,
        # Sampled over the warm-ups and timed rounds of all implementations together.
        "clocks_during_timing": sampler.summary() if sampler else None,
        "energy": {"method": f"NVML total-energy counter around blocks of ≥ {energy_meter.BLOCK_S} s of "
                             f"back-to-back calls, {energy_rounds} per implementation, alternating",
                   "measured": sorted(e.impl.name for e in entries if e.energy)} if gpu else None,
        "skipped": skipped,
        # Which tune record `default` dispatched by (a borrowed one on a GPU without its own).
        **({"tune_record": tuned_default.provenance()}
           if gpu and any(e.impl.name == tuned_default.NAME for e in entries) else {}),
        "results": rows,
    }


def counter(progress, total: int) -> Callable[[str], None]:
    """`say(message)`: one more step done, reported as ``progress(message, done, total)``."""
    done = 0

    def say(message: str) -> None:
        nonlocal done
        if progress:
            progress(message, done, total)
        done += 1

    return say


def _time(entries: list[_Entry], a, b, shape, warmup: int, iters: int, flush_l2: bool, gpu: bool,
          say: Callable[[str], None]) -> None:
    """Time every entry interleaved; record its times, or the error its warm-up raised."""
    m, n, k = shape
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.float32, device=a.device) if flush_l2 else None
    times, errors = time_interleaved(
        {e.impl.name: partial(e.impl.solve, a, b, e.c, m, n, k) for e in entries},
        {e.impl.name: e.c for e in entries}, warmup, iters, gpu,
        before_each=flush.zero_ if flush is not None else None, progress=say, queue_ahead=is_small(shape))
    for e in entries:
        e.error = errors.get(e.impl.name, "")
        e.times = times.get(e.impl.name, [])


def _energy(entries: list[_Entry], a, b, shape, names: Collection[str] | None, rounds: int) -> None:
    """Each chosen entry's joules per call (`measure.energy.per_call`), after its timing."""
    m, n, k = shape
    baselines = {registry.BASELINE, registry.TF32_BASELINE}
    chosen = [e for e in entries if e.times and not e.error
              and (names is None or e.impl.name in names or e.impl.name in baselines)]
    figures = energy_meter.per_call({e.impl.name: partial(e.impl.solve, a, b, e.c, m, n, k) for e in chosen},
                                    {e.impl.name: summarize(e.times)["median_ms"] for e in chosen}, rounds)
    for e in chosen:
        e.energy = figures[e.impl.name]


def _energy_row(e: _Entry, live: list[_Entry], flop: int) -> dict:
    """The row's joules per call, TFLOP/J, and TFLOP/J against the baselines'."""
    if not e.energy:
        return {}
    rate = energy_meter.tflop_per_joule(flop, e.energy.get("joules_per_call"))
    row = {"energy": e.energy, "tflop_per_j": rate}
    for key, base in (("cublas", registry.BASELINE), ("cublas_tf32", registry.TF32_BASELINE)):
        other = next((x for x in live if x.impl.name == base and x.energy), None)
        other_rate = energy_meter.tflop_per_joule(flop, other.energy.get("joules_per_call")) if other else None
        row[f"ratio_tflop_per_j_vs_{key}"] = rate / other_rate if rate and other_rate else None
    return row


def _rows(entries: list[_Entry], a, b, shape, peaks: dict) -> list[dict]:
    """One record row per entry: what ran, its times and speed, and the verdict on what it wrote."""
    m, n, k = shape
    refs = references(a, b)
    live = [e for e in entries if not e.error]
    base_ms = _median_of(live, registry.BASELINE)
    # TF32 means the tensor cores: on a CPU, torch-tf32 is plain CPU torch and no yardstick.
    tf32_ms = _median_of(live, registry.TF32_BASELINE) if a.is_cuda else None
    rows = []
    for e in entries:
        row = {
            "step": e.impl.step_label, "name": e.impl.name, "family": str(e.impl.family),
            "precision": str(e.impl.precision),
            "kernel": _kernel_used(e.impl, a, b, e.c, m, n, k),
        }
        if e.error:
            rows.append(row | {"passed": False, "reason": e.error})
            continue
        fig = error_figures(e.c, *refs)
        ok, reason = verdict(fig, e.impl.precision)
        s = summarize(e.times)
        peak = device_info.peak_for(e.impl.precision, peaks)
        speed = tflops(problem.flops(m, n, k), s["median_ms"])
        rows.append(row | s | {
            "times_ms": e.times,
            "tflops": speed,
            "ratio_vs_cublas": base_ms / s["median_ms"] if base_ms else None,
            "ratio_vs_cublas_tf32": tf32_ms / s["median_ms"] if tf32_ms else None,
            "fraction_of_peak": speed / peak if peak else None,
            "passed": ok, "reason": reason, "gate": GATES[e.impl.precision],
            "figures": fig.to_dict(),
        } | _energy_row(e, live, problem.flops(m, n, k)))
    return rows


def host_overhead(impl: registry.Implementation, shape: tuple[int, int, int], iters: int = 20,
                  seed: int = 0) -> dict:
    """What a Python caller pays per call above the GPU's own time (the issue's measure): the
    median time between events around one call started on an idle GPU (the host's work before
    the kernels reach it included), minus the median with the call queued behind a spin (the
    GPU's time alone). And beside it, the host's own: the median host clock around the queued
    call, whose launches never wait for the GPU (Python, checks, the driver's submission). Where
    the overhead is well above it, the rest is the idle GPU's start, which no host code shortens;
    the two are medians of different runs, so the difference can come out below zero."""
    m, n, k = shape
    a, b = timing_operands(shape, seed, torch.device("cuda"))
    c = torch.empty((m, k), device="cuda")
    call = partial(impl.solve, a, b, c, m, n, k)
    for _ in range(3):
        call()
    per_call, gpu, host = [], [], []
    for _ in range(iters):
        for spin, times in ((False, per_call), (True, gpu)):
            torch.cuda.synchronize()
            if spin:
                torch.cuda._sleep(QUEUE_AHEAD_CYCLES)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            if spin:  # the host's clock only where the GPU is busy: the idle call is the measure as it was
                t0 = time.perf_counter()
                call()
                host.append((time.perf_counter() - t0) * 1e3)
            else:
                call()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    per, alone = summarize(per_call)["median_ms"], summarize(gpu)["median_ms"]
    return {"per_call_ms": per, "gpu_ms": alone, "overhead_ms": per - alone,
            "host_ms": summarize(host)["median_ms"], "iters": iters}
