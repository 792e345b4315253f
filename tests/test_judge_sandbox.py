"""The sandbox around a judged solution (judge/sandbox.py): each way out that a hostile solution
tried, refused, with the evidence on the host; and the judge still judges with a layer off."""

from __future__ import annotations

import ctypes
import os
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import gemmlab
from gemmlab.judge import sandbox
from gemmlab.judge.isolate import judge_file

SOL = Path(__file__).parent / "fixtures" / "solutions"
QUICK = dict(perf=False, groups=["example"], time_shape=(32, 32, 32), iters=2, warmup=0)
LAYERS = sandbox.layers_here()
needs = pytest.mark.skipif(not all(v == "on" for k, v in LAYERS.items() if k != "capabilities"),
                           reason=f"a sandbox layer is off here: {LAYERS}")


class Listener:
    """A TCP and a UDP socket on 127.0.0.1 at one port, and a Unix socket at `unix` (a service's, say
    an agent's), recording whatever reaches them."""

    def __init__(self, unix: Path):
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(str(unix))
        self.unix.listen()
        self.got: list[bytes] = []
        for s in (self.tcp, self.udp, self.unix):
            s.settimeout(0.2)
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop:
            for label, server in ((b"tcp:", self.tcp), (b"unix:", self.unix)):
                try:
                    conn, _ = server.accept()
                    self.got.append(label + conn.recv(100))
                    conn.close()
                except OSError:
                    pass
            try:
                self.got.append(b"udp:" + self.udp.recv(100))
            except OSError:
                pass

    def close(self) -> list[bytes]:
        self.stop = True
        self.thread.join()
        for s in (self.tcp, self.udp, self.unix):
            s.close()
        return self.got


@needs
def test_a_solution_reaches_nothing_of_the_host(tmp_path, monkeypatch):
    planted = Path(gemmlab.__file__).parent / "judge" / "planted_by_solution.py"
    home = tmp_path / "home"
    home.mkdir()
    canary = tmp_path / "canary"
    canary.write_bytes(b"c" * 1000)
    host_file = tmp_path / "host-file"
    host_file.write_text("x")
    host_file.chmod(0o600)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_judge_canary")  # the judge's, as in a user's shell
    listener = Listener(tmp_path / "agent.sock")
    left = Path("/tmp/gemmlab-left-by-solution")
    try:
        with open(canary, "r+b"):  # open in the judge, as a caller's file is
            v = judge_file(SOL / "reaches_host.py", seed=81, env={"GEMMLAB_TEST_PORT": str(listener.port),
                                                                    "GEMMLAB_TEST_REAL_HOME": str(home),
                                                                    "GEMMLAB_TEST_UNIX": str(tmp_path / "agent.sock"),
                                                                    "GEMMLAB_TEST_HOST_FILE": str(host_file)},
                           **QUICK)
    finally:
        got = listener.close()
    attempts = dict(line.removeprefix("attempt ").split(": ", 1) for line in v.log.splitlines()
                    if line.startswith("attempt "))
    assert len(attempts) == 16 and all(a.startswith("REFUSED") for a in attempts.values()), v.log
    # Where the kernel log and /etc/shadow are there (and the judge, root, could open them), the
    # sandbox is what refused them.
    for name, path in (("kmsg", "/dev/kmsg"), ("shadow", "/etc/shadow")):
        if os.path.exists(path) and os.access(path, os.R_OK):
            assert attempts[name] == "REFUSED (PermissionError)", attempts
    assert v.passed, (v.failure, v.log)  # its own scratch folder worked: it wrote there at import
    assert not planted.exists() and not left.exists() and not any(home.iterdir())
    assert canary.read_bytes() == b"c" * 1000 and host_file.stat().st_mode & 0o7777 == 0o600
    assert got == []
    assert v.sandbox == LAYERS


@needs
def test_a_solution_that_signals_its_judge_leaves_it_alive_with_a_verdict():
    """In a judge process of its own: a SIGTERM that got through would end it with 143."""
    done = subprocess.run([sys.executable, "-m", "gemmlab", "judge", str(SOL / "signals_judge.py"), "--no-perf",
                           "--group", "example", "--iters", "2", "--verbose"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "signal pid: REFUSED" in done.stdout and "signal group: REFUSED" in done.stdout
    assert "ACCEPTED" in done.stdout and "sandbox: no-new-privs" in done.stdout


def test_with_the_sandbox_switched_off_the_judge_still_judges_and_says_so(monkeypatch):
    monkeypatch.setenv(sandbox.OFF_ENV, "0")
    v = judge_file(SOL / "right_torch.py", seed=82, **QUICK)
    assert v.passed, v.failure
    assert set(v.sandbox) == set(sandbox.LAYERS) and all("switched off" in r for r in v.sandbox.values())


def test_the_layers_say_why_one_is_off():
    assert set(LAYERS) == set(sandbox.LAYERS)
    for name, reason in LAYERS.items():
        assert reason == "on" or len(reason) > 5, (name, reason)
    assert LAYERS["capabilities"] == ("on" if os.geteuid() == 0 else "not root: none to drop")


def test_scratch_env_points_every_cache_into_the_scratch_folder(tmp_path):
    env = sandbox.scratch_env(tmp_path)
    for name in ("TMPDIR", "HOME", "XDG_CACHE_HOME", "TRITON_CACHE_DIR", "CUDA_CACHE_PATH", "GEMMLAB_CACHE"):
        assert env[name].startswith(str(tmp_path)), name


def _decode(code: bytes) -> list[tuple[int, int, int, int]]:
    return [struct.unpack("HBBI", code[i:i + 8]) for i in range(0, len(code), 8)]


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
@pytest.mark.parametrize("network", [False, True])
def test_the_seccomp_program_checks_the_architecture_and_every_jump_lands_inside(machine, network):
    prog = _decode(sandbox.seccomp_program(machine, 4242, 4240, network))
    assert prog[0] == (0x20, 0, 0, 4) and prog[1][3] == sandbox._AUDIT_ARCH[machine]
    assert prog[2] == (0x06, 0, 0, 0x80000000)  # another architecture: killed
    for i, (code, jt, jf, _) in enumerate(prog):
        if code & 0x07 == 0x05:  # a jump
            assert i + 1 + max(jt, jf) < len(prog)
    assert prog[-1] == (0x06, 0, 0, 0x7FFF0000)  # the default: allowed
    targets = {k for code, _, _, k in prog if code == 0x15}
    assert 4242 in targets and (-4240) & 0xFFFFFFFF in targets
    assert (2 in targets) != network  # AF_INET refused unless a tool needs the network


_FILTERED = r"""
import ctypes, os, resource, socket, sys
from gemmlab.judge import sandbox
judge = int(sys.argv[1])
plan = sandbox.SandboxPlan(scratch="/", judge_pid=judge, judge_pgid=os.getpgid(judge), layers={"no-new-privs": "on", "seccomp": "on"})
sandbox.apply(plan)
out = []
for label, call in (("kill-judge", lambda: os.kill(judge, 0)), ("kill-self", lambda: os.kill(os.getpid(), 0)),
                    ("inet", lambda: socket.socket(socket.AF_INET)), ("unix", lambda: socket.socket(socket.AF_UNIX)),
                    ("pair", socket.socketpair),
                    ("ptrace", lambda: ctypes.CDLL(None, use_errno=True).ptrace(0, 0, 0, 0) == 0 or (_ for _ in ()).throw(OSError(ctypes.get_errno(), "ptrace"))),
                    ("prlimit-judge", lambda: resource.prlimit(judge, resource.RLIMIT_CORE)),
                    ("prlimit-self", lambda: resource.setrlimit(resource.RLIMIT_CORE, resource.getrlimit(resource.RLIMIT_CORE))),
                    ("connect-unix", lambda: socket.socket(socket.AF_UNIX).connect(sys.argv[2])),
                    ("sendto-unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"x", sys.argv[3])),
                    ("send-pair", lambda: (lambda pair: pair[0].send(b"x"))(socket.socketpair())),
                    ("sendmsg-unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendmsg([b"x"], [], 0, sys.argv[3])),
                    ("send-fds", lambda: socket.send_fds(socket.socketpair()[0], [b"x"], [0])),
                    ("io_uring", lambda: uring()),
                    ("chmod", lambda: os.chmod(sys.argv[4], 0o4777)), ("chown", lambda: os.chown(sys.argv[4], 1, 1)),
                    ("utime", lambda: os.utime(sys.argv[4], (0, 0))),
                    ("xattr", lambda: os.setxattr(sys.argv[4], "user.gemmlab", b"x"))):
    try:
        call(); out.append(label + ":ok")
    except OSError as exc:
        out.append(f"{label}:{exc.errno}")
print(" ".join(out))
"""

_URING = """
def uring():
    libc = ctypes.CDLL(None, use_errno=True)
    params = ctypes.create_string_buffer(120)
    if libc.syscall(425, 8, params) < 0:
        raise OSError(ctypes.get_errno(), "io_uring_setup")
"""


@pytest.mark.skipif(LAYERS["seccomp"] != "on", reason="no seccomp here")
def test_the_seccomp_filter_refuses_the_judge_sockets_ptrace_and_prlimit_on_others_and_nothing_else(tmp_path):
    # A stream and a datagram service's sockets, listening: without the filter both calls would succeed.
    stream, dgram = socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    stream.bind(str(tmp_path / "s.sock"))
    stream.listen()
    dgram.bind(str(tmp_path / "d.sock"))
    host_file = tmp_path / "host-file"  # a file of the host's: its mode, owner, times and attributes stay
    host_file.write_text("x")
    host_file.chmod(0o600)
    before = host_file.stat()
    with stream, dgram:
        script = _FILTERED.replace("out = []", _URING + "out = []")
        done = subprocess.run([sys.executable, "-c", script, str(os.getpid()), str(tmp_path / "s.sock"),
                               str(tmp_path / "d.sock"), str(host_file)], capture_output=True, text=True, timeout=60)
        dgram.setblocking(False)
        with pytest.raises(BlockingIOError):
            dgram.recv(10)  # nothing reached the datagram service
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["kill-judge:1", "kill-self:ok", "inet:13", "unix:ok", "pair:ok", "ptrace:1",
                                   "prlimit-judge:1", "prlimit-self:ok", "connect-unix:2", "sendto-unix:13",
                                   "send-pair:ok", "sendmsg-unix:13", "send-fds:13", "io_uring:38",
                                   "chmod:ok", "chown:ok", "utime:ok", "xattr:ok"]  # answered as done, not done
    after = host_file.stat()
    assert (after.st_mode, after.st_uid, after.st_gid, after.st_mtime_ns) == \
        (before.st_mode, before.st_uid, before.st_gid, before.st_mtime_ns)
    assert "user.gemmlab" not in os.listxattr(host_file)


def test_the_libc_calls_the_sandbox_uses_exist():
    libc = ctypes.CDLL(None, use_errno=True)
    for name in ("prctl", "syscall", "capset"):
        assert hasattr(libc, name)


def test_the_current_folder_is_not_an_import_root(tmp_path, monkeypatch):
    """`python -m` and pytest put the current folder on sys.path: it is the user's project, and a
    solution reads none of it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend("")
    assert tmp_path.resolve() not in sandbox.import_roots()
    assert all(tmp_path.resolve() != p for p in sandbox.plan(tmp_path / "scratch", []).reads)


def test_the_sandbox_opens_the_plain_and_nvidia_devices_and_shm_not_dev():
    """/dev/shm's files: torch's CUDA IPC counts shared tensors' references there (on an H100 the
    judge's yardstick could not start without it); not the kernel log, terminals, kvm."""
    opened = {str(p) for p in sandbox.devices()}
    assert "/dev/shm" in opened and "/dev/null" in opened and "/dev" not in opened
    assert all(p in sandbox.PLAIN_DEVICES or p.startswith("/dev/nvidia") for p in opened)
    assert not {"/dev/kmsg", "/dev/kvm", "/dev/tty", "/dev/console", "/dev/userfaultfd"} & opened


def test_etc_is_read_where_any_user_may_read_it_but_its_secrets(tmp_path):
    etc = tmp_path / "etc"
    (etc / "ssl" / "private").mkdir(parents=True)
    (etc / "ssl" / "certs").mkdir()
    (etc / "wireguard").mkdir()
    (etc / "alternatives").mkdir()
    for name in ("passwd", "shadow", "ld.so.cache", "wireguard/wg0.conf", "security/opasswd", "security/limits.conf",
                 "alternatives/cc"):
        (etc / name).parent.mkdir(exist_ok=True)
        (etc / name).write_text("x")
        (etc / name).chmod(0o644)
    (etc / "wireguard").chmod(0o700)  # a VPN's key: mode 0600 in a folder of 0700, as installed
    (etc / "security" / "opasswd").chmod(0o600)
    (etc / "key-link").symlink_to(etc / "security" / "opasswd")  # judged by what it points to
    granted = {p.relative_to(etc).as_posix() for p in sandbox.readable_tree(etc, sandbox.WORLD_READS["/etc"])}
    assert granted == {"passwd", "ld.so.cache", "ssl/certs", "security/limits.conf", "alternatives"}
    (etc / "security" / "opasswd").chmod(0o644)  # every entry of a folder readable: the folder whole
    assert "security" in {p.relative_to(etc).as_posix() for p in sandbox.readable_tree(etc)}
