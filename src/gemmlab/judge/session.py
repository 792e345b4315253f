"""The judge's side of the solution's process: start it, talk to it, watch it, end it.

Every wait has a deadline and one loop serves it all (`select.poll`, at most
0.1 s at a time): the channel, the solution's output pipe (drained always, so
a chatty solution never blocks), its exit, its process tree's memory. A
descendant that holds the output pipe open therefore delays nothing: the judge
never waits for that pipe's end of file without a deadline.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import struct
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import procs, protocol
from .limits import Limits, gib

#: Keep the last this many bytes of the solution's output.
OUTPUT_TAIL = 256 * 1024
TICK_S = 0.1
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's value, where Python lacks the name
MEMORY_EVERY_S = 0.2


@dataclass(frozen=True)
class Fault:
    """Why the judge got no answer: a limit, a crash, or a protocol violation."""

    kind: str  # time limit | memory limit | crash | protocol violation
    message: str


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


class Output:
    """The solution's stdout and stderr together, as bytes; only the tail is kept."""

    def __init__(self, cap: int = OUTPUT_TAIL):
        self.cap = cap
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > 2 * self.cap:
            del self.data[: len(self.data) - self.cap]

    def text(self) -> str:
        data = bytes(self.data[-self.cap:])
        head = f"[… {self.total - len(data)} earlier bytes not kept]\n" if self.total > len(data) else ""
        return head + data.decode("utf-8", errors="replace")


class Session:
    def __init__(self, cmd: list[str], env: dict[str, str], limits: Limits, folder: Path):
        self.limits = limits
        self.path = folder / "channel"
        # SEQPACKET: one message per packet (no framing to get wrong), and the kernel
        # stamps each packet's arrival, so the judge's clock does not depend on how soon
        # this process gets to read it.
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(str(self.path))
        self.listener.listen(1)
        self.conn: socket.socket | None = None
        self.arrival = 0.0  # when the last message arrived (time.time(), the kernel's stamp)
        self.output = Output()
        self.memory_peak = 0
        self._memory_at = 0.0
        self.proc = subprocess.Popen([*cmd, "--channel", str(self.path)], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)
        self.start = procs.start_time(self.proc.pid) or 0
        self.out_fd: int | None = self.proc.stdout.fileno()
        os.set_blocking(self.out_fd, False)

    # -- waiting ---------------------------------------------------------------------------

    def _read_output(self) -> None:
        while self.out_fd is not None:
            try:
                chunk = os.read(self.out_fd, 65536)
            except BlockingIOError:
                return
            if not chunk:
                self.out_fd = None
                return
            self.output.add(chunk)

    def _check_memory(self) -> Fault | None:
        now = time.monotonic()
        if now - self._memory_at < MEMORY_EVERY_S:
            return None
        self._memory_at = now
        used = procs.rss_bytes(procs.tree(self.proc.pid, self.start))
        self.memory_peak = max(self.memory_peak, used)
        limit = self.limits.memory()
        if used > limit:
            procs.kill_tree(self.proc.pid, self.start)
            return Fault("memory limit", f"memory limit: the solution's processes held {gib(used)} "
                                         f"of host memory, over the limit of {gib(limit)} (ended)")
        return None

    def _exited(self) -> Fault | None:
        code = self.proc.poll()
        if code is None:
            return None
        return Fault("crash", f"the solution's process {describe_exit(code)}")

    def _tick(self, deadline: float, sock: socket.socket | None) -> tuple[bool, Fault | None]:
        """Wait up to one tick; (whether `sock` is readable, a fault if one happened)."""
        now = time.monotonic()
        if now >= deadline:
            return False, Fault("time limit", "")
        poller = select.poll()
        if sock is not None:
            poller.register(sock.fileno(), select.POLLIN)
        if self.out_fd is not None:
            poller.register(self.out_fd, select.POLLIN)
        ready = {fd for fd, _ in poller.poll(1000 * min(TICK_S, deadline - now))}
        if self.out_fd is not None and self.out_fd in ready:
            self._read_output()
        fault = self._check_memory()
        readable = sock is not None and sock.fileno() in ready
        if fault or readable:
            return readable, fault
        return False, self._exited()

    def connect(self, deadline: float) -> Fault | None:
        while True:
            readable, fault = self._tick(deadline, self.listener)
            if readable:
                self.conn, _ = self.listener.accept()
                self.conn.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
                self.listener.close()  # nobody else gets to connect
                return None
            if fault:
                return fault

    def send(self, message: dict) -> Fault | None:
        try:
            self.conn.sendall(protocol.encode(message))
        except OSError:
            return self._exited() or Fault("protocol violation", "protocol violation: the solution's "
                                                                 "process closed the judge's channel")
        return None

    def receive(self, deadline: float) -> dict | Fault:
        """The child's next message, or why there is none."""
        while True:
            readable, fault = self._tick(deadline, self.conn)
            if readable:
                return self._read_message()
            if fault:
                return fault

    def _read_message(self) -> dict | Fault:
        data, ancillary, flags, _ = self.conn.recvmsg(protocol.MAX_LINE + 1, socket.CMSG_SPACE(16))
        self.arrival = time.time()
        for level, kind, stamp in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(stamp) >= 16:
                sec, nsec = struct.unpack("qq", stamp[:16])
                self.arrival = sec + nsec * 1e-9
        if not data:
            return self._exited_soon() or Fault(
                "protocol violation", "protocol violation: the solution's process closed the judge's channel")
        if flags & socket.MSG_TRUNC or len(data) > protocol.MAX_LINE:
            return Fault("protocol violation", "protocol violation: the solution's process sent an "
                                               "overlong message")
        try:
            return protocol.parse_child_line(data)
        except protocol.ProtocolViolation as exc:
            return Fault("protocol violation", f"protocol violation: the solution's process sent {exc}")

    def _exited_soon(self) -> Fault | None:
        """The channel closed: most often because the process is dying; give it a moment to say so."""
        try:
            self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return None
        return self._exited()

    def pending(self) -> bool:
        """Whether the child sent anything that nobody asked for."""
        if self.conn is None:
            return False
        try:
            self.conn.setblocking(False)
            extra = self.conn.recv(1, socket.MSG_PEEK)
        except (BlockingIOError, OSError):
            extra = b""
        finally:
            self.conn.setblocking(True)
        return bool(extra)

    # -- ending ----------------------------------------------------------------------------

    def close(self, polite: bool) -> int:
        """End the child and every process it started; return how many had to be killed.

        With `polite`, the child is asked to exit first (a wrapper such as
        compute-sanitizer then prints its summary). Either way, whatever is left
        after the grace period, threads and grandchildren included, is killed.
        """
        if polite and self.conn is not None and self.proc.poll() is None:
            self.send({"op": "exit"})
            end = time.monotonic() + self.limits.exit_s()
            while self.proc.poll() is None and time.monotonic() < end:
                self._tick(end, None)
        killed = procs.kill_tree(self.proc.pid, self.start)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        # Once the child is reaped, its own zombies are re-parented here: collect them too.
        procs.kill_tree(self.proc.pid, self.start, deadline_s=0.5)
        end = time.monotonic() + 0.5
        while self.out_fd is not None and time.monotonic() < end:
            self._tick(end, None)
        for s in (self.conn, self.listener):
            if s is not None:
                s.close()
        self.proc.stdout.close()
        return killed
