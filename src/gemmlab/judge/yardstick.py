"""The judge's yardstick: the same harness in a process that runs no code of the solution's.

It loads `baseline_solution` (torch.matmul in strict FP32) and serves two
measurements the solution must not be able to touch:

* **the harness's overhead**, per call at the timing shape, from calls that
  skip ``solve``: taken before the solution is loaded (its process exists,
  blocked in the harness, having run none of the solution's code), so no
  solution can pad it and so widen the timing cross-check;
* **on the CPU, the baseline**: torch.matmul timed through the same harness,
  with the same clock and overhead as the solution, after the solution's whole
  process tree is gone (a busy leftover of the solution's cannot slow it).

It is exempt from the solution's process tree (`procs.EXEMPT`), so the walks
that end the solution's processes leave it alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from ..provenance import python_env
from ..reference import Precision
from .arena import capacity
from .limits import Limits
from .remote import CannotShare, RemoteSolve
from .session import Fault
from .timing import TimedRun, batch, judge_clock_figures, overhead_of

#: Calls that skip solve, to measure what the harness itself costs per call.
NULL_CALLS = 5
BASELINE_FILE = Path(__file__).with_name("baseline_solution.py")


def harness_cmd(path: Path, framework: str, lib: str | None = None, wrapper: list[str] | None = None) -> list[str]:
    """The command that runs a solution file in the judge's child harness (under `wrapper`)."""
    return [*(wrapper or []), sys.executable, "-m", "gemmlab.judge.child", "--file", str(path.resolve()),
            "--framework", framework, *(["--library", lib] if lib else []), *(["--staged"] if wrapper else [])]


def harness_env(framework: str, env: dict[str, str] | None) -> dict[str, str]:
    out = python_env(env)  # the child imports gemmlab from where this process found it
    if framework == "jax":
        out.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    return out


class Yardstick:
    def __init__(self, device: torch.device, limits: Limits, shape: tuple[int, int, int]):
        self.shape = shape
        self.overhead: float | None = None
        self.remote = RemoteSolve(harness_cmd(BASELINE_FILE, "torch"), harness_env("torch", None), limits,
                                  device, capacity([shape]))

    def calibrate(self, seed: int) -> float | str:
        """The harness's overhead in ms, or why the yardstick could not measure it."""
        try:
            loaded = self.remote.load()
        except CannotShare as exc:
            return str(exc)
        if loaded is not None:
            return loaded.message if isinstance(loaded, Fault) else loaded
        measured = overhead_of(self.remote, self.shape, NULL_CALLS, seed)
        if isinstance(measured, float):
            self.overhead = measured
        return measured

    def baseline(self, warmup: int, iters: int, seed: int) -> list[float] | str:
        """On the CPU: torch.matmul's figures (ms), as the solution's were taken; or why there are none."""
        run = TimedRun()
        _, walls = batch(self.remote, self.shape, warmup, iters, seed, Precision.FP32, run)
        if run.failure:
            return run.failure
        return judge_clock_figures(walls, self.overhead or 0.0)

    def close(self) -> None:
        self.remote.close(polite=True)
