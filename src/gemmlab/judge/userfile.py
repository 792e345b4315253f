"""Load a user's solution file in one of LeetGPU's formats as a `solve(a, b, c, M, N, K)`.

* CUDA: a ``.cu`` with ``extern "C" void solve(const float* A, const float* B,
  float* C, int M, int N, int K)`` that receives device pointers and launches
  its kernels. Compiled by nvcc as a shared library for the GPU and loaded
  with ctypes.
* PyTorch and Triton: a ``.py`` with ``solve(a, b, c, M, N, K)`` on tensors.
* JAX: a ``.py`` with ``solve(A, B, M, N, K)`` that returns C.
* CuTe DSL: a ``.py`` that imports ``cutlass``, whose ``solve`` is ``@cute.jit`` on
  `cute.Tensor`s; compiled once while it loads (`gemmlab.langs.cute`).
* Mojo: a ``.mojo`` with ``@export def solve(A: UnsafePointer[Float32], …, M: Int32, …)`` on
  device pointers; built by ``mojo build`` into a shared library (`gemmlab.langs.mojo`).
* TileLang: a ``.py`` that imports ``tilelang``, with ``solve`` on tensors; called once while it
  loads, so that its JIT compile is done before any judged call (`gemmlab.langs.tilelang`).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import subprocess
import tempfile
from pathlib import Path

# The one loader (the registry's rungs load through it too), with its SolutionError; the judge's
# modules and tests keep importing these names from here.
from ..langs.solution import SolutionError, import_solve, load_library

FRAMEWORKS = ("cuda", "torch", "triton", "jax", "cute", "mojo", "tilelang")
#: The file name each framework's solutions must have (the others are .py).
SUFFIXES = {"cuda": ".cu", "mojo": ".mojo"}
#: Every name a solution file may have.
SOLUTION_SUFFIXES = (".cu", ".py", ".mojo")
#: What a module imports → the framework it is written for, first match wins: JAX's solve
#: differs; CuTe DSL and TileLang files import torch too, and Triton files torch.
IMPORT_ORDER = (("jax", "jax"), ("cutlass", "cute"), ("tilelang", "tilelang"), ("triton", "triton"),
                ("torch", "torch"))


def imported_modules(path: Path) -> set[str]:
    """Top-level names of every module the file really imports (any scope), read with `ast`.

    The source is decoded as Python decodes it (a coding line, a BOM, else
    UTF-8). A word in a docstring or a comment is not an import. A file that
    does not parse is read line by line instead, for import statements at the
    start of a line (loading it reports the syntax error).
    """
    source = path.read_bytes()
    try:
        tree = ast.parse(source, filename=str(path))
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        return _import_lines(source)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _import_lines(source: bytes) -> set[str]:
    names = set()
    for raw in source.decode("utf-8", errors="replace").splitlines():
        words = raw.split()
        if len(words) >= 2 and words[0] in ("import", "from"):
            names.add(words[1].split(".")[0].rstrip(","))
    return names


def detected_framework(path: Path) -> str | None:
    """What the file is written for: cuda for a .cu, mojo for a .mojo; else what the module really
    imports, in `IMPORT_ORDER` (cutlass: CuTe DSL); None if none of them."""
    path = Path(path)
    for framework, suffix in SUFFIXES.items():
        if path.suffix == suffix:
            return framework
    names = imported_modules(path)
    return next((fw for module, fw in IMPORT_ORDER if module in names), None)


def detect_framework(path: Path) -> str:
    """The harness to run the file with: what it imports, else torch's (a solve on tensors)."""
    return detected_framework(path) or "torch"


def framework_missing(framework: str) -> str | None:
    """Why a framework cannot run here (it is not installed), or None."""
    from ..langs import TOOLCHAINS

    if framework in TOOLCHAINS:
        return TOOLCHAINS[framework].missing()
    # The extras README names: gemmlab[triton], gemmlab[jax] (and on a GPU JAX's CUDA plugin).
    hint = {"torch": "pip install torch", "triton": "pip install 'gemmlab[triton]'",
            "jax": "pip install 'gemmlab[jax]'; on a GPU also 'jax[cuda13]' or 'jax[cuda12]'"}.get(framework)
    if hint is None:
        return None
    try:
        found = importlib.util.find_spec(framework) is not None
    except (ImportError, ValueError):
        found = False
    return None if found else f"{framework} is not installed here ({hint})"


def nvcc_path() -> str:
    from ..cuda import tools

    try:
        return tools.find("nvcc")
    except tools.ToolMissing:
        raise SolutionError("nvcc not found: CUDA-format solutions are built with nvcc "
                            "(install the CUDA toolkit or set CUDA_HOME)") from None


def driver_library() -> list[str]:
    """Link flags for the CUDA driver library where this machine has one.

    A LeetGPU-format Hopper solution may encode its TMA descriptors itself with
    the driver API (cuTensorMapEncodeTiled), which lives in libcuda, not in the
    runtime nvcc links by default. Machines without a driver (CI) have no
    libcuda to link; a solution that needs it cannot run there anyway.
    """
    import ctypes.util

    name = ctypes.util.find_library("cuda")
    return ["-Xlinker", f"-l:{name}"] if name else []


def target_flags(arch: str) -> list[str]:
    """nvcc's flags for one GPU target. The 'a' of sm_90a stays: wgmma and setmaxnreg exist only
    for the arch-specific target."""
    number = arch.removeprefix("sm_")
    return [f"-gencode=arch=compute_{number},code=sm_{number}"]


#: The spellings of nvcc's "build for the GPU at hand" target, as one token or two.
NATIVE_TARGETS = ("-arch=native", "--gpu-architecture=native")
NATIVE_SPLIT = ("-arch", "--gpu-architecture")


def resolve_native(user_flags: list[str], arch: str) -> list[str]:
    """`-arch=native` named as the GPU it means here (`arch` without Hopper's 'a', as nvcc
    resolves it). nvcc asks the driver for that GPU, and in the judge's sandbox it sees none:
    it warns and builds its default target instead, so the judged library would hold no code for
    this GPU and run slower than the user's own build."""
    plain = "sm_" + arch.removeprefix("sm_").rstrip("af")
    out: list[str] = []
    for flag in user_flags:
        if flag in NATIVE_TARGETS:
            out.append(f"-arch={plain}")
        elif flag == "native" and out and out[-1] in NATIVE_SPLIT:
            out[-1] = f"-arch={plain}"
        else:
            out.append(flag)
    return out


def names_native(user_flags: list[str] | None) -> bool:
    # Any target would do: only whether resolving changes the flags matters.
    return user_flags is not None and resolve_native(user_flags, "sm_90") != user_flags


def nvcc_flags(arch: str, user_flags: list[str] | None) -> list[str]:
    """What picks the build: the user's flags (`judge --nvcc-flags`, `-arch=native` named as
    `arch`'s GPU) in place of the target, the optimisation level and the C++ standard where they
    give their own; else the target for `arch`."""
    if user_flags is None:
        return ["-O3", "-std=c++17", *target_flags(arch)]
    user_flags = resolve_native(user_flags, arch)
    own_level = any(f.startswith(("-O", "--optimize")) for f in user_flags)
    own_std = any(f.startswith(("-std", "--std")) for f in user_flags)
    return [*([] if own_level else ["-O3"]), *([] if own_std else ["-std=c++17"]), *user_flags]


def build_cuda(path: Path, arch: str, out_dir: Path, user_flags: list[str] | None = None) -> Path:
    """nvcc → a shared library; a compile error raises with nvcc's own log.

    The cache key is the source with every flag and the compiler's path, so the
    same file built with other flags is another library."""
    flags = nvcc_flags(arch, user_flags)
    nvcc = nvcc_path()
    cmd_head = [nvcc, "-shared", "-Xcompiler", "-fPIC", *flags]
    tail = driver_library()
    key = "\0".join([*cmd_head, *tail]).encode()
    digest = hashlib.sha256(path.read_bytes() + b"\0" + key).hexdigest()[:16]
    lib = out_dir / f"{path.stem}-{digest}.so"
    if lib.exists():
        return lib
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix="build-") as scratch:  # a half-written library is never cached
        partial = Path(scratch) / lib.name
        proc = _confined([*cmd_head, "-o", str(partial), str(path.resolve()), *tail], path, Path(scratch))
        if proc.returncode != 0:
            shown = " ".join(user_flags) if user_flags is not None else None
            how = f" with --nvcc-flags {shown!r}" if shown is not None else ""
            raise SolutionError(f"nvcc failed to compile {path.name}{how}:\n{proc.stdout}{proc.stderr}".strip())
        os.replace(partial, lib)
    return lib


#: Processes one nvcc run may have at once (nvcc, the host compiler's, cicc, ptxas, the linker).
COMPILE_PROCESSES = 64


def _confined(cmd: list[str], source: Path, scratch: Path) -> subprocess.CompletedProcess:
    """`cmd` (nvcc) in the judge's sandbox: it reads the system's folders, the CUDA toolkit and the
    solution file alone, so an #include of any other file (a key in the home folder, the project's
    files) fails, and it writes `scratch` alone (TMPDIR too)."""
    from . import sandbox
    from .boundary import Boundary

    toolkit = Path(cmd[0]).resolve().parents[1]
    plan = sandbox.plan(scratch, [source.resolve(), toolkit])
    fence = Boundary(COMPILE_PROCESSES, None, plan)
    try:
        return subprocess.run(fence.wrap(cmd), capture_output=True, text=True, errors="replace", check=False,
                              env=sandbox.confined_env(dict(os.environ), scratch))
    finally:
        fence.kill(leader_unreaped=False)
        fence.close()


def load_python(path: Path, framework: str):
    if framework == "jax":
        # JAX would otherwise reserve most of the GPU's memory for itself at import.
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    fn = import_solve(path)
    if framework == "cute":
        from .. import runtime
        from ..langs import cute

        try:
            return cute.adapt(fn, runtime.default_device())
        except cute.CuteError as exc:
            raise SolutionError(f"{path.name}: {exc}") from exc.__cause__
    if framework == "tilelang":
        from .. import runtime
        from ..langs import tilelang

        tilelang.prime(fn, runtime.default_device())
        return fn
    if framework != "jax":
        return fn

    import jax.dlpack
    import torch.utils.dlpack

    def solve(a, b, c, m, n, k):
        out = fn(jax.dlpack.from_dlpack(a), jax.dlpack.from_dlpack(b), m, n, k)
        c.copy_(torch.utils.dlpack.from_dlpack(out).reshape(m, k))

    return solve


def load(path: Path, framework: str | None = None):
    """(framework, solve behind the contract's checks) for a solution file."""
    path = Path(path)
    if not path.exists():
        raise SolutionError(f"no such file: {path}")
    framework = framework or detect_framework(path)
    if framework not in FRAMEWORKS:
        raise SolutionError(f"unknown framework {framework!r}; known: {', '.join(FRAMEWORKS)}")
    if framework == "cuda":
        import torch

        from ..cuda.compiler import HOPPER_ARCH, cache_folder, device_arch

        if not torch.cuda.is_available():
            # Still compile, so a compile error is reported with nvcc's log.
            build_cuda(path, HOPPER_ARCH, cache_folder("user"))
            raise SolutionError(f"{path.name} compiles, but there is no CUDA GPU here to run it on")
        solve = load_library(build_cuda(path, device_arch(), cache_folder("user")))
    elif framework == "mojo":
        solve = load_library(build_mojo(path))
    else:
        solve = load_python(path, framework)
    from ..problem import validate

    def checked(a, b, c, m, n, k):  # the contract's checks: a bad call fails before it runs
        validate(a, b, c, m, n, k)
        solve(a, b, c, m, n, k)

    return framework, checked


def build_mojo(path: Path, arch: str | None = None) -> Path:
    """`mojo build` → a shared library for `arch` (the GPU's; sm_90a where there is none);
    SolutionError with the compiler's log, or saying where Mojo is missing."""
    from .. import runtime
    from ..cuda.compiler import HOPPER_ARCH, cache_folder, device_arch
    from ..langs import TOOLCHAINS, mojo

    missing = TOOLCHAINS["mojo"].missing()
    if missing:
        raise SolutionError(missing)
    arch = arch or (device_arch() if runtime.has_gpu() else HOPPER_ARCH)
    try:
        return mojo.build(path, arch, cache_folder("user"))
    except mojo.MojoError as exc:
        raise SolutionError(str(exc)) from None
