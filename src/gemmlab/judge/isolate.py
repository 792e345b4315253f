"""`gemmlab judge`: a user's file judged from a process that runs none of its code.

The trust boundary: the solution runs in a child process (`judge.child`) inside
a boundary of its own (`boundary`); this process makes the inputs, keeps their
pristine copies, computes the float64 reference, reads what the solution wrote
and the guards around it, and decides. What the child prints is its output,
never protocol. Every call has a deadline, the child's whole process tree is
watched for memory and process count and ended at the verdict, and nothing it
sends can crash the judge.

The order of one judgement: the yardstick (`yardstick`) and the solution's
process start side by side; the yardstick measures the harness's overhead
while the solution's process waits, not yet loaded; then the solution loads,
is judged on every case and timed; then its whole process tree is ended, and
only then is the baseline timed.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .. import problem, runtime
from ..exits import CannotRun, Exit, UsageError
from ..precision import given as given_precision
from ..reference import Precision
from . import procs
from .arena import capacity
from .cases import GROUPS, Case, fresh_seed, standard_cases
from .hygiene import ClockRecord, cpu_floor, impossible, l2_note
from .limits import LOAD_EXTRA_S, MEMORY_FLOOR_BYTES, SANITIZER_FACTOR, Limits
from .remote import CannotShare, RemoteSolve
from .runner import CaseResult
from .timing import TimedRun, add_baseline, baseline_name, in_process_baseline, timed_run
from .tracebacks import last_line
from .userfile import (
    FRAMEWORKS,
    SOLUTION_SUFFIXES,
    SUFFIXES,
    SolutionError,
    build_cuda,
    build_mojo,
    detect_framework,
    detected_framework,
    framework_missing,
    nvcc_path,
)
from .yardstick import Yardstick, harness_cmd, harness_env

#: nvcc flags that choose the target; with none of them nvcc builds for its own default.
TARGET_FLAGS = ("-arch", "--gpu-architecture", "-gencode", "--generate-code", "-code", "--gpu-code")
#: Timed calls on the CPU: small, so Triton's interpreter stays quick (the figures are CPU figures).
CPU_TIME_SHAPE = (128, 128, 128)


@dataclass
class Verdict:
    file: str
    passed: bool = False
    framework: str | None = None  # what the file was detected as (or was told): "unknown" if nothing
    seed: int | None = None
    device: str = ""
    build: str = ""  # for a .cu: the nvcc flags it was built with
    cases: list[dict] = field(default_factory=list)
    timing: dict | None = None
    failure: str = ""  # the first reason it was rejected
    cannot_run: str = ""  # why it could not be judged here
    errors: list[dict] = field(default_factory=list)  # each distinct error the solution raised, once
    notes: list[str] = field(default_factory=list)  # what the judge saw and did, beside the verdict
    log: str = ""  # the solution's own output (stdout and stderr), its tail
    killed: int = 0  # processes the solution left running at the verdict, ended by the judge
    memory_peak: int = 0
    sandbox: dict[str, str] = field(default_factory=dict)  # each layer: "on", or why it was off

    @property
    def exit_code(self) -> Exit:
        if self.cannot_run:
            return Exit.CANNOT_RUN
        return Exit.PASSED if self.passed else Exit.FAILED

    def add_error(self, case: str, traceback: str) -> None:
        """One raised error; the same error again (the same frames and exception type, whatever its
        message says about this case's shape) only adds its case."""
        key = _error_key(traceback)
        for e in self.errors:
            if _error_key(e["traceback"]) == key:
                e["cases"].append(case)
                return
        self.errors.append({"cases": [case], "traceback": traceback})


def _error_key(traceback: str) -> tuple[str, str]:
    """A traceback without its message: where it was raised, and what."""
    head, _, last = traceback.rstrip().rpartition("\n")
    return head, last.split(":", 1)[0]


@dataclass(frozen=True)
class Request:
    """A checked request: what `check_usage` returns."""

    framework: str  # the harness to run it with
    label: str  # what to call it: detected, given, or "unknown"
    precision: Precision
    nvcc_flags: list[str] | None  # None: the default target


def check_usage(path: Path, framework: str | None, precision: str, groups: list[str] | None,
                timeout: float | None, memory_limit: int | None, nvcc_flags: str | None = None) -> Request:
    """The request, or `UsageError` with a one-line reason."""
    try:
        there = path.exists()
    except PermissionError:  # a folder on the way this user may not search
        raise UsageError(f"cannot reach {path}: permission denied") from None
    if not there:
        raise UsageError(f"no such file: {path}")
    if not path.is_file():
        raise UsageError(f"{path} is not a file (give a .cu, .mojo or .py solution)")
    if not os.access(path, os.R_OK):
        raise UsageError(f"cannot read {path}: permission denied")
    if framework is not None and framework not in FRAMEWORKS:
        raise UsageError(f"unknown framework {framework!r}; known: {', '.join(FRAMEWORKS)}")
    if framework is None and path.suffix not in SOLUTION_SUFFIXES:
        raise UsageError(f"cannot tell the format of {path.name}: name it .cu, .mojo or .py, or pass --framework")
    label = framework or detected_framework(path) or "unknown"
    framework = framework or detect_framework(path)
    for own, suffix in SUFFIXES.items():
        if (framework == own) != (path.suffix == suffix):
            title = {"cuda": "CUDA", "mojo": "Mojo"}[own]
            raise UsageError(f"--framework {framework} does not fit {path.name}: {title} solutions are "
                             f"{suffix} files")
    given_precision(precision)
    unknown = [g for g in groups or [] if g not in GROUPS]
    if unknown:
        raise UsageError(f"unknown group {unknown[0]!r}; known: {', '.join(GROUPS)}")
    if timeout is not None and not timeout > 0:
        raise UsageError(f"--timeout must be more than 0 seconds, got {timeout:g}")
    if memory_limit is not None and not memory_limit >= MEMORY_FLOOR_BYTES:
        raise UsageError(f"--memory-limit must be at least {MEMORY_FLOOR_BYTES / (1 << 30):g} GiB, "
                         "what a solution's Python and its framework need to start")
    flags = None
    if nvcc_flags is not None:
        if framework != "cuda":
            raise UsageError(f"--nvcc-flags builds CUDA solutions, and {path.name} is not a .cu file")
        try:
            flags = shlex.split(nvcc_flags)
        except ValueError as exc:
            raise UsageError(f"--nvcc-flags {nvcc_flags!r}: {exc}") from None
        if any(f in ("-o", "--output-file") or f.startswith(("-o=", "--output-file=")) for f in flags):
            raise UsageError("--nvcc-flags cannot name the output file: the judge builds the library itself")
    return Request(framework, label, Precision(precision), flags)


def _build(path: Path, request: Request, verdict: Verdict) -> str | None:
    """The built library of a .cu or .mojo (None for Python); sets `cannot_run` or `failure` when
    there is none."""
    missing = framework_missing(request.framework)
    if missing:
        verdict.cannot_run = missing
        return None
    if request.framework in ("cute", "tilelang") and not runtime.has_gpu():
        _check_without_gpu(path, request.framework, verdict)
        return None
    if request.framework not in ("cuda", "mojo"):
        return None
    from ..cuda.compiler import HOPPER_ARCH, device_arch

    gpu = runtime.has_gpu()
    # Without a GPU, still compile (for Hopper), so a compile error is a verdict with the compiler's log.
    arch = device_arch() if gpu else HOPPER_ARCH
    if request.framework == "mojo":
        verdict.build = f"mojo build --emit shared-lib --target-accelerator {arch}"
        try:
            lib = build_mojo(path, arch)
        except SolutionError as exc:
            verdict.failure = str(exc)
            return None
    else:
        lib = _build_cuda(path, request, verdict, arch, gpu)
        if lib is None:
            return None
    if not gpu:
        done = "builds" if request.framework == "mojo" else "compiles"
        verdict.cannot_run = f"{path.name} {done} ({verdict.build}), but there is no CUDA GPU here to run it on"
        return None
    return str(lib)


def _build_cuda(path: Path, request: Request, verdict: Verdict, arch: str, gpu: bool) -> Path | None:
    """nvcc's library of a .cu that defines solve; sets `cannot_run` or `failure` when there is none."""
    from ..cuda.compiler import cache_folder
    from .userfile import names_native, nvcc_flags

    flags = nvcc_flags(arch, request.nvcc_flags)
    verdict.build = "nvcc " + shlex.join(flags)
    if not any(f.startswith(TARGET_FLAGS) for f in flags):
        verdict.build += " (nvcc's default target)"
    elif names_native(request.nvcc_flags):
        verdict.build += " (-arch=native: the GPU " + ("here" if gpu else "of Hopper, with no GPU here") + ")"
    try:
        nvcc_path()
        lib = build_cuda(path, arch, cache_folder("user"), request.nvcc_flags)
    except CannotRun as exc:
        verdict.cannot_run = str(exc)
        return None
    except SolutionError as exc:
        if "nvcc not found" in str(exc):
            verdict.cannot_run = str(exc)
        else:
            verdict.failure = str(exc)
        return None
    from ..cuda.cubin import defined_functions

    if "solve" not in defined_functions(Path(lib).read_bytes()):
        verdict.failure = (f'{path.name} compiles, but defines no extern "C" solve(...): LeetGPU calls '
                           f'extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K)')
        return None
    return lib


def _check_without_gpu(path: Path, framework: str, verdict: Verdict) -> None:
    """A CuTe DSL or TileLang file on a machine without a GPU: what can be checked here is checked
    in a process of its own (the solution's code never runs in this one), then `cannot_run`."""
    from .langcheck import check_file

    ok, message = check_file(path, framework)
    if not ok:
        verdict.failure = message
        return
    verdict.build = message
    verdict.cannot_run = f"{path.name}: {message}, but there is no CUDA GPU here to run it on"


def _cases(seed: int, perf: bool, groups: list[str] | None) -> list[tuple[Case, int]]:
    """(case, seed) pairs in order; case i draws from seed + 2·i, as in `gemmlab check`."""
    cases = [(c, seed + 2 * i) for i, c in enumerate(standard_cases(seed, perf=perf))]
    return [(c, s) for c, s in cases if not groups or c.group in groups]


def _judge_cases(remote: RemoteSolve, yard: Yardstick | None, verdict: Verdict,
                 cases: list[tuple[Case, int]], precision: Precision,
                 say: Callable[[str], None]) -> tuple[bool, float | None]:
    """Start, calibrate, load, judge every case. (whether the child is healthy, the overhead);
    ``verdict.failure`` or ``cannot_run`` set when it goes no further."""
    say("starting the solution's process")
    fault = remote.connect()
    if fault:
        verdict.failure = fault.message
        return False, None
    overhead = None
    if yard is not None:
        say("measuring the harness's own cost, before the solution loads")
        measured = yard.calibrate(verdict.seed + 999)
        if isinstance(measured, str):
            verdict.cannot_run = f"the judge's yardstick process could not measure the harness: {measured}"
            return False, None
        overhead = measured
    say("loading the solution")
    loaded = remote.load()
    if isinstance(loaded, str):
        verdict.failure = "could not load the solution: " + last_line(loaded)
        verdict.add_error("loading", loaded)
        return True, overhead
    if loaded is not None:
        verdict.failure = f"while loading the solution: {loaded.message}"
        return False, overhead
    for case, seed in cases:
        if case.gpu_only and remote.device.type != "cuda":
            verdict.cases.append(CaseResult(case.name, case.group, case.shape, seed, "skip",
                                            "needs a GPU").to_dict())
            continue
        say(f"case {case.name}")
        out = remote.call(case, seed, precision)
        if out.fault:
            verdict.failure = f"{case.name}: {out.fault.message}"
            return False, overhead
        verdict.cases.append(out.result.to_dict())
        if out.traceback:
            verdict.add_error(case.name, out.traceback)
    failed = [c for c in verdict.cases if c["status"] in ("fail", "error")]
    if failed:
        verdict.failure = f"{failed[0]['case']}: {failed[0]['reason']}"
    elif verdict.cases and all(c["status"] == "skip" for c in verdict.cases):
        # A verdict rests on cases that ran: timed calls alone are not a judgement.
        reasons = "; ".join(sorted({c["reason"] for c in verdict.cases}))
        verdict.cannot_run = f"no case ran here ({reasons})"
    return True, overhead


def _timed(remote: RemoteSolve, verdict: Verdict, precision: Precision, shape: tuple[int, int, int],
           warmup: int, iters: int, overhead: float | None) -> tuple[bool, TimedRun]:
    """The solution's timed calls; (whether the child is healthy, the run)."""
    gpu = remote.device.type == "cuda" and overhead is not None
    record = ClockRecord() if gpu else None
    # The timed inputs come from a seed of their own that the solution cannot learn: --seed is on the
    # judge's command line, which /proc shows every process, and inputs it foretells can be
    # answered from a table computed while loading (a faked speed that passes every check).
    inputs_seed = fresh_seed()
    with record if record is not None else contextlib.nullcontext():
        run = timed_run(remote, shape, warmup, iters, inputs_seed, precision, overhead)
    if run.timing is not None:
        run.timing["inputs_seed"] = inputs_seed
    if run.results and not run.results[-1].passed:
        verdict.cases.append(run.results[-1].to_dict())
    if run.failure:
        verdict.failure = run.failure
        return run.timing is not None or bool(run.results), run
    if run.withheld:
        verdict.notes.append(run.withheld)
    if "disagreement" in run.notes:
        verdict.notes.append(f"{run.notes['disagreement']} (on the CPU the figure is the judge's own clock; "
                             f"a busy machine shows this too)")
    if run.timing is not None and (record is not None or remote.device.type == "cpu"):
        try:
            floor = record.floor(shape) if record is not None else cpu_floor(shape)
        except Exception as exc:  # the device's figures unreadable here: say so, judge the rest
            verdict.notes.append(f"no FP32 FMA floor checked: the device's figures could not be read ({exc})")
        else:
            run.timing["fma_floor"] = floor
            if record is None:
                _no_rate_below(run.timing, floor, verdict)
            elif precision == Precision.FP32:
                verdict.failure = impossible(min(run.timing["times_ms"]), floor)
    if not verdict.failure and remote.session.pending():
        verdict.failure = "protocol violation: the solution's process sent messages nobody asked for"
        return False, run
    return True, run


def _no_rate_below(timing: dict, floor: dict, verdict: Verdict) -> None:
    """On the CPU a median below what the CPUs can compute is no rate: a call's figure there is the
    judge's clock less the harness's overhead, which a busy machine jitters (a right solution must not
    be rejected for it) and a process working beside the harness's round trip can shave. No rate and
    no ratio are given, and the verdict says why."""
    if timing["median_ms"] >= floor["floor_ms"]:
        return
    timing["tflops"] = None
    verdict.notes.append(f"no rate given: the median, {timing['median_ms']:.4f} ms, is below what the CPUs "
                         f"could compute ({floor['floor_ms']:.4f} ms: {floor['what']}); on the CPU the figure "
                         f"is the judge's clock less the harness's overhead, which a busy machine jitters and "
                         f"work beside the harness's round trip shaves")


@dataclass
class PreparedRun:
    """A checked request and what was built for it; `verdict` already says if it can go no further."""

    path: Path
    request: Request
    verdict: Verdict
    lib: str | None

    @property
    def stopped(self) -> bool:
        return bool(self.verdict.cannot_run or self.verdict.failure)


def prepare(path: Path, framework: str | None = None, precision: str = "fp32", seed: int | None = None,
            groups: list[str] | None = None, timeout: float | None = None, memory_limit: int | None = None,
            nvcc_flags: str | None = None) -> PreparedRun:
    """Check the request (`UsageError`) and build a .cu: everything before the solution runs."""
    path = Path(path)
    request = check_usage(path, framework, precision, groups, timeout, memory_limit, nvcc_flags)
    verdict = Verdict(str(path), framework=request.label, seed=fresh_seed() if seed is None else seed,
                      device=runtime.gpu_name())
    if not sys.platform.startswith("linux"):
        verdict.cannot_run = "the judge needs Linux (/proc, prctl) to contain a solution's processes"
        return PreparedRun(path, request, verdict, None)
    return PreparedRun(path, request, verdict, _build(path, request, verdict))


def judge_file(
    path: Path,
    framework: str | None = None,
    precision: str = "fp32",
    seed: int | None = None,
    perf: bool = True,
    groups: list[str] | None = None,
    timeout: float | None = None,
    time_shape: tuple[int, int, int] | None = None,
    iters: int = 10,
    warmup: int = 5,
    memory_limit: int | None = None,
    on_event: Callable[[str], None] | None = None,
    env: dict[str, str] | None = None,
    wrapper: list[str] | None = None,
    nvcc_flags: str | None = None,
    process_limit: int | None = None,
    file_limit: int | None = None,
    disk_limit: int | None = None,
) -> Verdict:
    """Judge a solution file. `UsageError` for a mistake in the request; otherwise a verdict, always.

    ``timeout`` replaces every call's derived budget (seconds); ``memory_limit``
    is in bytes (default: `limits.default_memory_bytes`); ``wrapper`` runs the
    child under a tool such as compute-sanitizer (buffers then staged into
    exactly sized private copies, budgets stretched, no timing figures);
    ``nvcc_flags`` builds a .cu with these flags instead of the default target;
    ``process_limit``, ``file_limit`` and ``disk_limit`` (bytes) replace `limits`' defaults.
    """
    plan = prepare(path, framework, precision, seed, groups, timeout, memory_limit, nvcc_flags)
    if plan.stopped:
        return plan.verdict
    device = runtime.default_device()
    shape = tuple(time_shape) if time_shape else (problem.PERF_SHAPE if device.type == "cuda" else CPU_TIME_SHAPE)
    extra = {k: v for k, v in (("processes", process_limit), ("file_bytes", file_limit), ("disk_bytes", disk_limit))
             if v is not None}
    limits = Limits(device.type, timeout, memory_limit, slow=SANITIZER_FACTOR if wrapper else 1.0,
                    load_extra_s=LOAD_EXTRA_S.get(plan.request.framework, 0.0), **extra)
    was_reaper = procs.set_subreaper(True)
    try:
        _judge(plan, device, _cases(plan.verdict.seed, perf, groups), shape, limits, warmup, iters,
               on_event or (lambda _: None), env, wrapper)
    finally:
        procs.set_subreaper(was_reaper)
    return plan.verdict


def _judge(plan: PreparedRun, device: torch.device, cases: list[tuple[Case, int]], shape: tuple[int, int, int],
           limits: Limits, warmup: int, iters: int, say: Callable[[str], None], env: dict[str, str] | None,
           wrapper: list[str] | None) -> None:
    verdict, precision = plan.verdict, plan.request.precision
    # Under a wrapper the judge shares host memory only (see child.py: staged).
    harness_device = torch.device("cpu") if wrapper else device
    shapes = [c.shape for c, _ in cases if device.type == "cuda" or not c.gpu_only] + [shape]
    yard = remote = run = None
    try:
        try:
            if not wrapper and iters > 0:
                yard = Yardstick(harness_device, Limits(device.type), shape)
            remote = RemoteSolve(harness_cmd(plan.path, plan.request.framework, plan.lib, wrapper),
                                 harness_env(plan.request.framework, env), limits, harness_device,
                                 capacity(shapes), readable=[Path(p) for p in (plan.path, plan.lib) if p],
                                 tool=wrapper is not None)
            verdict.sandbox = remote.session.sandbox.layers
            healthy, overhead = _judge_cases(remote, yard, verdict, cases, precision, say)
            if healthy and not verdict.failure and not verdict.cannot_run and iters > 0:
                say(f"timed calls at {'×'.join(map(str, shape))}, each one checked")
                healthy, run = _timed(remote, verdict, precision, shape, warmup, iters, overhead)
        except CannotShare as exc:
            verdict.cannot_run = str(exc)
            healthy = False
        if remote is not None:
            say("ending the solution's processes")
            _close_solution(remote, verdict, healthy)
        if run is not None and run.timing is not None and not verdict.cannot_run:
            say("timing the baseline, the solution's processes all ended")
            _baseline(run.timing, yard, harness_device, wrapper is not None, warmup, iters, verdict)
            note = l2_note(run.timing.get("l2", {}))
            if note:
                verdict.notes.append(note)
            verdict.timing = run.timing
        verdict.passed = not (verdict.failure or verdict.cannot_run) and bool(verdict.cases or verdict.timing)
    finally:
        if remote is not None:
            remote.close(polite=False)  # only where an error skipped `_close_solution`
        if yard is not None:
            yard.close()


def _close_solution(remote: RemoteSolve, verdict: Verdict, polite: bool) -> None:
    verdict.killed = remote.close(polite=polite)
    verdict.log = remote.session.output.text()
    verdict.memory_peak = remote.session.memory_peak
    if verdict.killed:
        verdict.notes.append(f"ended {verdict.killed} process{'es' if verdict.killed != 1 else ''} the "
                             f"solution started and left running")
    if not remote.session.gone:
        verdict.notes.append("some of the solution's processes could not be ended (stuck in the kernel?)")
    refused = remote.session.boundary.forks_refused()
    if refused:
        verdict.notes.append(f"the judge's cgroup refused {refused} of the solution's forks (pids.max)")


def _baseline(timing: dict, yard: Yardstick | None, device: torch.device, wrapped: bool, warmup: int,
              iters: int, verdict: Verdict) -> None:
    """torch.matmul beside the solution's figure, timed now that the solution's processes are gone."""
    if wrapped:
        timing["method"] += " (under a wrapper tool: not a timing)"
        return
    shape = tuple(timing["shape"])
    if device.type == "cuda":
        name, base_ms = in_process_baseline(shape, device, warmup, iters, verdict.seed + 7919)
        add_baseline(timing, name, base_ms)
        return
    times = yard.baseline(warmup, iters, verdict.seed + 7919) if yard is not None else "no yardstick"
    if isinstance(times, str):
        verdict.notes.append(f"no baseline: the yardstick's torch.matmul failed ({times})")
        return
    from ..measure.timing import summarize

    add_baseline(timing, baseline_name(False), summarize(times)["median_ms"])
