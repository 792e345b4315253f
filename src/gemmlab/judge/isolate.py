"""Judge a user's file in a child process, so a crash or a hang is a verdict, not our crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .child import PREFIX


@dataclass
class Verdict:
    file: str
    passed: bool = False
    framework: str | None = None
    seed: int | None = None
    cases: list[dict] = field(default_factory=list)
    timing: dict | None = None
    recheck: dict | None = None
    failure: str = ""  # why the child did not finish: crash, hang, load error
    log: str = ""


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


def judge_file(
    path: Path,
    framework: str | None = None,
    precision: str = "fp32",
    seed: int | None = None,
    perf: bool = True,
    groups: list[str] | None = None,
    timeout: float = 300.0,
    time_shape: tuple[int, int, int] | None = None,
    iters: int = 10,
    on_event: Callable[[dict], None] | None = None,
    env: dict[str, str] | None = None,
    wrapper: list[str] | None = None,
) -> Verdict:
    cmd = [sys.executable, "-m", "gemmlab.judge.child", str(path), "--precision", precision,
           "--iters", str(iters)]
    if framework:
        cmd += ["--framework", framework]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if not perf:
        cmd.append("--no-perf")
    if groups:
        cmd += ["--groups", ",".join(groups)]
    if time_shape:
        cmd += ["--time-shape", *map(str, time_shape)]
    verdict = Verdict(str(path))
    proc = subprocess.Popen((wrapper or []) + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **(env or {})}, start_new_session=True)
    stderr_chunks: list[str] = []
    reader = threading.Thread(target=lambda: stderr_chunks.append(proc.stderr.read()), daemon=True)
    reader.start()
    other: list[str] = []
    timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
    timer.start()
    done = False
    try:
        for line in proc.stdout:
            if not line.startswith(PREFIX):
                other.append(line)
                continue
            event = json.loads(line[len(PREFIX):])
            if on_event:
                on_event(event)
            kind = event.pop("kind")
            if kind == "start":
                verdict.framework, verdict.seed = event["framework"], event["seed"]
            elif kind == "case":
                verdict.cases.append(event)
            elif kind == "timing":
                verdict.timing = event
            elif kind == "recheck":
                verdict.recheck = event
            elif kind == "error":
                verdict.failure = event["message"]
            elif kind == "done":
                done = True
                verdict.passed = bool(event["passed"])
        proc.wait()
    finally:
        timed_out = not timer.is_alive() and proc.returncode not in (0, None) and not done
        timer.cancel()
    reader.join(timeout=5)
    err = "".join(stderr_chunks)
    verdict.log = ("".join(other) + err)[-20000:]
    if not done:
        verdict.passed = False
        if timed_out:
            verdict.failure = f"time limit: no verdict after {timeout:g} s (killed)"
        else:
            tail = err.strip().splitlines()[-12:]
            verdict.failure = f"the solution's process {_describe_exit(proc.returncode)}" + (
                ":\n" + "\n".join(tail) if tail else "")
    elif not verdict.failure and verdict.recheck and not verdict.recheck["passed"]:
        verdict.failure = "wrong on fresh inputs after the timed runs: " + verdict.recheck["reason"]
    return verdict
