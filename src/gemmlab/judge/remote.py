"""One call of the solution, judged from the trusted side.

For every call the judge draws the inputs from the seed in its own memory,
writes them into the shared buffers, poisons C and the snapshot, and asks the
child to call ``solve``. When the child answers, the judge copies the buffers
out and judges them with `runner.assess`, the same code `gemmlab check` uses:
the reference comes from the judge's pristine inputs, A and B are compared
bit for bit, and C after the device wait must equal the snapshot taken when
``solve`` returned.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from ..reference import Precision, poison_
from .arena import Arena, layout, layout_views
from .cases import Case, make_inputs
from .limits import Limits
from .protocol import printable
from .runner import CaseResult, assess
from .session import Fault, Session


class CannotShare(RuntimeError):
    """This machine cannot share the buffers with a child process (CUDA IPC unavailable)."""


@dataclass
class Outcome:
    result: CaseResult | None = None
    fault: Fault | None = None
    ms: float | None = None  # what the child reported
    wall_ms: float = 0.0  # what the judge measured around the request


@contextlib.contextmanager
def _judge_threads(device: torch.device):
    """On the CPU, the judge's own small products on one thread: idle OpenMP workers of
    this process would otherwise spin on the cores the solution is being timed on."""
    if device.type != "cpu":
        yield
        return
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class RemoteSolve:
    def __init__(self, cmd: list[str], env: dict[str, str], limits: Limits, device: torch.device,
                 floats: int, folder: Path):
        self.device = device
        self.limits = limits
        self.arena = Arena(floats, device, folder)
        self.session = Session(cmd, env, limits, folder)
        self.seq = 0
        self.first = True

    def load(self) -> Fault | str | None:
        """Connect, share the buffers, wait for the module to load: a fault, a load error, or None."""
        deadline = time.monotonic() + self.limits.load_s()
        fault = self.session.connect(deadline)
        if fault is None:
            try:
                handle = self.arena.handle()
            except (RuntimeError, OSError) as exc:  # CUDA IPC refused here: the judge's limit, not the solution's
                raise CannotShare(f"cannot share buffers with the solution's process: {exc}") from None
            fault = self.session.send({"arena": handle})
        if fault is None:
            reply = self.session.receive(deadline)
            if isinstance(reply, Fault):
                fault = reply
            elif reply["kind"] == "load_error":
                return "could not load the solution: " + printable(reply["message"])
            elif reply["kind"] != "ready":
                fault = Fault("protocol violation", f"protocol violation: {reply['kind']!r} before loading")
        if fault and fault.kind == "time limit":
            fault = Fault(fault.kind, f"time limit: the solution did not load within {self.limits.load_s():g} s")
        return fault

    def call(self, case: Case, seed: int, precision: Precision, null: bool = False) -> Outcome:
        """Inputs in, one solve, the verdict out. `null` skips solve (to measure the harness's overhead)."""
        with _judge_threads(self.device):
            return self._call(case, seed, precision, null)

    def _call(self, case: Case, seed: int, precision: Precision, null: bool) -> Outcome:
        lay = layout(case.shape)
        a_buf, b_buf, c_buf, s_buf = layout_views(self.arena.tensor, lay)
        a, b = make_inputs(case, seed, self.device)
        a_buf.copy_(a)
        b_buf.copy_(b)
        poison_(c_buf)
        poison_(s_buf)
        _sync(self.device)
        self.seq += 1
        budget = self.limits.call_s(case.shape, self.first and not null)
        self.first = self.first and null
        t0, sent = time.monotonic(), time.time()
        reply = self.session.send({"op": "call", "seq": self.seq, "shape": list(case.shape), "null": null,
                                   "offsets": [lay.a, lay.b, lay.c, lay.s]}) or \
            self.session.receive(t0 + budget)
        # From the request to the answer's arrival as the kernel stamped it.
        wall_ms = (self.session.arrival - sent) * 1e3
        if isinstance(reply, Fault):
            if reply.kind == "time limit":
                reply = Fault(reply.kind, f"time limit: no answer within this call's budget of "
                                          f"{budget:.1f} s (the solution's processes were ended)")
            return Outcome(fault=reply, wall_ms=wall_ms)
        if reply["kind"] not in ("returned", "raised") or reply["seq"] != self.seq:
            return Outcome(fault=Fault("protocol violation", "protocol violation: the solution's process "
                                       f"answered call {self.seq} with {reply['kind']} {reply.get('seq')}"),
                           wall_ms=wall_ms)
        base = CaseResult(case.name, case.group, case.shape, seed, "error")
        if reply["kind"] == "raised":
            base.reason = printable(reply["error"], 600)
            return Outcome(result=base, wall_ms=wall_ms)
        base.seconds = reply["ms"] / 1e3
        if null:
            return Outcome(result=base, ms=reply["ms"], wall_ms=wall_ms)
        _sync(self.device)
        # Private copies first: a thread the solution left running cannot change them mid-check.
        after = [t.clone() for t in (a_buf, b_buf, c_buf, s_buf)]
        result = assess(base, case, precision, a, b, after[3], a_after=after[0], b_after=after[1],
                        c_later=after[2])
        return Outcome(result=result, ms=reply["ms"], wall_ms=wall_ms)

    def close(self, polite: bool) -> int:
        return self.session.close(polite)
