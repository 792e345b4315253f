"""The solution's process tree: find every process it started, measure it, end it.

A solution can start processes that leave its process group and session, or
whose parent exits so that they are re-parented. The judge therefore makes
itself a *child subreaper* (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): orphans
of its descendants are re-parented to the judge instead of to init, so a walk
still finds them. The walk follows ``/proc/PID/task/TID/children`` where the
kernel has it (a few reads per process, so a chain of processes that each fork
and exit at once cannot outrun it), else it scans all of ``/proc``. Processes
the judge starts for itself (its yardstick, nvidia-smi) are `EXEMPT`: an orphan
adopted by the judge belongs to the solution only if nobody exempted it.
Linux only; the judge says so elsewhere.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37

#: Pids the judge started for its own use; never counted as (or killed with) a solution's.
EXEMPT: set[int] = set()


def set_subreaper(on: bool) -> bool:
    """Make this process a child subreaper (or stop); return the previous setting."""
    libc = ctypes.CDLL(None, use_errno=True)
    old = ctypes.c_int(0)
    libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(old), 0, 0, 0)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
    return bool(old.value)


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    state: str
    start: int  # clock ticks after boot: tells a recycled pid from the original

    @property
    def alive(self) -> bool:
        return self.state not in ("Z", "X")


def _stat_fields(raw: bytes) -> list[bytes]:
    """A /proc stat line's fields from the state on: the command name before them is in parentheses
    and may itself hold spaces or ')'."""
    return raw[raw.rfind(b")") + 2:].split()


def _read_stat(pid: int) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    fields = _stat_fields(raw)
    try:
        return Proc(pid, int(fields[1]), fields[0].decode(), int(fields[19]))
    except (IndexError, ValueError):
        return None


def table() -> dict[int, Proc]:
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            p = _read_stat(int(name))
            if p is not None:
                out[p.pid] = p
    return out


def start_time(pid: int) -> int | None:
    p = _read_stat(pid)
    return p.start if p else None


#: Whether this kernel lists each thread's children (CONFIG_PROC_CHILDREN).
CHILDREN_FILES = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def _per_thread(pid: int, name: str) -> list[bytes] | None:
    """Each thread's /proc/PID/task/TID/`name`; None where the process is gone."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    out = []
    for tid in tids:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/{name}", "rb") as f:
            out.append(f.read())
    return out


def children(pid: int) -> list[int]:
    """The children of every thread of `pid` (requires `CHILDREN_FILES`)."""
    return [int(x) for raw in _per_thread(pid, "children") or [] for x in raw.split()]


def tree(root: int, root_start: int) -> set[int]:
    """The root (if it is still the same process) and every descendant of it.

    Also the orphans re-parented to this process (the subreaper) that were born
    after the root and that nobody exempted: they can only come from the root's tree.
    """
    if CHILDREN_FILES:
        kids_of, start_of = children, start_time
    else:
        procs = table()
        kids: dict[int, list[int]] = {}
        for p in procs.values():
            kids.setdefault(p.ppid, []).append(p.pid)
        kids_of = lambda pid: kids.get(pid, [])  # noqa: E731
        start_of = lambda pid: procs[pid].start if pid in procs else None  # noqa: E731
    stack = [root] if start_of(root) == root_start else []
    stack += [pid for pid in kids_of(os.getpid())
              if pid != root and pid not in EXEMPT and (start_of(pid) or -1) >= root_start]
    found: set[int] = set()
    while stack:
        pid = stack.pop()
        if pid not in found:
            found.add(pid)
            stack.extend(kids_of(pid))
    return found


def alive(pids: Iterable[int]) -> dict[int, Proc]:
    """Those of `pids` that are running (not zombies), with their stat."""
    out = {}
    for pid in pids:
        p = _read_stat(pid)
        if p is not None and p.alive:
            out[pid] = p
    return out


def rss_bytes(pids: set[int]) -> int:
    """Resident memory of these processes, shared pages counted once per process."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                total += int(f.read().split()[1]) * page
        except (OSError, IndexError, ValueError):
            pass
    return total


def _mounts() -> list[tuple[str, str]]:
    """(mount point, filesystem type) of every mount this process sees, in mount order."""
    try:
        with open("/proc/self/mounts") as f:
            return [(fields[1], fields[2]) for fields in (line.split() for line in f) if len(fields) > 2]
    except OSError:
        return []


#: /dev/shm, and /tmp where it is a tmpfs: folders whose files are RAM.
TMPFS = [p for p in ("/dev/shm", "/tmp") if (p, "tmpfs") in _mounts()]


def on_tmpfs(path: Path) -> bool:
    """Whether `path` lies on a tmpfs (its files are RAM): the mount with the longest matching point,
    the last of those mounted on one point."""
    here, longest, kind = str(Path(path).resolve()), -1, ""
    for point, fs in _mounts():
        if (here == point or here.startswith(point.rstrip("/") + "/")) and len(point) >= longest:
            longest, kind = len(point), fs
    return kind == "tmpfs"


def tmpfs_used_bytes() -> int:
    """Bytes in use on /dev/shm and a tmpfs /tmp: files there hold RAM after their writer exits."""
    total = 0
    for path in TMPFS:
        try:
            s = os.statvfs(path)
        except OSError:
            continue
        total += (s.f_blocks - s.f_bfree) * s.f_frsize
    return total


def held_memory_files(pids: set[int], ignore: set[tuple[int, int]]) -> int:
    """Bytes of memfd files these processes hold open (memfd_create: RAM, in no folder).

    Each file once (by device and inode); `ignore` holds the judge's own (its
    arena). Files on /dev/shm: see `Session.memory_used`.
    """
    return _held_bytes(pids, ignore, lambda target: target.startswith("/memfd:"))


def _fd_links(pids: set[int]):
    """(the /proc link, its target) of every descriptor these processes hold open."""
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            link = f"/proc/{pid}/fd/{fd}"
            with contextlib.suppress(OSError):
                yield link, os.readlink(link)


def _held_bytes(pids: set[int], ignore: set[tuple[int, int]], wanted: Callable[[str], bool]) -> int:
    """Bytes of the regular files these processes hold open whose fd link's target is `wanted`,
    each file once (by device and inode), none of `ignore`."""
    seen: set[tuple[int, int]] = set(ignore)
    total = 0
    for link, target in _fd_links(pids):
        if not wanted(target):
            continue
        try:
            st = os.stat(link)
        except OSError:
            continue
        key = (st.st_dev, st.st_ino)
        if stat.S_ISREG(st.st_mode) and key not in seen:
            seen.add(key)
            total += st.st_blocks * 512
    return total


def held_deleted_files(pids: set[int], folder: Path) -> int:
    """Bytes of files deleted under `folder` that these processes still hold, open or mapped: on disk
    until let go, and in no folder `scratch.usage` walks. Each file once."""
    prefix = f"{folder}/"
    opened = _held_bytes(pids, set(), lambda target: target.startswith(prefix) and target.endswith(" (deleted)"))
    return opened + _mapped_deleted(pids, prefix)


def _mapped_deleted(pids: set[int], prefix: str) -> int:
    """Bytes of deleted files under `prefix` mapped into these processes with no descriptor left open
    (mmap, close, unlink): from /proc/PID/maps, the furthest byte mapped of each file."""
    reach: dict[tuple[str, str], int] = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            fields = line.split(maxsplit=5)
            if len(fields) < 6 or not fields[5].startswith(prefix) or not fields[5].endswith(" (deleted)"):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            key = (fields[3], fields[4])  # device, inode
            reach[key] = max(reach.get(key, 0), int(fields[2], 16) + end - start)
    return sum(reach.values())


def stop_all(find: Callable[[], set[int]], deadline_s: float = 1.0) -> set[int]:
    """SIGSTOP every process `find` names, walking again until it names none new (a fork between two
    walks), then wait until each one's threads have all stopped (or `deadline_s` passes)."""
    stopped: set[int] = set()
    while new := find() - stopped:
        for pid in new:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGSTOP)
        stopped |= new
    end = time.monotonic() + deadline_s
    while not all(_halted(pid) for pid in stopped) and time.monotonic() < end:
        time.sleep(0.0001)
    return stopped


def _halted(pid: int) -> bool:
    """Every thread of `pid` stopped (T), traced (t) or dead; a process that is gone is halted."""
    states = (_stat_fields(raw)[:1] for raw in _per_thread(pid, "stat") or [])
    return all(state in ([b"T"], [b"t"], [b"Z"], [b"X"], []) for state in states)


def resume_all(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGCONT)


def held_sockets(pids: set[int]) -> set[int]:
    """The inodes of the sockets these processes hold open."""
    return {int(target[8:-1]) for _, target in _fd_links(pids) if target.startswith("socket:[")}


# sock_diag (linux/sock_diag.h, linux/unix_diag.h): every Unix socket's queue, as `ss -x` reads it.
_NETLINK_SOCK_DIAG, _SOCK_DIAG_BY_FAMILY, _NLM_F_DUMP_REQUEST = 4, 20, 0x301
_NLMSG_DONE, _NLMSG_ERROR, _UDIAG_SHOW_RQLEN, _UNIX_DIAG_RQLEN = 3, 2, 0x10, 4


def unix_queued_bytes(inodes: set[int]) -> int:
    """Bytes waiting in the receive queues of these Unix sockets: sent, never read, held by the kernel
    in no process's memory (a solution's socketpairs can queue gigabytes). 0 where sock_diag is missing."""
    if not inodes:
        return 0
    import socket
    import struct

    total = 0
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as nl:
            nl.settimeout(1.0)  # the kernel ends every dump with NLMSG_DONE; never wait on it longer
            req = struct.pack("=BBHIIIII", socket.AF_UNIX, 0, 0, 0xFFFFFFFF, 0, _UDIAG_SHOW_RQLEN, 0, 0)
            nl.send(struct.pack("=IHHII", 16 + len(req), _SOCK_DIAG_BY_FAMILY, _NLM_F_DUMP_REQUEST, 1, 0) + req)
            while True:
                data = nl.recv(1 << 16)
                at = 0
                while at + 16 <= len(data):
                    length, kind = struct.unpack_from("=IH", data, at)
                    if kind in (_NLMSG_DONE, _NLMSG_ERROR) or length < 16:
                        return total
                    total += _queued(data[at + 16:at + length], inodes)
                    at += (length + 3) & ~3
    except OSError:
        return total


def _queued(msg: bytes, inodes: set[int]) -> int:
    """One unix_diag_msg's receive queue in bytes, where its inode is one of `inodes`."""
    import struct

    if len(msg) < 16 or struct.unpack_from("=I", msg, 4)[0] not in inodes:
        return 0
    state, at = msg[2], 16
    while at + 4 <= len(msg):
        length, kind = struct.unpack_from("=HH", msg, at)
        if length < 4:
            break
        if kind == _UNIX_DIAG_RQLEN and length >= 12 and state != 10:  # 10: listening (a count, not bytes)
            return struct.unpack_from("=I", msg, at + 4)[0]
        at += (length + 3) & ~3
    return 0


def _reap(pids: Iterable[int], keep: int) -> None:
    """Collect the zombies that are this process's children (but not `keep`, Popen's own)."""
    for pid in pids:
        if pid == keep:
            continue
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def kill_tree(root: int, root_start: int, deadline_s: float = 3.0, group: int | None = None,
              members: Callable[[], set[int]] | None = None) -> set[int]:
    """SIGKILL the root and every descendant until none is left alive; return those it hit.

    One walk that finds nothing is not proof: a chain of processes that each
    fork and exit at once can be between two of them. So it walks again until
    two walks in a row find nothing alive. ``group`` is a process group to
    kill as a whole each round (the kernel signals its members atomically with
    respect to fork); pass it only while its leader is unreaped, so that its
    number cannot belong to anyone else. ``members`` adds pids known by other
    means (a cgroup's). The root is left for its Popen to reap, so its exit
    status stays readable.
    """
    hit: set[int] = set()
    end = time.monotonic() + deadline_s
    quiet = 0
    me = os.getpid()
    while time.monotonic() < end and quiet < 2:
        if group is not None:
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        pids = tree(root, root_start) | (members() if members else set())
        pids.discard(me)
        running = alive(pids)
        _reap([pid for pid in pids if pid not in running], keep=root)
        if not running:
            quiet += 1
            continue
        quiet = 0
        for pid in running:
            try:
                os.kill(pid, signal.SIGKILL)
                hit.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.002)
    # Zombies left by the last round (this process's adopted orphans) are collected too.
    _reap(tree(root, root_start), keep=root)
    return hit
