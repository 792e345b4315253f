"""One call of the solution, judged from the trusted side.

For every call the judge draws the inputs from the seed in its own memory,
then, on its clock: writes them into the shared buffers, poisons C and the
snapshot, fills every guard with a fresh pattern, and asks the child to call
``solve``. When the child answers, the judge copies the buffers out, reads the
guards, and judges the copies with `runner.assess`, the same code `gemmlab
check` uses: the reference comes from the judge's pristine inputs, A and B are
compared bit for bit, and C after the device wait must equal the snapshot
taken when ``solve`` returned.

The judge's clock runs from before it writes the inputs to the answer's
arrival (the kernel's stamp): work a solution starts before ``solve`` is
called (a thread watching the buffers) is inside it.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..reference import Precision, poison_
from . import guards
from .arena import Arena, layout, layout_views
from .cases import Case, make_inputs
from .hygiene import reset_persisting_l2
from .limits import Limits, size_text
from .protocol import encode, encode_request, printable
from .runner import CaseResult, assess, sync
from .session import Fault, Session
from .tracebacks import last_line

#: What the harness's `c_object` codes mean, as a verdict's reason.
C_OBJECT_REASONS = {
    1: "the solution replaced C's storage: its C tensor points at other memory after the call, so what "
       "it wrote there never reached C",
    2: "C's tensor object was changed (its shape, strides or offset: transposed or reshaped in place); "
       "the judge reads the buffer it passed",
}


class CannotShare(RuntimeError):
    """This machine cannot share the buffers with a child process (CUDA IPC unavailable)."""


@dataclass
class Outcome:
    result: CaseResult | None = None
    fault: Fault | None = None
    ms: float | None = None  # what the child reported
    wall_ms: float = 0.0  # what the judge measured, from writing the inputs to the answer's arrival
    traceback: str = ""  # the solution's own error, its frames only, when it raised
    notes: dict = field(default_factory=dict)  # l2_persisting, l2_window: what the harness saw


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


class RemoteSolve:
    def __init__(self, cmd: list[str], env: dict[str, str], limits: Limits, device: torch.device,
                 floats: int, readable: list[Path] | None = None, tool: bool = False):
        self.device = device
        self.limits = limits
        self.arena = Arena(floats, device)
        self.session = Session(cmd, env, limits, own_files=self.arena.own_files(), readable=readable, tool=tool)
        self.seq = 0
        self.first = True
        self.connected = False
        self.closed = False

    def connect(self) -> Fault | None:
        """Wait for the child's harness to start (it has imported torch, not the solution)."""
        fault = self.session.connect(time.monotonic() + self.limits.load_s())
        self.connected = fault is None
        if fault and fault.kind == "time limit":
            fault = Fault(fault.kind, f"time limit: the judge's harness did not start within "
                                      f"{self.limits.load_s():g} s; its process was ended")
        return fault

    def load(self) -> Fault | str | None:
        """Share the buffers, wait for the module to load: a fault, a load error's text, or None."""
        if not self.connected:
            fault = self.connect()
            if fault:
                return fault
        deadline = time.monotonic() + self.limits.load_s()
        try:
            handle, fds = self.arena.handle()
        except (RuntimeError, OSError) as exc:  # CUDA IPC refused here: the judge's limit, not the solution's
            raise CannotShare(f"cannot share buffers with the solution's process: {exc}") from None
        fault = self.session.send(encode({"arena": handle}), fds)
        if fault is None:
            reply = self.session.receive(deadline)
            if isinstance(reply, Fault):
                fault = reply
            elif reply["kind"] == "load_error":
                return printable(reply["message"])
            elif reply["kind"] != "ready":
                fault = Fault("protocol violation", f"protocol violation: {reply['kind']!r} before loading")
        if fault and fault.kind == "time limit":
            fault = Fault(fault.kind, f"time limit: the solution did not load within {self.limits.load_s():g} s; "
                                      f"its process was ended")
        return fault

    def call(self, case: Case, seed: int, precision: Precision, null: bool = False) -> Outcome:
        """Inputs in, one solve, the verdict out. `null` skips solve (to measure the harness's overhead)."""
        with _judge_threads(self.device):
            return self._call(case, seed, precision, null)

    def _call(self, case: Case, seed: int, precision: Precision, null: bool) -> Outcome:
        lay = layout(case.shape)
        a_buf, b_buf, c_buf, s_buf = layout_views(self.arena.tensor, lay)
        a, b = make_inputs(case, seed, self.device)
        pattern = guards.fresh_pattern()
        if self.device.type == "cuda":
            reset_persisting_l2()
        self.seq += 1
        budget = self.limits.call_s(case.shape, self.first and not null)
        self.first = self.first and null
        t0, started = time.monotonic(), time.time()
        a_buf.copy_(a)
        b_buf.copy_(b)
        poison_(c_buf)
        poison_(s_buf)
        guards.fill(self.arena.tensor, lay, pattern)
        sync(self.device)
        sent = self.session.send(encode_request(self.seq, null, case.shape, lay.offsets()))
        reply = sent or self.session.receive(t0 + budget)
        wall_ms = (self.session.arrival - started) * 1e3
        if isinstance(reply, Fault):
            if reply.kind == "time limit":
                reply = Fault(reply.kind, f"time limit: the solution did not return within {budget:g} s; "
                                          f"its process was ended")
            return Outcome(fault=reply, wall_ms=wall_ms)
        if reply["kind"] not in ("returned", "raised") or reply["seq"] != self.seq:
            return Outcome(fault=Fault("protocol violation", "protocol violation: the solution's process "
                                       f"answered call {self.seq} with {reply['kind']} {reply.get('seq')}"),
                           wall_ms=wall_ms)
        base = CaseResult(case.name, case.group, case.shape, seed, "error")
        if reply["kind"] == "raised":
            text = printable(reply["error"])
            base.reason = printable(last_line(text), 600)
            if "[Errno 27]" in base.reason:  # EFBIG: RLIMIT_FSIZE, set by the confine step
                base.reason += (f" (the judge limits any one file the solution writes to "
                                f"{size_text(self.limits.file_bytes)})")
            return Outcome(result=base, wall_ms=wall_ms, traceback=text)
        base.seconds = reply["ms"] / 1e3
        notes = {"l2_persisting": reply["l2_persisting"], "l2_window": reply["l2_window"]}
        if null:
            return Outcome(result=base, ms=reply["ms"], wall_ms=wall_ms, notes=notes)
        sync(self.device)
        # Private copies first: a thread the solution left running cannot change them mid-check.
        with self.session.stopped(self.device.type == "cpu"):
            after = [t.clone() for t in (a_buf, b_buf, c_buf, s_buf)]
            outside = guards.check(self.arena.tensor, lay, pattern)
        result = assess(base, case, precision, a, b, after[3], a_after=after[0], b_after=after[1],
                        c_later=after[2])
        # What went wrong around C comes before what C holds: it is the cause.
        causes = [r for r in (C_OBJECT_REASONS.get(reply["c_object"]), outside) if r]
        if causes:
            also = f"; C itself: {result.reason}" if not result.passed and result.reason else ""
            result.status, result.reason = "fail", "; ".join(causes) + also
        return Outcome(result=result, ms=reply["ms"], wall_ms=wall_ms, notes=notes)

    def close(self, polite: bool) -> int:
        if self.closed:
            return 0
        self.closed = True
        killed = self.session.close(polite)
        self.arena.close()
        return killed
