"""The judge's side of the solution's process: start it, talk to it, watch it, end it.

Every wait has a deadline and one loop serves it all (`select.poll`, at most
0.1 s at a time): the channel, the solution's output pipe (drained always, so
a chatty solution never blocks), its exit, its process tree's memory and
process count. A descendant that holds the output pipe open therefore delays
nothing: the judge never waits for that pipe's end of file without a deadline.

The channel is an abstract Unix socket (a random name, no file anywhere),
connected by the confine step before it enters the sandbox, and the judge
accepts only a connection from a process inside the solution's boundary
(SO_PEERCRED).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from . import procs, protocol, sandbox, scratch
from .boundary import Boundary
from .limits import Limits, gib

#: Keep the last this many bytes of the solution's output.
OUTPUT_TAIL = 256 * 1024
TICK_S = 0.1
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's value, where Python lacks the name
#: How often the process tree's memory and process count are measured.
WATCH_EVERY_S = 0.2


class _Undumpable:
    """The judge non-dumpable while any solution's process lives (`sandbox.set_dumpable`)."""

    def __init__(self):
        self.count, self.lock, self.before = 0, threading.Lock(), -1

    def enter(self) -> None:
        with self.lock:
            self.count += 1
            if self.count == 1:
                self.before = sandbox.set_dumpable(0)

    def leave(self) -> None:
        with self.lock:
            self.count -= 1
            if self.count == 0 and self.before > 0:
                sandbox.set_dumpable(self.before)


#: The one for this process: judged runs and --profile's ncu runs (profile.py) nest on it.
undumpable = _Undumpable()


@dataclass(frozen=True)
class Fault:
    """Why the judge got no answer: a limit, a crash, or a protocol violation."""

    kind: str  # time limit | memory limit | disk limit | process limit | crash | protocol violation
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
    def __init__(self, cmd: list[str], env: dict[str, str], limits: Limits,
                 own_files: set[tuple[int, int]] | None = None, readable: list[Path] | None = None,
                 tool: bool = False):
        """Start `cmd` (with ``--channel @NAME`` appended) inside a boundary and a sandbox of its own.

        ``own_files``: the judge's in-memory files the child maps (the arena), which its
        memory is not charged for. ``readable``: files the solution's process reads (its
        source, its built library) beside what every Python process reads (`sandbox.plan`);
        ``tool``: a profiler or sanitizer wraps it. Its only writable folder is a scratch
        folder of its own, removed at `close`, which TMPDIR, HOME and the caches point into."""
        self.limits = limits
        name = f"gemmlab-judge-{os.getpid()}-{secrets.token_hex(8)}"
        # SEQPACKET: one message per packet (no framing to get wrong), and the kernel
        # stamps each packet's arrival, so the judge's clock does not depend on how soon
        # this process gets to read it.
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind("\0" + name)
        self.listener.listen(4)
        self.conn: socket.socket | None = None
        self.arrival = 0.0  # when the last message arrived (time.time(), the kernel's stamp)
        self.output = Output()
        self.memory_peak = 0
        self.own_files = own_files or set()
        self._watched_at = 0.0
        self.scratch = Path(tempfile.mkdtemp(prefix="gemmlab-solution-"))
        self._scratch_in_memory = procs.on_tmpfs(self.scratch)
        self.sandbox = sandbox.plan(self.scratch, readable or [], tool)
        self._memory_base = procs.tmpfs_used_bytes()
        self._shm_open = self.sandbox.layers.get("landlock") != "on" or Path("/dev/shm").resolve() in self.sandbox.writes
        env = sandbox.confined_env(env, self.scratch)
        self.boundary = Boundary(limits.processes, limits.file_bytes, self.sandbox)
        undumpable.enter()
        self.proc = subprocess.Popen(self.boundary.wrap([*cmd, "--channel", "@" + name], connect="@" + name),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                     cwd=self.scratch)  # not the user's folder: a torch.py there is no module
        self.boundary.attach(self.proc.pid)
        procs.EXEMPT.add(self.proc.pid)  # another session's walk must never take this one's root for its own
        self.gone = False  # every process of the solution is known to have ended
        self.closed = False
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

    def memory_used(self, pids: set[int], scratch_bytes: int) -> int:
        """Host memory the tree holds: resident pages, memfds it holds open, bytes queued on its Unix
        sockets, and files in memory that outlive any process. Where it may make files in /dev/shm (no Landlock), what /dev/shm and a
        tmpfs /tmp gained since it started; else its scratch folder where that is a tmpfs, and not a
        neighbour's use of /dev/shm, which a busy machine would charge to a right solution (the
        files there it may write grow to the file limit at most)."""
        if self._shm_open:
            in_memory = max(0, procs.tmpfs_used_bytes() - self._memory_base)
        else:
            in_memory = scratch_bytes if self._scratch_in_memory else 0
        queued = procs.unix_queued_bytes(procs.held_sockets(pids))  # sent on its socketpairs, never read
        return procs.rss_bytes(pids) + procs.held_memory_files(pids, self.own_files) + in_memory + queued

    def _check_limits(self) -> Fault | None:
        now = time.monotonic()
        if now - self._watched_at < WATCH_EVERY_S:
            return None
        self._watched_at = now
        running = set(procs.alive(self.boundary.pids()))
        if len(running) > self.limits.processes:
            self._end()
            return Fault("process limit", f"process limit: the solution ran {len(running)} processes at "
                                          f"once, over the limit of {self.limits.processes}; they were ended")
        found = scratch.usage(self.scratch)
        disk = found.bytes + procs.held_deleted_files(running, self.scratch)
        if found.unmeasured:
            self._end()
            return Fault("disk limit", f"disk limit: the solution's scratch folder holds a folder the judge "
                                       f"cannot measure: {found.unmeasured}; they were ended")
        if disk > self.limits.disk_bytes or found.entries > self.limits.disk_entries:
            self._end()
            over = disk > self.limits.disk_bytes
            held = gib(disk) if over else f"{found.entries:,} entries"
            limit = gib(self.limits.disk_bytes) if over else f"{self.limits.disk_entries:,}"
            return Fault("disk limit", f"disk limit: the solution's files in its scratch folder held {held}, "
                                       f"over the limit of {limit}; they were ended")
        used = self.memory_used(running, disk)
        self.memory_peak = max(self.memory_peak, used)
        limit = self.limits.memory()
        if used > limit:
            self._end()
            return Fault("memory limit", f"memory limit: the solution's processes held {gib(used)} of host "
                                         f"memory (resident, /dev/shm, memfd and socket queues), over the limit of "
                                         f"{gib(limit)}; they were ended")
        return None

    @contextlib.contextmanager
    def stopped(self, on: bool = True):
        """The solution's processes stopped meanwhile (`on`): while the judge copies the results out
        on the CPU, where a process of the solution's could otherwise write C after its answer, in
        the gap before the copy, work done off the clock. Outside the clock, which stopped at the answer."""
        held = procs.stop_all(self.boundary.pids) if on else set()
        try:
            yield
        finally:
            procs.resume_all(held)

    def _end(self) -> None:
        """End the whole tree now (a limit was hit): the root too, by the judge's choice."""
        self.boundary.kill(leader_unreaped=self.proc.returncode is None)

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
        fault = self._check_limits()
        readable = sock is not None and sock.fileno() in ready
        if fault or readable:
            return readable, fault
        return False, self._exited()

    def connect(self, deadline: float) -> Fault | None:
        """Accept the child's connection, only from a process inside the solution's boundary, and
        wait for its harness to start."""
        while True:
            readable, fault = self._tick(deadline, self.listener)
            if readable:
                conn, _ = self.listener.accept()
                pid, _, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                                struct.calcsize("3i")))
                if pid not in self.boundary.pids():
                    conn.close()  # someone else found the name: not the solution's process
                    continue
                self.boundary.confirm(pid)
                self.conn = conn
                self.conn.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
                self.listener.close()  # nobody else gets to connect
                # The confine step connected before the harness started: wait for the harness to say
                # it is up, so that nothing of its start-up runs beside what the judge measures next.
                hello = self.receive(deadline)
                if isinstance(hello, Fault):
                    return hello
                if hello["kind"] != "started":
                    return Fault("protocol violation", f"protocol violation: {hello['kind']!r} before the "
                                                       f"harness started")
                return None
            if fault:
                return fault

    def send(self, data: bytes, fds: list[int] | None = None) -> Fault | None:
        """One packet (the first one: the arena's handle, with its file descriptors)."""
        try:
            if fds:
                socket.send_fds(self.conn, [data], fds)
            else:
                self.conn.sendall(data)
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
        """End the child and every process it started; return how many the solution had left
        running (its own process not counted: a hang or a limit says so in its verdict).

        With `polite`, the child is asked to exit first (a wrapper such as
        compute-sanitizer then prints its summary). Either way, whatever is left
        after the grace period, threads and grandchildren included, is killed,
        and `gone` says whether two walks in a row then found nothing alive.
        """
        done = False
        try:
            if polite and self.conn is not None and self.proc.poll() is None:
                self.send(protocol.encode_exit())
                end = time.monotonic() + self.limits.exit_s()
                while self.proc.poll() is None and time.monotonic() < end:
                    self._tick(end, None)
            ended = self.boundary.kill(leader_unreaped=self.proc.returncode is None)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            # Once the child is reaped, its own zombies are re-parented here: collect them too.
            ended |= self.boundary.kill(leader_unreaped=False, deadline_s=0.5)
            self.gone = not procs.alive(self.boundary.pids())
            self.boundary.close()
            end = time.monotonic() + 0.5
            while self.out_fd is not None and time.monotonic() < end:
                self._tick(end, None)
            for s in (self.conn, self.listener):
                if s is not None:
                    s.close()
            self.proc.stdout.close()
            procs.EXEMPT.discard(self.proc.pid)
            ended.discard(self.proc.pid)
            done = True
            return len(ended)
        finally:
            if not self.closed:
                self.closed = True
                if not done:  # cut short by an error of the judge's own: end the tree before removing
                    with contextlib.suppress(Exception):
                        self.boundary.kill(leader_unreaped=self.proc.poll() is None)
                undumpable.leave()
                scratch.remove(self.scratch)
