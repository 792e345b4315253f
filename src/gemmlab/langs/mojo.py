"""Mojo: a LeetGPU `.mojo` file built by `mojo build` into a shared library, called through ctypes.

LeetGPU's Mojo format is ``@export def solve(A: UnsafePointer[Float32], B: …, C: …, M: Int32,
N: Int32, K: Int32)``: device pointers, with the kernels enqueued on a `DeviceContext`. The
library is built for one GPU target (``--target-accelerator``), so it also builds on a machine
without a GPU, and `userfile.load_library` calls its ``solve`` with the tensors' device pointers.
The build runs before anything is timed, in its own process; the library is cached by the
source, the compiler's version and the target.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

#: The Mojo release gemmlab[mojo] installs: the newest whose compiler builds LeetGPU's format as
#: it is written (0.25.7 makes `UnsafePointer[Float32]` read-only, so C cannot be written; 1.x
#: moved `gpu` out of the standard library into `max` and removed `fn`).
RELEASE = "0.25.6"
#: How long one `mojo build` may take (the first build of a process also loads the standard library).
BUILD_TIMEOUT_S = 600.0


class MojoError(RuntimeError):
    """The file does not build: the compiler's own message."""


def binary() -> str | None:
    """The `mojo` compiler: $GEMMLAB_MOJO, else beside this Python (a virtual environment's
    `gemmlab[mojo]`), else on PATH."""
    named = os.environ.get("GEMMLAB_MOJO")
    if named:
        return named if Path(named).is_file() else None
    beside = Path(sys.executable).parent / "mojo"
    if beside.is_file():
        return str(beside)
    return shutil.which("mojo")


@cache
def version() -> str:
    """`mojo --version`'s line (part of a build's cache key)."""
    found = binary()
    if found is None:
        return "none"
    proc = subprocess.run([found, "--version"], capture_output=True, text=True, check=False, timeout=60)
    return (proc.stdout or proc.stderr).strip().splitlines()[-1] if (proc.stdout or proc.stderr).strip() else "unknown"


def _compiler_lines(text: str) -> str:
    """The compiler's output without its crash reporter's note, which says nothing about the file."""
    return "\n".join(line for line in text.splitlines() if "Crashpad" not in line).strip()


def build(source: Path, arch: str, out_dir: Path) -> Path:
    """`mojo build --emit shared-lib --target-accelerator ARCH`; MojoError with the compiler's log."""
    found = binary()
    if found is None:
        raise FileNotFoundError("mojo not found")
    source = Path(source)
    digest = hashlib.sha256(source.read_bytes() + f"\0{version()}\0{arch}".encode()).hexdigest()[:16]
    lib = out_dir / f"{source.stem}-{digest}.so"
    if lib.exists():
        return lib
    out_dir.mkdir(parents=True, exist_ok=True)
    partial = lib.with_name(f"{lib.stem}.{os.getpid()}.part.so")  # a half-written library is never cached
    cmd = [found, "build", "--emit", "shared-lib", "--target-accelerator", arch, "-o", str(partial), str(source)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        partial.unlink(missing_ok=True)
        raise MojoError(f"mojo build of {source.name} did not finish within {BUILD_TIMEOUT_S:g} s") from None
    if proc.returncode != 0 or not partial.exists():
        partial.unlink(missing_ok=True)
        log = _compiler_lines(proc.stdout + proc.stderr) or f"exit code {proc.returncode}"
        if f"Mojo {RELEASE}" not in version():
            log += (f"\n(this compiler is {version()}; LeetGPU's Mojo format builds with Mojo {RELEASE}: "
                    f"pip install 'gemmlab[mojo]')")
        raise MojoError(f"mojo build failed for {source.name} (--target-accelerator {arch}):\n{log}")
    os.replace(partial, lib)
    return lib


def load(lib_path: Path):
    """A built library's ``solve`` on torch tensors: their device pointers and the sizes as int32."""
    import ctypes

    fn = ctypes.CDLL(str(lib_path)).solve
    fn.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int32] * 3
    fn.restype = None

    def solve(a, b, c, m, n, k):
        fn(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k)

    return solve
