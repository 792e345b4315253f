"""Mojo: a LeetGPU `.mojo` file built by `mojo build` into a shared library, called through ctypes.

LeetGPU's Mojo format is ``@export def solve(A: UnsafePointer[Float32], B: …, C: …, M: Int32,
N: Int32, K: Int32)``: device pointers, with the kernels enqueued on a `DeviceContext`. The
library is built for one GPU target (``--target-accelerator``), so it also builds on a machine
without a GPU, and `solution.load_library` calls its ``solve`` with the tensors' device pointers.
The build runs before anything is timed, in its own process; the library is cached by the
source, the compiler's version and the target.

The library is called through an entry of gemmlab's (`ENTRY`), not through ``solve`` itself: an
exported Mojo ``def`` may raise, and its machine code takes a hidden first argument, the address
its result or error is written to (seen in `objdump` of Mojo 0.25.6's build: ``solve`` writes 32
bytes through ``%rdi`` before returning). Called as C's ``solve(A, B, C, M, N, K)``, it took A's
device address for that slot and the other arguments one place off: on the H200 the call died of
SIGSEGV. A non-raising ``fn solve`` has no such slot. So the user's file is built as a module
beside `ENTRY_SOURCE`, a plain ``fn`` with C's arguments that calls ``solve`` inside ``try`` and
returns 0, or prints the error to stderr and returns 1: one entry whatever ``solve`` is.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

#: The Mojo release gemmlab[mojo] installs: the newest whose compiler builds LeetGPU's format as
#: it is written (0.25.7 makes `UnsafePointer[Float32]` read-only, so C cannot be written; 1.x
#: moved `gpu` out of the standard library into `max` and removed `fn`).
RELEASE = "0.25.6"
#: How long one `mojo build` may take (the first build of a process also loads the standard library).
BUILD_TIMEOUT_S = 600.0
#: The C entry the library is called through, and the module name the user's file is built as.
ENTRY = "gemmlab_solve"
MODULE = "gemmlab_solution"
ENTRY_SOURCE = f"""\
from memory import UnsafePointer
from sys import stderr
from {MODULE} import solve


@export
fn {ENTRY}(A: UnsafePointer[Float32], B: UnsafePointer[Float32], C: UnsafePointer[Float32],
           M: Int32, N: Int32, K: Int32) -> Int32:
    try:
        solve(A, B, C, M, N, K)
    except e:
        print("solve raised:", e, file=stderr)
        return 1
    return 0
"""


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
    source, out_dir = Path(source), Path(out_dir)
    key = source.read_bytes() + f"\0{version()}\0{arch}\0{ENTRY_SOURCE}".encode()
    lib = out_dir / f"{source.stem}-{hashlib.sha256(key).hexdigest()[:16]}.so"
    if lib.exists():
        return lib
    out_dir.mkdir(parents=True, exist_ok=True)
    partial = lib.with_name(f"{lib.stem}.{os.getpid()}.part.so")  # a half-written library is never cached
    with tempfile.TemporaryDirectory(prefix="gemmlab-mojo-") as tmp:
        module = Path(tmp) / f"{MODULE}.mojo"
        shutil.copyfile(source, module)
        (Path(tmp) / "entry.mojo").write_text(ENTRY_SOURCE)
        cmd = [found, "build", "--emit", "shared-lib", "--target-accelerator", arch, "-I", tmp,
               "-o", str(partial), str(Path(tmp) / "entry.mojo")]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            partial.unlink(missing_ok=True)
            raise MojoError(f"mojo build of {source.name} did not finish within {BUILD_TIMEOUT_S:g} s") from None
    if proc.returncode != 0 or not partial.exists():
        partial.unlink(missing_ok=True)
        # The compiler names the copy it built: say the user's file instead.
        log = _compiler_lines(proc.stdout + proc.stderr).replace(str(module), str(source)) \
            or f"exit code {proc.returncode}"
        if f"Mojo {RELEASE}" not in version():
            log += (f"\n(this compiler is {version()}; LeetGPU's Mojo format builds with Mojo {RELEASE}: "
                    f"pip install 'gemmlab[mojo]')")
        raise MojoError(f"mojo build failed for {source.name} (--target-accelerator {arch}):\n{log}")
    os.replace(partial, lib)
    return lib


def entry(lib) -> Callable[..., None] | None:
    """A loaded library's `ENTRY` as a solve on raw arguments that raises MojoError where the
    user's ``solve`` raised (its message is on stderr); None where the library has no such entry."""
    import ctypes

    try:
        fn = getattr(lib, ENTRY)
    except AttributeError:
        return None
    fn.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int32] * 3
    fn.restype = ctypes.c_int32

    def call(a: int, b: int, c: int, m: int, n: int, k: int) -> None:
        if fn(a, b, c, m, n, k):
            raise MojoError("solve raised an error (its message is on stderr)")

    return call

