"""``python -m gemmlab.judge.confine [--cgroup DIR] [--tasks N] [--fsize BYTES] -- CMD…``

The first thing the solution's process runs: it joins the cgroup the judge
made for it and sets its limits on itself, then becomes CMD (exec keeps the
pid). Everything CMD starts inherits both, with no window in which a child
could be born outside them; setting them from the judge after the start would
race the child's first fork. Imports nothing heavy: it must start fast.

Limits: RLIMIT_NPROC, a backstop against a fork bomb (the kernel counts every
thread of the user, and does not apply it to root; the judge counts the tree's
processes itself), RLIMIT_FSIZE (the largest file any of them may write),
RLIMIT_CORE 0 (a crash writes no core file).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys


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


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="gemmlab.judge.confine")
    ap.add_argument("--cgroup")
    ap.add_argument("--tasks", type=int)
    ap.add_argument("--fsize", type=int)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no command to run")
    confine(args.cgroup, args.tasks, args.fsize)
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
