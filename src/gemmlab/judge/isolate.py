"""`gemmlab judge`: a user's file judged from a process that runs none of its code.

The trust boundary: the solution runs in a child process (`judge.child`);
this process makes the inputs, keeps their pristine copies, computes the
float64 reference, reads what the solution wrote and decides. What the child
prints is its output, never protocol. Every call has a deadline, the child's
whole process tree is watched for memory and ended at the verdict, and
nothing it sends can crash the judge.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .. import problem, runtime
from ..childenv import python_env
from ..exits import Exit
from ..reference import Precision
from . import procs
from .arena import capacity
from .cases import GROUPS, Case, fresh_seed, standard_cases
from .limits import SANITIZER_FACTOR, Limits
from .remote import CannotShare, RemoteSolve
from .runner import CaseResult
from .timing import timed_run
from .userfile import (
    FRAMEWORKS,
    SolutionError,
    build_cuda,
    detect_framework,
    framework_missing,
    nvcc_path,
)

#: Timed calls on the CPU: small, so Triton's interpreter stays quick (the figures are CPU figures).
CPU_TIME_SHAPE = (128, 128, 128)


class UsageError(ValueError):
    """A mistake in how the judge was asked to run, found before anything runs."""


@dataclass
class Verdict:
    file: str
    passed: bool = False
    framework: str | None = None
    seed: int | None = None
    device: str = ""
    cases: list[dict] = field(default_factory=list)
    timing: dict | None = None
    failure: str = ""  # the first reason it was rejected
    cannot_run: str = ""  # why it could not be judged here
    log: str = ""  # the solution's own output (stdout and stderr), its tail
    killed: int = 0  # processes still running at the verdict, ended by the judge
    memory_peak: int = 0

    @property
    def exit_code(self) -> Exit:
        if self.cannot_run:
            return Exit.CANNOT_RUN
        return Exit.PASSED if self.passed else Exit.FAILED


def check_usage(path: Path, framework: str | None, precision: str, groups: list[str] | None,
                timeout: float | None, memory_limit: int | None) -> tuple[str, Precision]:
    """(framework, precision), or `UsageError` with a one-line reason."""
    if not path.exists():
        raise UsageError(f"no such file: {path}")
    if not path.is_file():
        raise UsageError(f"{path} is not a file (give a .cu or .py solution)")
    if framework is not None and framework not in FRAMEWORKS:
        raise UsageError(f"unknown framework {framework!r}; known: {', '.join(FRAMEWORKS)}")
    if framework is None and path.suffix not in (".cu", ".py"):
        raise UsageError(f"cannot tell the format of {path.name}: name it .cu or .py, or pass --framework")
    framework = framework or detect_framework(path)
    if (framework == "cuda") != (path.suffix == ".cu"):
        raise UsageError(f"--framework {framework} does not fit {path.name}: CUDA solutions are .cu files")
    if precision not in {p.value for p in Precision}:
        raise UsageError(f"unknown precision {precision!r}; known: {', '.join(p.value for p in Precision)}")
    unknown = [g for g in groups or [] if g not in GROUPS]
    if unknown:
        raise UsageError(f"unknown group {unknown[0]!r}; known: {', '.join(GROUPS)}")
    if timeout is not None and not timeout > 0:
        raise UsageError(f"--timeout must be more than 0 seconds, got {timeout:g}")
    if memory_limit is not None and not memory_limit > 0:
        raise UsageError("--memory-limit must be more than 0")
    return framework, Precision(precision)


def _build(path: Path, framework: str, verdict: Verdict) -> str | None:
    """The built library of a .cu (None for Python); sets `cannot_run` or `failure` when there is none."""
    missing = framework_missing(framework)
    if missing:
        verdict.cannot_run = missing
        return None
    if framework != "cuda":
        return None
    from ..cuda.compiler import HOPPER_ARCH, cache_root, device_arch

    try:
        nvcc_path()
        gpu = runtime.has_gpu()
        # Without a GPU, still compile (for Hopper), so a compile error is a verdict with nvcc's log.
        lib = build_cuda(path, device_arch() if gpu else HOPPER_ARCH, cache_root() / "user")
    except SolutionError as exc:
        if "nvcc not found" in str(exc):
            verdict.cannot_run = str(exc)
        else:
            verdict.failure = str(exc)
        return None
    if not gpu:
        verdict.cannot_run = f"{path.name} compiles, but there is no CUDA GPU here to run it on"
        return None
    return str(lib)


def _child_cmd(path: Path, framework: str, lib: str | None = None, wrapper: list[str] | None = None) -> list[str]:
    """The command that runs a solution file in the judge's child harness (under `wrapper`)."""
    return [*(wrapper or []), sys.executable, "-m", "gemmlab.judge.child", "--file", str(path.resolve()),
            "--framework", framework, *(["--library", lib] if lib else []), *(["--staged"] if wrapper else [])]


def _child_env(framework: str, env: dict[str, str] | None) -> dict[str, str]:
    out = python_env(env)  # the child imports gemmlab from where this process found it
    if framework == "jax":
        out.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    return out


def _workspace() -> str:
    shm = "/dev/shm"
    return tempfile.mkdtemp(prefix="gemmlab-judge-",
                            dir=shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None)


def _cases(seed: int, perf: bool, groups: list[str] | None, device_type: str) -> list[tuple[Case, int]]:
    """(case, seed) pairs in order; case i draws from seed + 2·i, as in `gemmlab check`."""
    cases = [(c, seed + 2 * i) for i, c in enumerate(standard_cases(seed, perf=perf))]
    return [(c, s) for c, s in cases if not groups or c.group in groups]


def _run(remote: RemoteSolve, verdict: Verdict, cases: list[tuple[Case, int]], precision: Precision,
         shape: tuple[int, int, int], warmup: int, iters: int,
         say: Callable[[str], None]) -> bool:
    """Load, judge every case, then the timed calls; fill the verdict. False if the child faulted."""
    say("loading the solution")
    loaded = remote.load()
    if isinstance(loaded, str):
        verdict.failure = loaded
        return True
    if loaded is not None:
        verdict.failure = f"while loading the solution: {loaded.message}"
        return False
    for case, seed in cases:
        if case.gpu_only and remote.device.type != "cuda":
            verdict.cases.append(CaseResult(case.name, case.group, case.shape, seed, "skip",
                                            "needs a GPU").to_dict())
            continue
        say(f"case {case.name}")
        out = remote.call(case, seed, precision)
        if out.fault:
            verdict.failure = f"{case.name}: {out.fault.message}"
            return False
        verdict.cases.append(out.result.to_dict())
    failed = [c for c in verdict.cases if c["status"] in ("fail", "error")]
    if failed:
        verdict.failure = f"{failed[0]['case']}: {failed[0]['reason']}"
        return True
    say(f"timed calls at {'×'.join(map(str, shape))}, each one checked")
    run = timed_run(remote, shape, warmup, iters, verdict.seed + 1000, precision,
                    baseline=cpu_baseline if remote.device.type == "cpu" else None)
    verdict.timing = run.timing
    if run.results and not run.results[-1].passed:
        verdict.cases.append(run.results[-1].to_dict())
    if run.failure:
        verdict.failure = run.failure
        return run.timing is not None or bool(run.results)
    if remote.session.pending():
        verdict.failure = "protocol violation: the solution's process sent messages nobody asked for"
        return False
    verdict.passed = True
    return True


def cpu_baseline(remote: RemoteSolve, shape: tuple[int, int, int], warmup: int, iters: int,
                 seed: int) -> list[float]:
    """On the CPU, torch.matmul's times as a solution's are taken: in a child process of its own,
    fresh inputs written by this process before every call, the host clock around `solve`.

    Timed in this process on the same inputs every call, it ran about twice as fast as the very
    same torch.matmul submitted as a solution (0.026 against 0.052 ms at 128³): a comparison of
    two methods, not of two solutions."""
    from ..reference import Precision
    from .timing import measure_calls

    cmd = _child_cmd(Path(__file__).with_name("baseline_solution.py"), "torch")
    folder = _workspace()
    child = None
    try:
        child = RemoteSolve(cmd, _child_env("torch", None), remote.limits, remote.device, capacity([shape]),
                            Path(folder))
        if child.load() is not None:  # it did not load: the in-process figure stands in
            return []
        return measure_calls(child, shape, warmup, iters, seed, Precision.FP32)
    finally:
        if child is not None:
            child.close(polite=True)
        shutil.rmtree(folder, ignore_errors=True)


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
) -> Verdict:
    """Judge a solution file. `UsageError` for a mistake in the request; otherwise a verdict, always.

    ``timeout`` replaces every call's derived budget (seconds); ``memory_limit``
    is in bytes (default: `limits.default_memory_bytes`); ``wrapper`` runs the
    child under a tool such as compute-sanitizer (buffers then staged into
    exactly sized private copies, budgets stretched).
    """
    path = Path(path)
    framework, prec = check_usage(path, framework, precision, groups, timeout, memory_limit)
    verdict = Verdict(str(path), framework=framework, seed=fresh_seed() if seed is None else seed)
    if not sys.platform.startswith("linux"):
        verdict.cannot_run = "the judge needs Linux (/proc, prctl) to contain a solution's processes"
        return verdict
    lib = _build(path, framework, verdict)
    if verdict.cannot_run or verdict.failure:
        return verdict
    device = runtime.default_device()
    verdict.device = runtime.gpu_name()
    cases = _cases(verdict.seed, perf, groups, device.type)
    shape = tuple(time_shape) if time_shape else (problem.PERF_SHAPE if device.type == "cuda" else CPU_TIME_SHAPE)
    limits = Limits(device.type, timeout, memory_limit, slow=SANITIZER_FACTOR if wrapper else 1.0)
    cmd = _child_cmd(path, framework, lib, wrapper)
    shapes = [c.shape for c, _ in cases if device.type == "cuda" or not c.gpu_only] + [shape]
    folder = _workspace()
    was_reaper = procs.set_subreaper(True)
    remote = None
    healthy = False
    try:
        # Under a wrapper the judge shares host memory only (see child.py: staged).
        remote = RemoteSolve(cmd, _child_env(framework, env), limits,
                             torch.device("cpu") if wrapper else device, capacity(shapes), Path(folder))
        try:
            healthy = _run(remote, verdict, cases, prec, shape, warmup, iters, on_event or (lambda _: None))
        except CannotShare as exc:
            verdict.cannot_run = str(exc)
    finally:
        if remote is not None:
            verdict.killed = remote.close(polite=healthy)
            verdict.log = remote.session.output.text()
            verdict.memory_peak = remote.session.memory_peak
        procs.set_subreaper(was_reaper)
        shutil.rmtree(folder, ignore_errors=True)
    return verdict
