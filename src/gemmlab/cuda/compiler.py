"""CUDA C++ → cubin through NVRTC (cuda.core), with a disk cache and the ptxas report.

A compile is keyed by everything that can change its output: the source, every
header beside it, the macros, the target architecture, the options and the
NVRTC version. The cubin and the ptxas log are stored together, so the
resource report (registers, shared memory, stack, spills) is available from
the cache without compiling again, and without a GPU.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..exits import CannotRun
from ..provenance import python_env

KERNEL_DIR = Path(__file__).resolve().parent.parent / "kernels" / "cuda"

#: The architecture CPU-side checks compile for when no GPU is there to ask.
HOPPER_ARCH = "sm_90a"

PTXAS_OPTIONS = ("-v",)


def keep_ptxas_reports() -> None:
    """Switch the driver's JIT cache off, unless the user chose otherwise.

    That cache can serve NVRTC a cubin without running ptxas, and then the `-v`
    resource report is empty; gemmlab keeps its own cache, with the report. The
    driver reads the variable when CUDA initialises: `runtime.configure()` calls
    this first thing, and every compile calls it again for callers that did not.
    """
    os.environ.setdefault("CUDA_CACHE_DISABLE", "1")


class CompileError(RuntimeError):
    """NVRTC or ptxas rejected a source; ``log`` is the compiler's own text."""

    def __init__(self, source: str, arch: str, log: str):
        self.source = source
        self.arch = arch
        self.log = log
        super().__init__(f"compiling {source} for {arch} failed:\n{log}")


class NoGPUError(RuntimeError):
    """A CUDA implementation was asked to run where no CUDA device is present."""


@dataclass(frozen=True)
class Resources:
    """What ptxas reports for one kernel."""

    kernel: str
    registers: int
    smem_bytes: int
    stack_bytes: int
    spill_stores: int
    spill_loads: int
    barriers: int

    @property
    def spills(self) -> int:
        return self.spill_stores + self.spill_loads


@dataclass
class CompiledModule:
    source: str
    arch: str
    defines: tuple[tuple[str, str], ...]
    key: str
    cubin: bytes = field(repr=False)
    log: str = field(repr=False)

    @property
    def resources(self) -> dict[str, Resources]:
        return parse_ptxas_log(self.log)


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_FRAME = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads"
)
_REGS = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas_log(log: str) -> dict[str, Resources]:
    """Turn ``ptxas -v`` output into one record per entry function."""
    out: dict[str, Resources] = {}
    current: str | None = None
    frame = (0, 0, 0)
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current, frame = m.group(1), (0, 0, 0)
        elif current and (m := _FRAME.search(line)):
            frame = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif current and (m := _REGS.search(line)):
            barriers, smem = _BARRIERS.search(line), _SMEM.search(line)
            out[current] = Resources(
                kernel=current,
                registers=int(m.group(1)),
                barriers=int(barriers.group(1)) if barriers else 0,
                smem_bytes=int(smem.group(1)) if smem else 0,
                stack_bytes=frame[0],
                spill_stores=frame[1],
                spill_loads=frame[2],
            )
            current = None
    return out


def cache_root() -> Path:
    """Where gemmlab keeps what it builds: $GEMMLAB_CACHE, else ~/.cache/gemmlab."""
    return Path(os.environ.get("GEMMLAB_CACHE") or Path.home() / ".cache" / "gemmlab")


def cache_folder(name: str) -> Path:
    """CACHE_ROOT/NAME, made if missing; CannotRun (exit 3, one line) where it cannot be, or cannot
    be written: a read-only $GEMMLAB_CACHE or home is this machine's lack, not a bug."""
    path = cache_root() / name
    try:
        path.mkdir(parents=True, exist_ok=True)
        usable = path.is_dir() and os.access(path, os.W_OK | os.X_OK)
    except OSError as exc:
        raise CannotRun(f"cannot use the build cache {path}: {exc.strerror or exc}; set GEMMLAB_CACHE "
                        "to a writable folder") from None
    if not usable:
        raise CannotRun(f"cannot write to the build cache {path}; set GEMMLAB_CACHE to a writable folder")
    return path


def cache_dir() -> Path:
    return cache_folder("cubin")


@cache
def nvrtc_version() -> str:
    from cuda.bindings import nvrtc

    _, major, minor = nvrtc.nvrtcVersion()
    return f"{major}.{minor}"


def device_arch() -> str:
    """The target for the current GPU: the 'a' variant on Hopper, for wgmma/setmaxnreg."""
    import torch

    if not torch.cuda.is_available():
        raise NoGPUError("no CUDA device: give an explicit arch (e.g. 'sm_90a') to compile only")
    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}a" if (major, minor) == (9, 0) else f"sm_{major}{minor}"


def _headers() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(KERNEL_DIR.glob("*.cuh"))}


def source_path(source: str) -> Path:
    path = Path(source)
    return path if path.is_absolute() else KERNEL_DIR / source


#: The name NVRTC compiles a kernel file under: its own, but for the files named by a number before
#: the one numbering (issue 53), that old name. NVRTC writes it into the symbols of names with
#: internal linkage (splitk::kBatch), so under it the cubins keep the bytes whose digests the tune
#: records hold (experiments/tools/cubins.py compares them).
PROGRAM_NAMES = {f"{stem}.cu": f"{n:02d}_{stem}.cu" for n, stem in enumerate((
    "naive", "naive_fma", "smem16", "row4", "tiling1d", "tiling2d", "float4", "double_buffer", "cp_async",
    "wmma_tf32", "warptile", "mma_tf32", "wgmma_tma", "wgmma_ws", "wgmma_3xtf32", "bigtile", "wgmma_swap",
    "small", "mma_split", "thin", "short", "gemv"), start=1)}


def compile_source(
    source: str,
    arch: str | None = None,
    defines: dict[str, int | str] | None = None,
) -> CompiledModule:
    """Compile one ``.cu`` file (name relative to the kernel folder, or a path)."""
    keep_ptxas_reports()
    arch = arch or device_arch()
    path = source_path(source)
    text = path.read_text()
    macro = tuple(sorted((k, str(v)) for k, v in (defines or {}).items()))
    program = PROGRAM_NAMES.get(path.name, path.name) if path.parent == KERNEL_DIR else path.name
    key_material = {
        "program": program,
        "source": text,
        "headers": _headers(),
        "arch": arch,
        "defines": macro,
        "ptxas": PTXAS_OPTIONS,
        "std": "c++17",
        "nvrtc": nvrtc_version(),
    }
    key = hashlib.sha256(json.dumps(key_material, sort_keys=True).encode()).hexdigest()[:32]
    cubin_file = cache_dir() / f"{key}.cubin"
    log_file = cache_dir() / f"{key}.log"
    if cubin_file.exists() and log_file.exists():
        cached = CompiledModule(path.name, arch, macro, key, cubin_file.read_bytes(), log_file.read_text())
        if cached.resources:  # an entry without its ptxas report is incomplete: rebuild it
            return cached

    cubin, log = _build_isolated(text, program, arch, macro)
    # Write the log first and the cubin last: a cubin on disk means a whole entry.
    tmp = cubin_file.with_suffix(f".tmp{os.getpid()}")
    log_file.write_text(log)
    tmp.write_bytes(cubin)
    tmp.replace(cubin_file)
    return CompiledModule(path.name, arch, macro, key, cubin, log)


def _build_isolated(text: str, name: str, arch: str, macro: tuple) -> tuple[bytes, str]:
    """(cubin, ptxas log) from NVRTC run in a fresh process (nvrtc_child.py says why)."""
    request = {"text": text, "name": name, "arch": arch, "macro": list(macro), "ptxas": list(PTXAS_OPTIONS),
               "include": str(KERNEL_DIR)}
    done = subprocess.run([sys.executable, "-m", "gemmlab.cuda.nvrtc_child"], input=json.dumps(request),
                          capture_output=True, text=True, errors="replace", env=python_env())
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        raise CompileError(name, arch, f"the compiling process ended with status {done.returncode}:\n"
                           f"{done.stderr.strip()}") from None
    if "import_error" in answer:
        raise ImportError(answer["import_error"])
    if "error" in answer:
        raise CompileError(name, arch, answer["error"])
    return base64.b64decode(answer["cubin"]), answer["log"]
