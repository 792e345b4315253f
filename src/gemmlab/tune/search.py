"""`gemmlab tune`: search rungs' compile-time configurations, per shape class, and write the record.

For each shape class (one representative shape each), in order:

1. **plan** (CPU): for each rung named, the launch it runs at the shape, and
   every knob setting of its `Space` for that launch, current knobs first;
   a setting whose own precondition misses the shape is *rejected*;
2. **compile** (CPU, NVRTC, every distinct kernel side by side: `precompile`):
   a candidate that does not compile, or whose kernel spills, is *rejected*
   with the reason; no GPU time is spent on it;
3. **verify** (GPU): one call on fresh inputs with C poisoned, judged by the
   judge's own `run_case` (float64 reference, normalised max error ≤ 2e-5,
   unwritten elements, inputs untouched) and LeetGPU's check against
   cuBLAS FP32 at atol = rtol = 1e-4 (0 elements outside); else *failed*;
4. **time** (GPU): the verified candidates interleaved call by call with
   cuBLAS FP32 (`measure.timing.time_interleaved`, CUDA events, inputs
   U[-10, 10)), median of at least MIN_ITERS calls (more below 2048³: measure.timing.timed_calls); SM clock and
   power sampled meanwhile; what the timed calls wrote is judged again;
5. **decide** (`decide`): the lowest median wins; equal medians go to the
   candidate tried first.

Steps 3 and 4 go through a `Measure`; the tests give a fake one, so that
everything but the GPU's figures is checked on a CPU, including that the
same timings give the same record.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from .. import launches as builders
from ..cuda.compiler import CompileError
from ..cuda.dispatch import Launch
from ..measure.timing import timed_calls
from ..policy.classes import CLASSES, ShapeClass
from ..policy.record import KIND, SCHEMA, TIE_BREAK, cubin_digest, slug
from ..policy.spaces import SPACES

MIN_ITERS = 20  # timed calls per candidate at least (more below 2048³: measure.timing.timed_calls)


class Pointer:
    """A stand-in operand at a 16-byte aligned address: preconditions decided from the shape alone
    (gemmlab's tensors are 256-byte aligned; the tuner allocates its own)."""

    def data_ptr(self) -> int:
        return 1 << 20


ALIGNED = Pointer()


@dataclass
class Candidate:
    rung: str
    launch: str  # its name within the rung (gemmlab.launches)
    knobs: dict[str, int]
    built: Launch = field(repr=False)
    verdict: str = ""  # "" while undecided; rejected | failed | timed
    reason: str = ""
    registers: int | None = None
    spills: int | None = None
    cubin: str | None = None  # sha-256 prefix of the main kernel's cubin, as compiled and timed
    times_ms: list[float] = field(default_factory=list, repr=False)
    median_ms: float | None = None
    ratio_vs_cublas: float | None = None

    @property
    def key(self) -> str:
        return f"{self.rung}#{self.launch}:{self.built.kernel.label}"

    @property
    def kernel(self) -> str:
        host = getattr(self.built.host, "label", "")
        return self.built.kernel.label + (f" ({host})" if host else "")

    def reject(self, verdict: str, reason: str) -> None:
        self.verdict, self.reason = verdict, " ".join(reason.split())[:300]

    def to_dict(self) -> dict:
        return {"rung": self.rung, "launch": self.launch, "knobs": dict(self.knobs), "kernel": self.kernel,
                "verdict": self.verdict, "reason": self.reason, "registers": self.registers,
                "spills": self.spills, "cubin": self.cubin, "median_ms": self.median_ms,
                "ratio_vs_cublas": self.ratio_vs_cublas}

    def winner(self) -> dict:
        return {k: v for k, v in self.to_dict().items()
                if k in ("rung", "launch", "knobs", "kernel", "cubin", "median_ms", "ratio_vs_cublas")}


def launch_at(rung: str, shape: tuple[int, int, int]) -> Launch:
    """The launch `rung` runs at `shape` (aligned operands), as `CudaSolver` picks it."""
    m, n, k = shape
    return next(x for x in builders.RUNGS[rung] if x.when is None or x.when(ALIGNED, ALIGNED, ALIGNED, m, n, k))


def plan(rungs: list[str], shape: tuple[int, int, int]) -> tuple[list[Candidate], list[str]]:
    """Every candidate of every rung at `shape`, in search order; and notes on rungs with none."""
    m, n, k = shape
    out, notes = [], []
    for rung in rungs:
        space = SPACES[rung]
        runs = launch_at(rung, shape)
        if runs.name not in space.launches:
            notes.append(f"{rung} runs {runs.kernel.label} (launch {runs.name}) at this shape, which its "
                         "space does not tune")
            continue
        for knobs in space.candidates(runs.name):
            cand = Candidate(rung, runs.name, knobs, space.build(runs.name, knobs))
            when = cand.built.when
            if when is not None and not when(ALIGNED, ALIGNED, ALIGNED, m, n, k):
                cand.reject("rejected", f"its precondition ({when}) does not hold at {m}×{n}×{k}")
            out.append(cand)
    return out, notes


def _compile_quietly(kernel, arch: str) -> None:
    try:
        kernel.compile(arch)
    except CompileError:
        pass  # compile_check compiles it again, in order, and rejects the candidate with the log


def precompile(cands: list[Candidate], arch: str, workers: int | None = None) -> int:
    """Build every distinct kernel of the undecided candidates at once, into the compile cache.

    Each NVRTC build runs in a process of its own (cuda/nvrtc_child.py), so builds side by side
    are the builds one by one; a search of a hundred kernels of a few seconds each takes a
    fraction of its time on a many-core host. Returns how many kernels were built or found."""
    kernels = {}
    for cand in cands:
        if not cand.verdict:
            for kernel in cand.built.kernels():
                kernels.setdefault(kernel.key, kernel)
    if kernels:
        workers = workers or min(len(kernels), os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(lambda k: _compile_quietly(k, arch), kernels.values()))
    return len(kernels)


def compile_check(cands: list[Candidate], arch: str, progress: Callable[[str], None] | None = None) -> None:
    """Compile each undecided candidate's kernels; reject those that fail or whose kernel spills."""
    if progress:
        progress(f"compiling the candidates' kernels on {os.cpu_count() or 1} processes at most")
    precompile(cands, arch)
    for cand in cands:
        if cand.verdict:
            continue
        if progress:
            progress(f"compiling {cand.kernel}")
        try:
            for kernel in cand.built.kernels():
                module = kernel.compile(arch)
                res = module.resources.get(kernel.entry)
                if kernel == cand.built.kernel:
                    cand.cubin = cubin_digest(module.cubin)
                    if res is not None:
                        cand.registers, cand.spills = res.registers, res.spills
                if res is not None and res.spills:
                    cand.reject("rejected", f"{kernel.label} spills: {res.spill_stores} bytes stored, "
                                            f"{res.spill_loads} bytes loaded")
                    break
        except CompileError as exc:
            first = next((ln for ln in exc.log.splitlines() if "error" in ln.lower()), exc.log[:200])
            cand.reject("rejected", f"does not compile for {arch}: {first}")


def decide(cands: list[Candidate]) -> Candidate | None:
    """The lowest median among the timed; on equal medians the one tried first (min is stable)."""
    timed = [c for c in cands if c.verdict == "timed" and c.median_ms is not None]
    return min(timed, key=lambda c: c.median_ms) if timed else None


class Measure(Protocol):
    """The GPU's part: verification and timing (`GpuMeasure`; the tests give a fake)."""

    def verify(self, cands: list[Candidate], shape: tuple[int, int, int], seed: int) -> None:
        """Mark each undecided candidate that computes a wrong result as failed."""

    def time(self, cands: list[Candidate], shape: tuple[int, int, int], warmup: int, iters: int,
             seed: int, progress: Callable[[str], None] | None) -> dict:
        """Time the undecided candidates with cuBLAS: set times (verdict timed) or fail them;
        return {"cublas_ms": median, "clocks_during_timing": …}."""

    def energy(self, best: Candidate, shape: tuple[int, int, int], seed: int, cublas_ms: float | None) -> dict:
        """Joules per call of the winner and of cuBLAS at `shape` (`measure.energy.per_call`)."""


def iters_for(shape: tuple[int, int, int], iters: int) -> int:
    m, n, k = shape
    return timed_calls((m, n, k), max(iters, MIN_ITERS))


def tune_class(rungs: list[str], cls: ShapeClass, shape: tuple[int, int, int], measure: Measure, arch: str,
               warmup: int, iters: int, seed: int, progress: Callable[[str], None] | None = None) -> dict:
    """One class's entry of the record."""
    cands, notes = plan(rungs, shape)
    compile_check(cands, arch, progress)
    measure.verify(cands, shape, seed)
    n_iters = iters_for(shape, iters)
    timing = {"cublas_ms": None, "clocks_during_timing": None}
    if any(not c.verdict for c in cands):
        timing = measure.time(cands, shape, warmup, n_iters, seed + 2, progress)
    for c in cands:
        if c.verdict == "timed" and c.times_ms:
            c.median_ms = statistics.median(c.times_ms)
            c.ratio_vs_cublas = timing["cublas_ms"] / c.median_ms if timing["cublas_ms"] else None
    best = decide(cands)
    # What the record installs is also what its energy figure is of: the winner and cuBLAS only
    # (a block is half a second; every candidate would double a tune's time).
    energy = measure.energy(best, shape, seed + 3, timing["cublas_ms"]) if best else None
    return {"shape": list(shape), "iters": n_iters, "warmup": warmup, "seed": seed,
            "cublas_ms": timing["cublas_ms"], "clocks_during_timing": timing["clocks_during_timing"],
            "notes": notes, "candidates": [c.to_dict() for c in cands],
            "winner": best.winner() if best else None, "energy": energy}


def steps_for(rungs: list[str], shapes: dict[ShapeClass, tuple[int, int, int]], iters: int) -> int:
    """How many progress steps a run takes (compiles, verifications, warm-ups, timed rounds)."""
    total = 0
    for shape in shapes.values():
        n = len(plan(rungs, shape)[0])
        total += 2 * n + n + 1 + iters_for(shape, iters)
    return total


def tune(rungs: list[str], shapes: dict[ShapeClass, tuple[int, int, int]], measure: Measure, arch: str,
         gpu: dict, versions: dict, commit: str, warmup: int = 5, iters: int = MIN_ITERS, seed: int = 0,
         progress: Callable[[str], None] | None = None, clocks: Callable[[], dict] | None = None) -> dict:
    """The whole record: every class of `shapes`, in `CLASSES` order."""
    classes = {}
    for i, cls in enumerate(c for c in CLASSES if c in shapes):
        if progress:
            progress(f"{cls.key}: {'×'.join(map(str, shapes[cls]))}")
        classes[cls.key] = tune_class(rungs, cls, shapes[cls], measure, arch, warmup, iters,
                                      seed + 16 * i, progress)
    return {"schema": SCHEMA, "kind": KIND, "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "commit": commit, "versions": versions, "gpu": gpu | {"slug": slug(gpu["name"])},
            "arch": arch, "rungs": list(rungs), "warmup": warmup, "min_iters": iters, "seed": seed,
            "tie_break": TIE_BREAK, "clocks_during_timing": clocks() if clocks else None,
            "classes": classes}


def solver_of(cand: Candidate):
    """The candidate alone, through its rung's host lifecycle (its precondition was checked in `plan`)."""
    from ..cuda.dispatch import CudaSolver

    return CudaSolver((dataclasses.replace(cand.built, when=None),))


class GpuMeasure:
    """Verification and timing on the current CUDA GPU, with the judge's and the benchmark's code."""

    def verify(self, cands, shape, seed) -> None:
        import torch

        from ..judge.cases import Case
        from ..judge.runner import run_case
        from ..reference import Precision

        device = torch.device("cuda")
        cc = torch.cuda.get_device_capability()
        case = Case(f"tune-{'x'.join(map(str, shape))}", "tune", shape)
        for cand in cands:
            if cand.verdict:
                continue
            if not cand.built.all_needs.runs_on(cc):
                cand.reject("rejected", f"needs {cand.built.all_needs.short}, the GPU is sm_{cc[0]}{cc[1]}")
                continue
            r = run_case(solver_of(cand), Precision.FP32, case, seed, device)
            if not r.passed:
                cand.reject("failed", f"verification: {r.reason}")
            elif r.figures and r.figures.leetgpu_violations:
                cand.reject("failed", f"verification: {r.figures.leetgpu_violations} elements outside "
                                      "LeetGPU's check against cuBLAS FP32 (1e-4 + 1e-4·|T|)")

    def time(self, cands, shape, warmup, iters, seed, progress) -> dict:
        import torch

        from ..measure import device as device_info
        from ..measure.inputs import timing_operands
        from ..measure.timing import is_small, time_interleaved
        from ..reference import (
            Precision,
            error_figures,
            references,
            strict_fp32,
            verdict,
        )

        m, n, k = shape
        device = torch.device("cuda")
        a, b = timing_operands(shape, seed, device)
        live = {c.key: c for c in cands if not c.verdict}
        calls: dict = {"cublas": None}
        outs = {key: torch.empty((m, k), device=device) for key in ["cublas", *live]}
        calls["cublas"] = lambda: torch.matmul(a, b, out=outs["cublas"])
        for key, cand in live.items():
            solver = solver_of(cand)
            calls[key] = lambda s=solver, c=outs[key]: s(a, b, c, m, n, k)
        with strict_fp32(), device_info.ClockSampler(torch.cuda.current_device()) as sampler:
            times, errors = time_interleaved(calls, outs, warmup, iters, gpu=True, progress=progress,
                                             queue_ahead=is_small(shape))
        refs = references(a, b)
        for key, cand in live.items():
            if key in errors:
                cand.reject("failed", f"raised while timed: {errors[key]}")
                continue
            ok, reason = verdict(error_figures(outs[key], *refs), Precision.FP32)
            if not ok:
                cand.reject("failed", f"the timed calls wrote a wrong result: {reason}")
                continue
            cand.verdict, cand.reason, cand.times_ms = "timed", "ok", times[key]
        cublas = times.get("cublas")
        return {"cublas_ms": statistics.median(cublas) if cublas else None,
                "clocks_during_timing": sampler.summary()}

    def energy(self, best, shape, seed, cublas_ms) -> dict:
        import torch

        from .. import problem
        from ..measure import energy
        from ..measure.inputs import timing_operands
        from ..reference import strict_fp32

        m, n, k = shape
        a, b = timing_operands(shape, seed, torch.device("cuda"))
        c, ref = torch.empty((m, k), device="cuda"), torch.empty((m, k), device="cuda")
        solver = solver_of(best)
        calls = {"winner": lambda: solver(a, b, c, m, n, k), "cublas": lambda: torch.matmul(a, b, out=ref)}
        with strict_fp32():
            figures = energy.per_call(calls, {"winner": best.median_ms, "cublas": cublas_ms or best.median_ms}, 2)
        flop = problem.flops(m, n, k)
        for f in figures.values():
            f["tflop_per_j"] = energy.tflop_per_joule(flop, f.get("joules_per_call"))
        w, cb = figures["winner"].get("tflop_per_j"), figures["cublas"].get("tflop_per_j")
        return figures | {"ratio_tflop_per_j_vs_cublas": w / cb if w and cb else None}
