"""The sandbox around a solution's processes: what they may read, write, reach and signal.

Layers, each on where this machine allows it (`plan` says which, and why any is off; the
verdict reports it), applied by the confine step to itself just before it becomes the
harness, so that everything the solution starts inherits them:

* **no new privileges** (``PR_SET_NO_NEW_PRIVS``): no set-uid program or file capability
  gives a descendant more than the solution has; Landlock and seccomp need it.
* **capabilities dropped** where the judge runs as root: root's capabilities pass every
  file permission and every ptrace check. Emptying the bounding set keeps them from coming
  back at the next exec.
* **Landlock** (Linux ≥ 5.13; https://docs.kernel.org/userspace-api/landlock.html): writes
  only under the scratch folder and to the plain and NVIDIA device files; reads only where
  Python, its packages, gemmlab, the solution file, the CUDA libraries and the toolchains live,
  and what of /etc and /run any user may read, but their secrets; no TCP bind or connect (ABI ≥ 4); signals and abstract Unix sockets
  scoped to the sandbox (ABI ≥ 6).
  A sandboxed process also cannot ptrace, nor open ``/proc/PID/{mem,fd,environ}`` of, a
  process outside its domain: the judge.
* **seccomp** (a short deny list, answered with EPERM): ptrace, the cross-process memory
  calls, mounts and namespaces, kernel keys and modules, BPF; signals and pidfds aimed at
  the judge's pid or process group; prlimit on any other process; IPv4 and IPv6 sockets (UDP
  too, which Landlock does not cover); connect, sendto with an address and sendmsg (a Unix
  socket's path reaches any service's; the CUDA driver's look for an MPS daemon gets the ENOENT it
  gets without one); io_uring (ENOSYS); and chmod, chown, utime and xattr calls, which Landlock
  does not cover either, answered as done without being done.

The judge itself makes itself non-dumpable while a solution runs (`set_dumpable`), a
second lock on its ``/proc`` files where Landlock is missing.

Direct system calls through ctypes: the three Landlock calls and one seccomp filter are a
few dozen lines with no dependency, where the Python bindings (landlockpy, py-landlock,
pyseccomp) each cover one of the two layers and would be a wheel more in every judge's
environment, the GPU machine's too (it has no package index).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import stat
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

#: Layers in the order they are applied; `SandboxPlan.layers` maps each to "on" or why it is off.
LAYERS = ("no-new-privs", "capabilities", "landlock", "seccomp")
#: GEMMLAB_JUDGE_SANDBOX=0 switches the sandbox off (a user debugging their own solution).
OFF_ENV = "GEMMLAB_JUDGE_SANDBOX"
#: Folders (os.pathsep between them) the solution may write besides its scratch folder, set in the
#: judge's own environment: where a test or a user wants to read what a solution wrote.
WRITABLE_ENV = "GEMMLAB_JUDGE_WRITABLE"

# -- Landlock (include/uapi/linux/landlock.h) ------------------------------------------------
_SYS_LANDLOCK = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_MAKE_AND_REMOVE = sum(1 << b for b in range(4, 13))  # remove dir/file, make char/dir/reg/sock/fifo/block/sym
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1


def _fs_rights(abi: int) -> int:
    """Every filesystem right this ABI knows: all of them are handled, so whatever no rule grants is denied."""
    rights = EXECUTE | WRITE_FILE | READ_FILE | READ_DIR | _MAKE_AND_REMOVE
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


READ = EXECUTE | READ_FILE | READ_DIR
# -- seccomp (include/uapi/linux/seccomp.h, filter.h, audit.h) -------------------------------
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_DENIED = {  # name: (x86_64, aarch64)
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "unshare": (272, 97), "setns": (308, 268), "kexec_load": (246, 104), "kexec_file_load": (320, 294),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106), "bpf": (321, 280),
    "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218), "reboot": (169, 142),
    "swapon": (167, 224), "swapoff": (168, 225), "syslog": (103, 116), "acct": (163, 89),
    "settimeofday": (164, 170), "clock_settime": (227, 112), "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264), "userfaultfd": (323, 282), "kcmp": (312, 272), "pidfd_getfd": (438, 438),
    "mount_setattr": (442, 442), "fsopen": (430, 430), "fsmount": (432, 432), "move_mount": (429, 429),
    "open_tree": (428, 428), "fspick": (433, 433), "quotactl": (179, 60),
}
#: io_uring: its operations (connect, socket, sendmsg, open) run inside the kernel where this filter
#: never sees them. ENOSYS, as on a kernel without it: a library that probes for it falls back.
_URING = {"io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427)}
_ENOSYS = 38
#: A file's mode, owner, times and extended attributes: Landlock does not cover them, and root (the
#: judge's user, often) owns the system's files, so chmod 4755 /bin/bash or 0666 of the package would
#: pass. Answered as done, not done: toolchains (torch.compile's copy2, ld's chmod +x) go on. -1: the
#: architecture has no such call.
_METADATA = {"chmod": (90, -1), "fchmod": (91, 52), "fchmodat": (268, 53), "fchmodat2": (452, 452),
             "chown": (92, -1), "fchown": (93, 55), "lchown": (94, -1), "fchownat": (260, 54),
             "utime": (132, -1), "utimes": (235, -1), "futimesat": (261, -1), "utimensat": (280, 88),
             "setxattr": (188, 5), "lsetxattr": (189, 6), "fsetxattr": (190, 7), "removexattr": (197, 14),
             "lremovexattr": (198, 15), "fremovexattr": (199, 16), "setxattrat": (463, 463),
             "removexattrat": (466, 466)}
#: Calls whose first argument is a pid (or -pgid): denied where it names the judge.
_AIMED = {"kill": (62, 129), "tkill": (200, 130), "tgkill": (234, 131), "rt_sigqueueinfo": (129, 138),
          "rt_tgsigqueueinfo": (297, 240), "pidfd_open": (434, 434)}
#: prlimit64 on another process (a pid other than 0, itself): with the judge's uid (root's, often)
#: it could cut the judge's CPU time or open files, and so kill it or blind its limits.
_PRLIMIT = (302, 261)
_SOCKET = (41, 198)
_AF_INET, _AF_INET6 = 2, 10
#: connect, and sendto with an address: a Unix socket reaches any service's (an agent's, a daemon's)
#: by its path, which Landlock does not cover. Refused, not the socket itself: the CUDA driver makes
#: one at cuInit to look for an MPS daemon, and takes ENOENT as "none" (the answer it gets without
#: one). The judge's channel is connected before the filter; socketpair needs neither call.
_CONNECT, _SENDTO = (42, 203), (44, 206)
#: sendmsg and sendmmsg: the filter cannot read their address (a Unix datagram service's path), and
#: they pass file descriptors (a memfd in a socket's queue holds RAM in no process the judge counts).
#: The judge's channel sends with send; nothing a solution runs needs them.
_SENDMSG = {"sendmsg": (46, 211), "sendmmsg": (307, 269)}
_ENOENT = 2
_EPERM, _EACCES = 1, 13
_RET_ALLOW, _RET_ERRNO, _RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_X32_BIT = 0x40000000
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_PR_CAPBSET_DROP, _PR_SET_DUMPABLE, _PR_GET_DUMPABLE = 24, 4, 3


@dataclass
class SandboxPlan:
    """What the confine step applies to itself: the folders and files, and the layers this machine has."""

    scratch: Path
    reads: list[Path] = field(default_factory=list)
    writes: list[Path] = field(default_factory=list)
    judge_pid: int = 0
    judge_pgid: int = 0
    layers: dict[str, str] = field(default_factory=dict)  # layer: "on" or why it is off
    #: IP sockets allowed: a profiler or sanitizer wrapped around the solution talks to its own
    #: front end over one (the solution runs inside it, under every other rule).
    network: bool = False

    @classmethod
    def from_args(cls, args) -> SandboxPlan:
        pid, _, pgid = (args.judge or "0:0").partition(":")
        chosen = set(filter(None, (args.layers or "").split(",")))
        return cls(Path(args.scratch), [Path(p) for p in args.read or []], [Path(p) for p in args.write or []],
                   int(pid), int(pgid or 0), {k: "on" for k in LAYERS if k in chosen}, bool(args.network))

    def to_args(self) -> list[str]:
        out = ["--scratch", str(self.scratch), "--judge", f"{self.judge_pid}:{self.judge_pgid}"]
        if self.network:
            out.append("--network")
        for p in self.reads:
            out += ["--read", str(p)]
        for p in self.writes:
            out += ["--write", str(p)]
        return out + ["--layers", ",".join(k for k, v in self.layers.items() if v == "on")]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or this CPU is not one this module knows)."""
    calls = _SYS_LANDLOCK.get(platform.machine())
    if calls is None:
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    got = libc.syscall(ctypes.c_long(calls[0]), None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(got))


def _seccomp_reason() -> str:
    """"on", or why seccomp filters cannot be installed here."""
    if platform.machine() not in _AUDIT_ARCH:
        return f"no system-call table for {platform.machine()}"
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return "cannot read /proc/self/status"
    if "Seccomp:" not in status:
        return "the kernel has no seccomp"
    return "on"


def layers_here() -> dict[str, str]:
    """Each layer: "on" where this machine can apply it, else why not."""
    if os.environ.get(OFF_ENV, "1") == "0":
        return {name: f"switched off by {OFF_ENV}=0" for name in LAYERS}
    if not sys.platform.startswith("linux"):
        return {name: "not Linux" for name in LAYERS}
    abi = landlock_abi()
    return {
        "no-new-privs": "on",
        "capabilities": "on" if os.geteuid() == 0 else "not root: none to drop",
        "landlock": "on" if abi else "the kernel has no Landlock (Linux ≥ 5.13, enabled in the LSM list)",
        "seccomp": _seccomp_reason(),
    }


def _unique(paths) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p is None:
            continue
        p = Path(p)
        try:
            p = p.resolve()
        except OSError:
            continue
        if p.exists() and p not in out:
            out.append(p)
    return out


#: System folders a solution's process reads whole: libraries, device and process information, the
#: toolchains' usual homes. /etc and /run are read entry by entry (`readable_tree`).
SYSTEM_READS = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/opt", "/proc", "/sys")
#: Folders a solution reads only what any user of the machine may (`readable_tree`): root (the judge's
#: user, often, whose dropped capabilities still leave it the owner) could read a key of mode 0600
#: there, a password hash, a VPN's or a service's secret; and paths hidden even where every user may read
#: them (a container's secrets are mode 0444).
WORLD_READS = {"/etc": ("shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d", "ssh", "ssl/private"),
               "/run": ("secrets", "credentials", "user")}
#: Device files a solution opens: the plain ones, /dev/shm's files (torch's CUDA IPC keeps the
#: reference counts of the tensors the judge shares with it there; opened, never made) and the
#: NVIDIA driver's (`devices`). Not /dev as a whole, where root could write the kernel log, a
#: terminal, /dev/kvm or /dev/userfaultfd.
PLAIN_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/shm")


def devices() -> list[Path]:
    """The device files a sandboxed process may open: PLAIN_DEVICES and /dev/nvidia* (nvidiactl,
    nvidiaN, nvidia-uvm, nvidia-caps/…: what the CUDA driver opens)."""
    return [*map(Path, PLAIN_DEVICES), *sorted(Path("/dev").glob("nvidia*"))]


def readable_tree(root: Path, hidden: tuple[str, ...] = ()) -> list[Path]:
    """What of `root` any user may read (the others' read bit; a folder's read and search bits), but
    the `hidden` paths (relative to `root`): a folder all of whose entries are so, whole; else its
    entries one by one. A link is judged by what it points to."""
    return _readable(root, hidden)[0]


def _readable(folder: Path, hidden: tuple[str, ...]) -> tuple[list[Path], bool]:
    """(grants under `folder`, whether all of it may be granted as one)."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return [], False
    grants: list[Path] = []
    whole = True
    for entry in entries:
        inner = tuple(h.split("/", 1)[1] for h in hidden if h.startswith(entry.name + "/"))
        try:
            mode = entry.stat().st_mode
        except OSError:
            continue  # a dangling link: nothing to read either way
        if entry.name in hidden or not mode & stat.S_IROTH or (stat.S_ISDIR(mode) and not mode & stat.S_IXOTH):
            whole = False
        elif stat.S_ISDIR(mode) and not entry.is_symlink():
            below, all_of_it = _readable(entry, inner)
            whole &= all_of_it
            grants += [entry] if all_of_it else below
        else:
            grants.append(entry)
    return ([folder] if whole else grants), whole


def import_roots() -> list[Path]:
    """Where this Python finds its modules: the interpreter's prefixes and every folder on sys.path."""
    import site

    # Not the current folder ('' or its path on sys.path, `python -m` and pytest put it there): that is
    # the user's project, not where modules are installed.
    here = os.getcwd()
    installed = [p for p in sys.path if p and os.path.abspath(p) != here]
    roots = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *installed,
             *getattr(site, "getsitepackages", list)()]
    with contextlib.suppress(Exception):
        roots.append(site.getusersitepackages())
    return [p for p in _unique(roots) if p.is_dir()]


def plan(scratch: Path, files: list[Path], tool: bool = False) -> SandboxPlan:
    """The sandbox for one solution: `scratch` its only writable folder, `files` (the solution, its
    built library) readable beside the import roots, the toolchains and the system's folders.
    `tool`: a profiler or sanitizer runs the solution, and needs IP sockets and /dev/shm."""
    from ..provenance import PACKAGE_ROOT

    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    world = [p for root, hidden in WORLD_READS.items() for p in readable_tree(Path(root), hidden)]
    reads = _unique([*SYSTEM_READS, *world, *import_roots(), PACKAGE_ROOT, cuda_home, *files])
    also = [p for p in os.environ.get(WRITABLE_ENV, "").split(os.pathsep) if p]
    writes = _unique([scratch, "/dev/shm" if tool else None, *also])
    return SandboxPlan(scratch=Path(scratch), reads=reads, writes=writes, judge_pid=os.getpid(),
                judge_pgid=os.getpgrp(), layers=layers_here(), network=tool)


#: The judge's variables a solution's process keeps (`confined_env`): where Python, the CUDA toolkit
#: and the languages' toolchains are and how they are set up. Every other one stays with the judge:
#: a token or an agent's socket in the user's shell is not the solution's to read.
KEPT_ENV = ("PATH", "LD_LIBRARY_PATH", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME", "VIRTUAL_ENV",
            "CC", "CXX", "CUDAHOSTCXX")
KEPT_ENV_PREFIXES = ("LC_", "PYTHON", "CONDA_", "CUDA", "NVCC_", "NVIDIA_", "TRITON_", "TORCH", "PYTORCH_",
                     "XLA_", "JAX_", "OMP_", "MKL_", "OPENBLAS_", "KMP_", "MODULAR_", "MOJO_", "TILELANG_",
                     "TVM_", "CUTE_", "CUTLASS_", "GEMMLAB_")


def confined_env(env: dict[str, str], scratch: Path) -> dict[str, str]:
    """`env` as a sandboxed process gets it: the kept variables only, the caches pointed into `scratch`."""
    kept = {k: v for k, v in env.items() if k in KEPT_ENV or k.startswith(KEPT_ENV_PREFIXES)}
    return {**kept, **scratch_env(scratch)}


def scratch_env(scratch: Path) -> dict[str, str]:
    """The variables that point ordinary temporary files and the toolchains' caches into `scratch`.
    Only caches: a toolchain's home (MODULAR_HOME, say) stays where it is installed."""
    s = str(scratch)
    return {"TMPDIR": s, "TMP": s, "TEMP": s, "HOME": s, "XDG_CACHE_HOME": f"{s}/.cache",
            "TRITON_CACHE_DIR": f"{s}/.triton", "CUDA_CACHE_PATH": f"{s}/.nv", "MPLCONFIGDIR": f"{s}/.mpl",
            "TILELANG_CACHE_DIR": f"{s}/.tilelang", "GEMMLAB_CACHE": f"{s}/.gemmlab"}


# -- applying, in the confine step -----------------------------------------------------------

class SandboxError(OSError):
    """A layer the judge planned could not be applied: the solution must not run without it."""


def _no_new_privs(libc) -> None:
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SandboxError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")


def _drop_capabilities(libc) -> None:
    """Empty the bounding set, then the effective, permitted and inheritable sets (capset v3)."""
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last + 1):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # EINVAL: unknown cap
            raise SandboxError(ctypes.get_errno(), f"prctl(PR_CAPBSET_DROP, {cap})")
    header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = bytes(24)  # two zeroed {effective, permitted, inheritable} triples
    if libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data)) != 0:
        raise SandboxError(ctypes.get_errno(), "capset")


def _landlock(libc, sandbox: SandboxPlan) -> None:
    create, add_rule, restrict = _SYS_LANDLOCK[platform.machine()]
    libc.syscall.restype = ctypes.c_long
    abi = landlock_abi()
    fs = _fs_rights(abi)
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 and not sandbox.network else 0
    scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("QQQ", fs, net, scoped)[: 8 if abi < 4 else 16 if abi < 6 else 24]
    buf = ctypes.create_string_buffer(attr, len(attr))
    fd = libc.syscall(ctypes.c_long(create), buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if fd < 0:
        raise SandboxError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        files = READ | WRITE_FILE | (TRUNCATE if abi >= 3 else 0)
        # The CUDA driver writes its threads' /proc/self/task/TID files at initialisation (seen on
        # the H100: without it cudaGetDeviceCount fails with error 304). Opened here, /proc/self is
        # this process, the harness after exec; a wrapped tool's target is a process below it, so
        # there /proc is writable (other processes' entries stay closed: Landlock's ptrace rule).
        procfs = [Path("/proc")] if sandbox.network else [Path("/proc/self/task")]
        for path, rights in [*((p, READ) for p in sandbox.reads), *((p, fs) for p in sandbox.writes),
                             *((p, files | (IOCTL_DEV if abi >= 5 else 0)) for p in devices()),
                             *((p, files) for p in procfs)]:
            if not path.is_dir():
                rights &= EXECUTE | READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV  # a file takes file rights only
            try:
                pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # gone since the plan: nothing to allow
            try:
                rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, pfd), 12)
                if libc.syscall(ctypes.c_long(add_rule), ctypes.c_int(fd), ctypes.c_int(_RULE_PATH_BENEATH),
                                rule, ctypes.c_uint32(0)) != 0:
                    raise SandboxError(ctypes.get_errno(), f"landlock_add_rule({path})")
            finally:
                os.close(pfd)
        if libc.syscall(ctypes.c_long(restrict), ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            raise SandboxError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(fd)


def seccomp_program(machine: str, judge_pid: int, judge_pgid: int, network: bool = False) -> bytes:
    """The filter as classic BPF: the architecture checked, the deny list, the calls aimed at the judge,
    IP sockets (unless `network`); everything else allowed."""
    column = 0 if machine == "x86_64" else 1
    prog: list[tuple[int, int, int, int]] = []

    def ins(code: int, jt: int, jf: int, k: int) -> None:
        prog.append((code, jt, jf, k & 0xFFFFFFFF))

    deny, refuse = _RET_ERRNO | _EPERM, _RET_ERRNO | _EACCES
    ins(_LD_W_ABS, 0, 0, 4)  # seccomp_data.arch
    ins(_JEQ_K, 1, 0, _AUDIT_ARCH[machine])
    ins(_RET_K, 0, 0, _RET_KILL_PROCESS)
    ins(_LD_W_ABS, 0, 0, 0)  # seccomp_data.nr
    if machine == "x86_64":  # the x32 ABI's numbers alias the calls above
        ins(_JGE_K, 0, 1, _X32_BIT)
        ins(_RET_K, 0, 0, deny)
    for table, answer in ((_DENIED, deny), (_URING, _RET_ERRNO | _ENOSYS), (_METADATA, _RET_ERRNO | 0),
                          ({} if network else _SENDMSG, refuse)):
        for nrs in table.values():
            if nrs[column] >= 0:
                ins(_JEQ_K, 0, 1, nrs[column])
                ins(_RET_K, 0, 0, answer)
    targets = [t for t in {judge_pid, -judge_pgid} if t]
    for nrs in _AIMED.values():
        # nr matches: load arg0's low word, deny on any target, else allow; nr differs: skip the block.
        ins(_JEQ_K, 0, 2 + 2 * len(targets), nrs[column])
        ins(_LD_W_ABS, 0, 0, 16)
        for t in targets:
            ins(_JEQ_K, 0, 1, t)
            ins(_RET_K, 0, 0, deny)
        ins(_RET_K, 0, 0, _RET_ALLOW)
    ins(_JEQ_K, 0, 4, _PRLIMIT[column])
    ins(_LD_W_ABS, 0, 0, 16)
    ins(_JEQ_K, 0, 1, 0)  # pid 0: this process
    ins(_RET_K, 0, 0, _RET_ALLOW)
    ins(_RET_K, 0, 0, deny)
    if not network:
        ins(_JEQ_K, 0, 5, _SOCKET[column])
        ins(_LD_W_ABS, 0, 0, 16)
        ins(_JEQ_K, 2, 0, _AF_INET)
        ins(_JEQ_K, 1, 0, _AF_INET6)
        ins(_RET_K, 0, 0, _RET_ALLOW)
        ins(_RET_K, 0, 0, refuse)
        ins(_JEQ_K, 0, 1, _CONNECT[column])
        ins(_RET_K, 0, 0, _RET_ERRNO | _ENOENT)
        ins(_JEQ_K, 0, 6, _SENDTO[column])
        ins(_LD_W_ABS, 0, 0, 48)  # dest_addr (args[4]), low word
        ins(_JEQ_K, 0, 3, 0)
        ins(_LD_W_ABS, 0, 0, 52)  # and high word: NULL is a send on a connected socket
        ins(_JEQ_K, 0, 1, 0)
        ins(_RET_K, 0, 0, _RET_ALLOW)
        ins(_RET_K, 0, 0, refuse)
    ins(_RET_K, 0, 0, _RET_ALLOW)
    return b"".join(struct.pack("HBBI", *i) for i in prog)


def _seccomp(libc, sandbox: SandboxPlan) -> None:
    code = seccomp_program(platform.machine(), sandbox.judge_pid, sandbox.judge_pgid, sandbox.network)
    buf = ctypes.create_string_buffer(code, len(code))
    fprog = struct.pack("HxxxxxxQ" if struct.calcsize("P") == 8 else "HxxI", len(code) // 8,
                        ctypes.addressof(buf))
    prog = ctypes.create_string_buffer(fprog, len(fprog))
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, prog, 0, 0) != 0:
        raise SandboxError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def apply(sandbox: SandboxPlan) -> None:
    """Apply the layers `sandbox.layers` says are on, to this process, in order; SandboxError if one fails."""
    libc = ctypes.CDLL(None, use_errno=True)
    on = {k for k, v in sandbox.layers.items() if v == "on"}
    if "no-new-privs" in on or "landlock" in on or "seccomp" in on:
        _no_new_privs(libc)
    if "capabilities" in on:
        _drop_capabilities(libc)
    if "landlock" in on:
        _landlock(libc, sandbox)
    if "seccomp" in on:
        _seccomp(libc, sandbox)


def set_dumpable(value: int) -> int:
    """This process's PR_SET_DUMPABLE flag set to `value`; the value it had (-1 where there is no
    such flag: not Linux, or the sandbox switched off). Non-dumpable, its /proc files refuse other
    processes of its user that lack CAP_SYS_PTRACE (prctl(2))."""
    if not sys.platform.startswith("linux") or os.environ.get(OFF_ENV, "1") == "0":
        return -1
    libc = ctypes.CDLL(None, use_errno=True)
    before = libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(_PR_SET_DUMPABLE, value, 0, 0, 0)
    return before
