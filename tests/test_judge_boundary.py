"""Issue 29's boundary: guard bytes around every buffer, C's tensor object, an arena the solution
cannot shrink, and a process boundary nothing escapes (a fork chain, too many processes, a large
file, RAM held in /dev/shm or a memfd). Each with the hostile fixture that motivated it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import torch

from gemmlab.judge import boundary, guards, procs, sandbox, scratch
from gemmlab.judge.arena import Arena, layout
from gemmlab.judge.isolate import judge_file
from gemmlab.judge.sandbox import WRITABLE_ENV

SOL = Path(__file__).parent / "fixtures" / "solutions"
#: The examples only (2 cases), 2 timed calls at 32³: the fact under test is elsewhere.
QUICK = dict(perf=False, groups=["example"], time_shape=(32, 32, 32), iters=2, warmup=0)


# -- guards --------------------------------------------------------------------------------

def test_guards_name_buffer_side_and_first_offset():
    lay = layout((5, 7, 3))
    arena = Arena(lay.end, torch.device("cpu"))
    try:
        pattern = guards.fresh_pattern()
        guards.fill(arena.tensor, lay, pattern)
        assert guards.check(arena.tensor, lay, pattern) == ""
        words = arena.tensor.view(torch.int32)
        c = lay.regions["C"]
        words[c.end + 3 + 2] = pattern ^ 1  # C[6][2] of a 5×3 C: 2 rows and 2 floats past its end
        words[lay.regions["B"].offset - 1] = pattern ^ 1  # just before B
        text = guards.check(arena.tensor, lay, pattern)
        first, second = text.split("; ")
        assert first == ("wrote past the end of C: 1 float(s) of the guard after it changed, the first "
                         "5 floats past its last element (C[6][2] if C had more rows)")
        assert second.startswith("wrote before the start of B") and "nearest 1 float before" in second
    finally:
        arena.close()


@pytest.mark.parametrize("name,reason", [
    ("writes_row_past_c.py", "wrote past the end of C: 2 float(s) of the guard after it changed, the first "
                             "0 floats past its last element (C[2][0] if C had more rows)"),
    ("writes_before_a.py", "wrote before the start of A: 1 float(s) of the guard before it changed, the "
                           "nearest 1 float before its first element"),
])
def test_a_write_outside_the_buffers_is_rejected_with_where(name, reason):
    v = judge_file(SOL / name, seed=51, **QUICK)
    assert not v.passed and v.exit_code == 1
    assert v.failure == f"example-1: {reason}", v.failure


# -- C's tensor object ------------------------------------------------------------------------

@pytest.mark.parametrize("name,reason", [
    # The bytes are right: only the tensor object says what happened.
    ("transposes_c.py", "example-1: C's tensor object was changed (its shape, strides or offset: "
                        "transposed or reshaped in place); the judge reads the buffer it passed"),
    ("swaps_c_storage.py", "example-1: the solution replaced C's storage: its C tensor points at other "
                           "memory after the call, so what it wrote there never reached C; C itself: "
                           "4 of 4 elements never written"),
])
def test_reasons_say_what_was_done_to_c(name, reason):
    v = judge_file(SOL / name, seed=52, **QUICK)
    assert not v.passed and v.failure.startswith(reason), v.failure
    assert "stream" not in v.failure


# -- the arena --------------------------------------------------------------------------------

def _shm() -> set[str]:
    """/dev/shm's entries, less the mkdtemp folders of an older judge (another checkout running its
    tests on the same machine): this judge makes no file anywhere for its arena or channel."""
    names = os.listdir("/dev/shm") if os.path.isdir("/dev/shm") else []
    return {n for n in names if not (re.fullmatch(r"gemmlab-judge-[a-z0-9_]{8}", n)
                                     and os.path.isdir(f"/dev/shm/{n}"))}


def test_an_arena_attack_is_refused_and_leaves_nothing_in_dev_shm(tmp_path):
    before = _shm()
    # A file of the judge's caller, open while it judges, whose path names gemmlab (a virtual
    # environment's fonts were truncated so once): the attack must leave it whole.
    canary = tmp_path / "gemmlab-venv-canary"
    canary.write_bytes(b"x" * 4096)
    with open(canary, "rb"):
        v = judge_file(SOL / "attacks_arena.py", seed=53, **QUICK)
    assert canary.stat().st_size == 4096
    assert v.exit_code == 0 and v.passed, (v.failure, v.log)
    lines = v.log.splitlines()
    # It found the judge's own memfd through /proc and was refused: sealed against shrinking.
    assert any(line.startswith("refused /proc/") and "PermissionError" in line for line in lines), v.log
    assert not any(line.startswith("truncated") for line in lines), v.log
    assert _shm() == before


def test_the_arena_is_sealed_against_shrinking_and_growing():
    arena = Arena(1024, torch.device("cpu"))
    try:
        with pytest.raises(PermissionError):
            os.ftruncate(arena.fd, 0)
        with pytest.raises(PermissionError):
            os.ftruncate(arena.fd, 1 << 20)
        assert os.readlink(f"/proc/self/fd/{arena.fd}").startswith("/memfd:gemmlab-arena")
    finally:
        arena.close()


# -- the process boundary ---------------------------------------------------------------------

def _cgroups_here() -> bool:
    made = boundary.Cgroup.make()
    if made is None:
        return False
    made.remove(0)
    return True


@pytest.mark.parametrize("mechanism", ["cgroup", "walk"])
def test_a_fork_chain_does_not_outlive_the_verdict(tmp_path, monkeypatch, mechanism):
    if mechanism == "cgroup" and not _cgroups_here():
        pytest.skip("no writable cgroup v2 here")
    if mechanism == "walk":
        monkeypatch.setenv("GEMMLAB_JUDGE_CGROUP", "0")
    monkeypatch.setenv(WRITABLE_ENV, str(tmp_path))  # where the test reads the chain's heartbeat
    beat = tmp_path / "heartbeat"
    v = judge_file(SOL / "fork_chain.py", seed=54, env={"GEMMLAB_TEST_HEARTBEAT": str(beat)}, **QUICK)
    assert v.exit_code in (0, 1) and v.killed >= 1, v
    assert beat.exists() and beat.stat().st_size > 0  # the chain did run
    size = beat.stat().st_size
    time.sleep(1.0)
    assert beat.stat().st_size == size, "the chain kept running after the verdict"


def test_too_many_processes_is_a_named_limit():
    v = judge_file(SOL / "forks_many.py", seed=55, process_limit=16, **QUICK)
    assert not v.passed and v.exit_code == 1
    assert "process limit: the solution ran" in v.failure and "over the limit of 16" in v.failure, v.failure


def test_a_file_past_the_write_limit_is_cut_off(tmp_path, monkeypatch):
    monkeypatch.setenv(WRITABLE_ENV, str(tmp_path))
    big = tmp_path / "big"
    v = judge_file(SOL / "writes_big_file.py", seed=56, file_limit=1 << 20, env={"GEMMLAB_TEST_BIGFILE": str(big)},
                   **QUICK)
    assert not v.passed and "File too large" in v.failure and "limits any one file" in v.failure, v.failure
    assert big.stat().st_size <= 1 << 20


def test_the_scratch_folder_s_disk_is_a_named_limit_held_files_counted():
    """Deleted files held open count: 96 MiB in the folder alone stays under 150 MiB. (Under the
    default limit every accepted fixture shows the watch trips nothing on its own.)"""
    v = judge_file(SOL / "fills_scratch.py", seed=59, disk_limit=150 << 20, **QUICK)
    assert not v.passed and "disk limit: the solution's files in its scratch folder held" in v.failure, v.failure


def test_the_scratch_folder_counts_every_entry_s_blocks_and_the_entries(tmp_path):
    """A long link's target takes a block and no file; an empty file an inode and no block."""
    (tmp_path / "sub").mkdir()
    for i in range(10):
        os.symlink("t" * 1000, tmp_path / "sub" / f"link{i}")
        (tmp_path / f"empty{i}").touch()
    used = scratch.usage(tmp_path)
    assert used.entries == 21 and used.unmeasured == ""
    assert used.bytes == sum(p.lstat().st_blocks * 512 for p in [*tmp_path.rglob("*")])


def test_a_scratch_folder_nested_past_the_recursion_limit_and_path_max_is_named_and_removed():
    """A red-team's solution nested 1500 folders (shutil.rmtree died in a RecursionError, leaving the
    folder and its bytes on the host) and folders past PATH_MAX (their bytes went uncounted)."""
    before = set(Path(tempfile.gettempdir()).glob("gemmlab-solution-*"))
    v = judge_file(SOL / "fills_scratch.py", seed=59, env={"GEMMLAB_TEST_SCRATCH_DEEP": "1500"}, **QUICK)
    assert not v.passed and "disk limit: the solution's scratch folder holds a folder the judge cannot measure: " \
        "File name too long" in v.failure, v.failure
    assert set(Path(tempfile.gettempdir()).glob("gemmlab-solution-*")) == before


def test_an_error_of_the_judge_s_own_still_ends_the_solution_and_removes_its_scratch_folder(monkeypatch):
    """A bug in the watch (here: a walk that raises) must not leave the scratch folder, or the
    solution's processes, on the host."""
    def broken(pids):
        raise RuntimeError("the judge's own bug")

    monkeypatch.setattr(procs, "held_sockets", broken)
    before = set(Path(tempfile.gettempdir()).glob("gemmlab-solution-*"))
    with pytest.raises(RuntimeError, match="the judge's own bug"):
        judge_file(SOL / "right_torch.py", seed=59, **QUICK)
    assert set(Path(tempfile.gettempdir()).glob("gemmlab-solution-*")) == before


def test_a_deleted_file_only_mapped_counts_toward_the_scratch_limit(tmp_path):
    """mmap, close, unlink: no descriptor and no folder entry left, the blocks still held."""
    script = ("import mmap, os, sys, time\n"
              "path = os.path.join(sys.argv[1], 'f')\n"
              "fd = os.open(path, os.O_CREAT | os.O_RDWR); os.posix_fallocate(fd, 0, 8 << 20)\n"
              "m = mmap.mmap(fd, 8 << 20); os.close(fd); os.unlink(path)\n"
              "print('ready', flush=True); time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        # Python's mmap keeps a duplicate descriptor: count the mapping alone, as a ctypes mmap leaves it.
        assert procs._mapped_deleted({proc.pid}, f"{tmp_path}/") == 8 << 20
        assert procs.held_deleted_files({proc.pid}, tmp_path) >= 8 << 20
    finally:
        proc.kill()
        proc.wait()


def test_links_in_the_scratch_folder_count_toward_its_limit(tmp_path):
    probe = tmp_path / "probe"
    probe.symlink_to("t" * 1000)
    if probe.lstat().st_blocks == 0:
        pytest.skip("a long link takes no block on this filesystem")
    links = (160 << 20) // (probe.lstat().st_blocks * 512) + 1
    v = judge_file(SOL / "fills_scratch.py", seed=59, disk_limit=150 << 20,
                   env={"GEMMLAB_TEST_SCRATCH_LINKS": str(links)}, **QUICK)
    assert not v.passed and "disk limit: the solution's files in its scratch folder held" in v.failure, v.failure


def _socket_buffer_bytes() -> int:
    try:
        return 2 * int(Path("/proc/sys/net/core/wmem_max").read_text())  # the kernel doubles SO_SNDBUF
    except (OSError, ValueError):
        return 0


@pytest.mark.skipif(_socket_buffer_bytes() * 400 < 600 << 20, reason="this kernel's socket buffers are too small "
                    "for 600 MiB in 400 sockets")
def test_bytes_queued_on_its_sockets_count_against_the_memory_limit():
    """A red-team's solution queued 3 GiB on socketpairs it never read, under a 1 GiB limit: ACCEPTED."""
    v = judge_file(SOL / "hoards_socket_queues.py", seed=57, memory_limit=768 << 20, **QUICK)
    assert not v.passed and "memory limit" in v.failure and "socket queues" in v.failure, v.failure


def test_memfd_ram_counts_against_the_memory_limit():
    v = judge_file(SOL / "hoards_memfd.py", seed=57, memory_limit=512 << 20, **QUICK)
    assert not v.passed and "memory limit" in v.failure and "memfd" in v.failure, v.failure


@pytest.mark.skipif(not os.path.isdir("/dev/shm") or os.statvfs("/dev/shm").f_bavail * os.statvfs("/dev/shm").f_frsize
                    < 800 << 20, reason="/dev/shm is too small here for 600 MiB")
def test_dev_shm_counts_against_the_memory_limit(monkeypatch):
    """Where no sandbox keeps the solution out of /dev/shm (an old kernel), what it puts there is
    charged to it: the test lets it in."""
    monkeypatch.setenv(WRITABLE_ENV, "/dev/shm")
    path = f"/dev/shm/gemmlab-test-{os.getpid()}"
    try:
        v = judge_file(SOL / "fills_shm.py", seed=58, memory_limit=512 << 20,
                       env={"GEMMLAB_TEST_SHM_FILE": path}, **QUICK)
    finally:
        if os.path.exists(path):
            os.unlink(path)
    assert not v.passed and "memory limit" in v.failure and "/dev/shm" in v.failure, v.failure


@pytest.mark.skipif(not os.path.isdir("/dev/shm") or os.statvfs("/dev/shm").f_bavail * os.statvfs("/dev/shm").f_frsize
                    < 800 << 20, reason="/dev/shm is too small here for 600 MiB")
@pytest.mark.skipif(sandbox.layers_here()["landlock"] != "on", reason="without Landlock /dev/shm's growth is charged")
def test_a_neighbour_filling_dev_shm_does_not_reject_a_right_solution():
    """A busy machine: another process puts 600 MiB in /dev/shm while a right solution runs under a
    768 MiB limit. Under Landlock the solution can make no file there: it is not charged."""
    path = f"/dev/shm/gemmlab-test-neighbour-{os.getpid()}"
    stop = threading.Event()

    def neighbour():  # once the solution's process runs: growth after the judge took its measure
        while not stop.is_set() and not any(b"right_torch.py" in Path(p, "cmdline").read_bytes()
                                            for p in Path("/proc").glob("[0-9]*") if _readable(p)):
            time.sleep(0.05)
        with open(path, "wb") as f:
            for _ in range(600):
                f.write(b"\1" * (1 << 20))
        stop.wait(60)

    thread = threading.Thread(target=neighbour)
    thread.start()
    try:
        v = judge_file(SOL / "right_torch.py", seed=60, memory_limit=768 << 20, **QUICK)
    finally:
        stop.set()
        thread.join()
        os.unlink(path)
    assert v.passed, v.failure


def _readable(proc: Path) -> bool:
    try:
        (proc / "cmdline").read_bytes()
        return True
    except OSError:
        return False


def test_tmpfs_growth_is_measured(tmp_path):
    if "/dev/shm" not in procs.TMPFS:
        pytest.skip("/dev/shm is not a tmpfs here")
    path = f"/dev/shm/gemmlab-test-grow-{os.getpid()}"
    before = procs.tmpfs_used_bytes()
    try:
        with open(path, "wb") as f:
            f.write(b"\1" * (16 << 20))
        assert procs.tmpfs_used_bytes() - before >= 15 << 20
    finally:
        os.unlink(path)


def test_the_baseline_runs_only_once_the_solution_s_processes_are_gone(tmp_path, monkeypatch):
    from gemmlab.judge import isolate

    pidfile = tmp_path / "pids"
    alive_at_baseline = []
    original = isolate._baseline

    def checked(*args, **kwargs):
        pids = [int(p) for p in pidfile.read_text().split()]
        alive_at_baseline.extend(p for p in pids if procs.alive([p]))
        return original(*args, **kwargs)

    monkeypatch.setattr(isolate, "_baseline", checked)
    monkeypatch.setenv(WRITABLE_ENV, str(tmp_path))
    v = judge_file(SOL / "busy_after_timing.py", seed=59, perf=False, groups=["example"],
                   time_shape=(32, 32, 32), iters=3, warmup=0, env={"GEMMLAB_TEST_PIDFILE": str(pidfile)})
    assert v.timing is not None and "baseline_ms" in v.timing, v.failure
    assert len(pidfile.read_text().split()) == 2  # both burners started
    assert alive_at_baseline == []
    assert v.killed == 2
