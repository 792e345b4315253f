"""``python -m gemmlab.judge.confine [--cgroup DIR] [--tasks N] [--fsize BYTES] [--connect @NAME]
[sandbox options] -- CMD…``

The first thing the solution's process runs: it joins the cgroup the judge
made for it and sets its limits on itself, connects to the judge's channel,
puts itself in the sandbox (`sandbox`), then becomes CMD (exec keeps the pid).
Everything CMD starts inherits all of it, with no window in which a child
could be born outside; setting them from the judge after the start would
race the child's first fork. Imports nothing heavy: it must start fast.

The channel is connected before the sandbox, which scopes abstract Unix
sockets to itself: CMD finds it as an inherited descriptor (``--channel fd:N``)
and can reach no other socket of the judge's.

Limits: RLIMIT_NPROC, a backstop against a fork bomb (the kernel counts every
thread of the user, and does not apply it to root; the judge counts the tree's
processes itself), RLIMIT_FSIZE (the largest file any of them may write),
RLIMIT_CORE 0 (a crash writes no core file).
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import sys

from . import sandbox


def _user_threads(uid: int) -> int:
    count = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue
            with open(f"/proc/{name}/stat", "rb") as f:
                raw = f.read()
            count += int(raw[raw.rfind(b")") + 2:].split()[17])
        except (OSError, IndexError, ValueError):
            pass
    return count


def confine(cgroup: str | None, tasks: int | None, fsize: int | None) -> None:
    if cgroup:
        try:
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        except OSError:
            pass  # the judge checks membership itself and falls back to walking /proc
    if tasks is not None and os.getuid() != 0:
        # RLIMIT_NPROC counts every thread of the user, not only this tree's.
        limit = _user_threads(os.getuid()) + tasks
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
    if fsize is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def connect(address: str, cmd: list[str]) -> list[str]:
    """Connect to the judge's channel; `cmd` with its ``--channel`` naming the inherited descriptor."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.connect("\0" + address[1:] if address.startswith("@") else address)
    fd = sock.detach()  # the descriptor, no longer the socket object's to close
    os.set_inheritable(fd, True)
    return [f"fd:{fd}" if i and cmd[i - 1] == "--channel" else a for i, a in enumerate(cmd)]


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="gemmlab.judge.confine")
    ap.add_argument("--cgroup")
    ap.add_argument("--tasks", type=int)
    ap.add_argument("--fsize", type=int)
    ap.add_argument("--connect")
    ap.add_argument("--scratch")
    ap.add_argument("--read", action="append")
    ap.add_argument("--write", action="append")
    ap.add_argument("--judge")
    ap.add_argument("--layers")
    ap.add_argument("--network", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no command to run")
    confine(args.cgroup, args.tasks, args.fsize)
    if args.connect:
        try:
            cmd = connect(args.connect, cmd)
        except OSError as exc:
            sys.stderr.write(f"gemmlab judge: the solution's process could not reach its judge: {exc}\n")
            os._exit(70)
    if args.scratch:
        try:
            sandbox.apply(sandbox.SandboxPlan.from_args(args))
        except sandbox.SandboxError as exc:  # the judge planned this layer: never run without it
            sys.stderr.write(f"gemmlab judge: the sandbox could not be applied ({exc.strerror}: "
                             f"{exc.filename or exc}); the solution was not run\n")
            os._exit(70)
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
