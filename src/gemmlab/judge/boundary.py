"""The boundary around one solution's processes: what keeps them in, counts them and ends them.

Two mechanisms, the first where the kernel allows it, the second always:

* a **cgroup v2** of its own, made under the judge's cgroup when that is
  writable (root, or a delegated subtree). The solution's process joins it
  before it runs anything (`confine`), every descendant inherits it, and
  ``cgroup.kill`` ends them all in one atomic step; ``pids.max`` caps their
  number where the pids controller is enabled there. Root can still move a
  process out of it, so it is never the only mechanism.
* the **process tree**: the judge is a child subreaper, so every descendant,
  orphaned or not, is found by walking from the solution's process (`procs`);
  the session's process group is killed as a whole; the walk is repeated until
  two walks in a row find nothing alive.

No PID namespace: CUDA IPC, which shares the buffers on a GPU, does not work
across PID namespaces. ``GEMMLAB_JUDGE_CGROUP=0`` switches cgroups off (tests
use it to exercise the second mechanism alone).
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import time
from pathlib import Path

from . import procs
from .sandbox import SandboxPlan

_names = itertools.count()
#: Threads and processes together that the solution's tree may hold: a backstop against a fork
#: bomb (cgroup pids.max, RLIMIT_NPROC), far above what torch's thread pools need on a large machine.
#: The process limit proper is `Boundary.process_limit`, which the judge counts.
TASKS_MAX = 8192


def _own_cgroup2_dir() -> Path | None:
    """This process's cgroup v2 folder, if a cgroup2 hierarchy is mounted and holds it."""
    try:
        own = next((line.split(":", 2)[2].strip() for line in Path("/proc/self/cgroup").read_text().splitlines()
                    if line.startswith("0::")), None)
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    if own is None:
        return None
    for line in mounts:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if right.split()[:1] != ["cgroup2"] or len(fields) < 5:
            continue
        root, point = fields[3], fields[4]
        rel = os.path.relpath(own, root)
        if not rel.startswith(".."):
            return Path(point) / ("" if rel == "." else rel)
    return None


class Cgroup:
    """A cgroup v2 folder of the judge's making, for one solution."""

    def __init__(self, path: Path):
        self.path = path

    @classmethod
    def make(cls) -> Cgroup | None:
        if os.environ.get("GEMMLAB_JUDGE_CGROUP", "1") == "0":
            return None
        parent = _own_cgroup2_dir()
        if parent is None:
            return None
        path = parent / f"gemmlab-judge-{os.getpid()}-{next(_names)}"
        try:
            path.mkdir()
        except OSError:
            return None
        return cls(path)

    def _read(self, name: str) -> str:
        try:
            return (self.path / name).read_text()
        except OSError:
            return ""

    def _write(self, name: str, value: str) -> bool:
        try:
            (self.path / name).write_text(value)
            return True
        except OSError:
            return False

    def limit_pids(self, n: int) -> bool:
        return "pids" in self._read("cgroup.controllers").split() and self._write("pids.max", str(n))

    def pids_refused(self) -> int:
        """How many forks pids.max refused."""
        for line in self._read("pids.events").splitlines():
            key, _, value = line.partition(" ")
            if key == "max":
                return int(value or 0)
        return 0

    def members(self) -> set[int]:
        return {int(x) for x in self._read("cgroup.procs").split()}

    def adopt(self, pid: int) -> bool:
        return self._write("cgroup.procs", str(pid))

    def kill(self) -> None:
        if not self._write("cgroup.kill", "1"):  # kernels before 5.14 have no cgroup.kill
            for pid in self.members():
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    def remove(self, wait_s: float = 2.0) -> None:
        """Delete the folder once it is empty (a killed process leaves it a moment later)."""
        end = time.monotonic() + wait_s
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > end:
                    return
                time.sleep(0.01)


class Boundary:
    """One solution's processes: started confined, counted, and ended together."""

    def __init__(self, process_limit: int, file_limit: int | None, sandbox: SandboxPlan | None = None):
        self.process_limit = process_limit
        self.file_limit = file_limit
        self.sandbox = sandbox
        self.cgroup = Cgroup.make()
        if self.cgroup is not None:
            self.cgroup.limit_pids(TASKS_MAX)
        self.root = 0
        self.start = 0

    def wrap(self, cmd: list[str], connect: str | None = None) -> list[str]:
        """`cmd` behind the confine step, which applies the limits, connects to `connect` (the
        judge's channel) and enters the sandbox before anything else runs."""
        extra = ["--cgroup", str(self.cgroup.path)] if self.cgroup else []
        extra += ["--tasks", str(TASKS_MAX)]
        if self.file_limit is not None:
            extra += ["--fsize", str(self.file_limit)]
        if connect:
            extra += ["--connect", connect]
        if self.sandbox is not None:
            extra += self.sandbox.to_args()
        return [sys.executable, "-m", "gemmlab.judge.confine", *extra, "--", *cmd]

    def attach(self, pid: int) -> None:
        self.root = pid
        self.start = procs.start_time(pid) or 0

    def confirm(self, pid: int) -> None:
        """The process that answered the judge is in the cgroup, or the cgroup is not relied on."""
        if self.cgroup is not None and pid not in self.cgroup.members() and not self.cgroup.adopt(pid):
            self.cgroup.remove(0)
            self.cgroup = None

    def pids(self) -> set[int]:
        found = procs.tree(self.root, self.start)
        if self.cgroup is not None:
            found |= self.cgroup.members()
        found.discard(os.getpid())
        return found

    def forks_refused(self) -> int:
        return self.cgroup.pids_refused() if self.cgroup else 0

    def kill(self, leader_unreaped: bool, deadline_s: float = 3.0) -> set[int]:
        """End every process inside; return those that were still running (the root among them)."""
        running = set(procs.alive(self.pids()))
        if self.cgroup is not None:
            self.cgroup.kill()
        members = self.cgroup.members if self.cgroup else None
        return running | procs.kill_tree(self.root, self.start, deadline_s,
                                         group=self.root if leader_unreaped else None, members=members)

    def close(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()
