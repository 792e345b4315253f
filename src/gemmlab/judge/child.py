"""The solution's process: ``python -m gemmlab.judge.child --file F --framework X --channel PATH``.

This process runs the user's code, so it decides nothing. It maps the
judge's buffers, loads the solution, and on each request calls ``solve`` on
the views the judge names, snapshots C on the caller's stream as soon as
``solve`` returns, waits for the device, and answers with how long the call
took. The judge made the inputs, keeps their pristine copies, and reads what
was written.

The clock, the CUDA events, the copy and the synchronisation it uses are
bound here, before the solution's module is imported, so patching
``time.perf_counter``, ``torch.cuda.Event`` or ``torch.Tensor.copy_`` from
the solution does not reach them (and the judge cross-checks the figure from
outside in any case).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import socket
import sys
import time
import traceback

_clock = time.perf_counter
_exit = os._exit
_dumps = json.dumps
_loads = json.loads

from .. import runtime  # noqa: E402

runtime.configure()

import torch  # noqa: E402

from .arena import open_in_child, views  # noqa: E402
from .protocol import MAX_TEXT  # noqa: E402
from .userfile import load, load_library  # noqa: E402

_copy = torch._C.TensorBase.copy_


class Channel:
    """One JSON message per packet, both ways (see protocol.py)."""

    def __init__(self, path: str):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.connect(path)

    def send(self, message: dict) -> None:
        self.sock.send(_dumps(message).encode())

    def recv(self) -> dict:
        packet = self.sock.recv(1 << 22)
        if not packet:  # the judge is gone: nothing left to do
            _exit(0)
        return _loads(packet)


class Timer:
    """Times one call: CUDA events on the caller's stream, or the host clock on the CPU."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        if self.cuda:
            self.stream = torch.cuda.current_stream()
            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)
            self._record = torch.cuda.Event.record
            self._elapsed = torch.cuda.Event.elapsed_time
            self._set_stream = torch.cuda.set_stream
            self._sync = torch.cuda.synchronize

    def begin(self) -> float:
        if self.cuda:
            self._record(self.start, self.stream)
        return _clock()

    def finish(self, t0: float) -> float:
        """Mark the end of the call; give the host-clock figure (the CUDA one comes after `sync`)."""
        t = _clock() - t0
        if self.cuda:
            self._record(self.end, self.stream)
            self._set_stream(self.stream)  # a solution may leave another stream current
        return t * 1e3

    def sync(self) -> None:
        if self.cuda:
            self._sync()

    def ms(self, host_ms: float) -> float:
        return self._elapsed(self.start, self.end) if self.cuda else host_ms


def _text(exc: BaseException, only_in: str | None = None) -> str:
    """The exception as Python prints it; with `only_in`, only the frames of that file."""
    try:
        te = traceback.TracebackException.from_exception(exc)
        if only_in is None:
            te.stack = traceback.StackSummary.from_list([])
        else:
            te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename == only_in])
        text = "".join(te.format()).strip()
    except BaseException:  # an exception whose __str__ itself raises
        text = type(exc).__name__
    return text[-MAX_TEXT:]


def _staged(buffers, device: torch.device):
    """Private, exactly sized copies on the device (for compute-sanitizer: no slack around them)."""
    out = []
    for t in buffers:
        p = torch.empty(t.shape, dtype=torch.float32, device=device)
        _copy(p, t)
        out.append(p)
    return out


def call(solve, arena, timer: Timer, msg: dict, staged: torch.device | None) -> dict:
    m, n, k = msg["shape"]
    a, b, c, s = views(arena, (m, n, k), msg["offsets"])
    args = _staged((a, b, c), staged) if staged is not None else (a, b, c)
    try:
        timer.sync()
        t0 = timer.begin()
        if not msg.get("null"):
            solve(*args, m, n, k)
        host_ms = timer.finish(t0)
        _copy(s, args[2])  # the snapshot: what C held, on the caller's stream, when solve returned
        if staged is not None:
            for shared, private in zip((a, b, c), args, strict=True):
                _copy(shared, private)
        timer.sync()
        return {"kind": "returned", "seq": msg["seq"], "ms": float(timer.ms(host_ms))}
    except BaseException as exc:  # SystemExit from a solution is still just its failure
        return {"kind": "raised", "seq": msg["seq"], "error": _text(exc)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", required=True)
    ap.add_argument("--framework", required=True)
    ap.add_argument("--library", default=None)
    ap.add_argument("--staged", action="store_true")
    ap.add_argument("--channel", required=True)
    args = ap.parse_args()

    chan = Channel(args.channel)
    arena = open_in_child(chan.recv()["arena"])
    held = [arena]  # dropped before exit, so a CUDA IPC mapping is released to the judge
    # Staged (under a wrapper such as compute-sanitizer): the judge shares host memory only,
    # and the solution gets private device buffers of exactly its sizes.
    staged = runtime.default_device() if args.staged else None
    timer = Timer(staged or arena.device)
    try:
        solve = load_library(args.library) if args.library else load(args.file, args.framework)[1]
    except BaseException as exc:
        chan.send({"kind": "load_error", "message": _text(exc, only_in=args.file)})
        _exit(0)
    chan.send({"kind": "ready"})
    while True:
        msg = chan.recv()
        if msg["op"] == "exit":
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except BaseException:
                    pass
            del arena
            held.clear()
            gc.collect()
            # Not sys.exit: a thread the solution left running must not hold the process.
            _exit(0)
        chan.send(call(solve, arena, timer, msg, staged))


if __name__ == "__main__":
    main()
