"""The nvcc builds an exported file is written for: the flags graders and local judges pass.

One list, read by the file's header (which launches each build holds) and by the tests that
compile each build and read its SASS. A build holds one target's device code; a launch is in it
when that target has every feature the launch needs (`Needs.builds_for`).
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..cuda import tools
from ..cuda.dispatch import Launch


@dataclass(frozen=True)
class Build:
    flags: str  # what goes on nvcc's command line besides the file (-shared, -Xcompiler -fPIC, …)
    arch: str  # the target whose device code the build holds
    note: str  # who builds this way, and where it runs

    @property
    def label(self) -> str:
        return self.flags or "no -arch"

    def holds(self, launch: Launch) -> bool:
        return launch.all_needs.builds_for(self.arch)


#: nvcc 13's target when no -arch is given (12.x: sm_52; the same launches either way).
NVCC_DEFAULT_ARCH = "sm_75"

BUILDS: tuple[Build, ...] = (
    Build("-arch=sm_90a", "sm_90a", "H100/H200 (LeetGPU's build for them): every launch"),
    Build("-arch=sm_90", "sm_90", "as -arch=native on an H100/H200; runs on later GPUs too"),
    Build("-arch=sm_80", "sm_80", "A100; its PTX also runs on later GPUs"),
    Build("", NVCC_DEFAULT_ARCH, "what local judges often do; runs on any GPU"),
    Build("-arch=sm_75", "sm_75", "T4"),
    Build("-arch=sm_100a", "sm_100a", "B200; no Hopper GPU loads it"),
)

#: The build the header recommends, and `gemmlab judge` uses on an H200.
BEST = BUILDS[0]


def held(launches: tuple[Launch, ...], build: Build) -> list[int]:
    """The indexes of the launches a build holds."""
    return [i for i, launch in enumerate(launches) if build.holds(launch)]


def ranges(indexes: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] → "0-2, 5, 7-8"."""
    out: list[str] = []
    for i in indexes:
        if out and i == int(out[-1].split("-")[-1]) + 1:
            out[-1] = out[-1].split("-")[0] + f"-{i}"
        else:
            out.append(str(i))
    return ", ".join(out) or "none"


def _demangle(symbol: str) -> tuple[str, ...]:
    """`_ZN7gemmlab2v37bigtileE…` → ("gemmlab", "v3", "bigtile"): the nested name of a kernel in
    an exported file (a namespace-scope function; its parameter types are not needed)."""
    if not symbol.startswith("_ZN"):
        return (symbol,)
    parts, i = [], 3
    while i < len(symbol) and symbol[i].isdigit():
        j = i
        while symbol[j].isdigit():
            j += 1
        size = int(symbol[i:j])
        parts.append(symbol[j:j + size])
        i = j + size
    return tuple(parts)


def real_kernels(sass: str) -> set[str]:
    """The kernels (``vN::entry``) of a build's SASS (``cuobjdump -sass``) whose code is real:
    no `__trap()` stand-in, which is all a trapping body holds."""
    real: set[str] = set()
    for chunk in sass.split("Function : ")[1:]:
        symbol, _, body = chunk.partition("\n")
        name = _demangle(symbol.strip())
        if len(name) == 3 and name[0] == "gemmlab" and "BPT.TRAP" not in body:
            real.add(f"{name[1]}::{name[2]}")
    return real


#: What a minimal grader passes besides the target: a shared library LeetGPU-style harnesses load.
LIBRARY_FLAGS = ("-shared", "-Xcompiler", "-fPIC")


def build_library(source: Path, flags: str, lib: Path) -> subprocess.CompletedProcess:
    """nvcc `flags` (a grader's, as one string) → a shared library; the process, for its log.
    ToolMissing without nvcc."""
    return subprocess.run([tools.find("nvcc"), *shlex.split(flags), *LIBRARY_FLAGS, "-o", str(lib), str(source)],
                          capture_output=True, text=True, errors="replace")


def sass_of(lib: Path) -> str:
    """Every ELF's SASS in a library (cuobjdump -sass)."""
    return subprocess.run([tools.find("cuobjdump"), "-sass", str(lib)], capture_output=True, text=True,
                          errors="replace", check=True).stdout
