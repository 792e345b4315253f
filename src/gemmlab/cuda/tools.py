"""The CUDA command-line tools gemmlab uses, found one way, and the sanitizer's command line.

nvcc builds users' `.cu` solutions, cuobjdump and nvdisasm disassemble cubins,
compute-sanitizer checks kernels, ncu times them one by one (scripts/gpu_session.sh).
Each is looked for, in order, on PATH, in the toolkit's bin folder ($CUDA_HOME,
$CUDA_PATH, else /usr/local/cuda), and among NVIDIA's pip wheels (cuda-pathfinder).
gemmlab's own kernels need none of them: NVRTC compiles those.

    python -m gemmlab.cuda.tools sanitizer memcheck   # the sanitizer's command line, with its env
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from functools import cache
from pathlib import Path

#: Where each tool comes from, for the message when it is missing.
INSTALL = {
    "nvcc": "install the CUDA toolkit or set CUDA_HOME",
    "cuobjdump": "install nvidia-cuda-cuobjdump, or put the CUDA toolkit's bin folder on PATH",
    "nvdisasm": "install nvidia-cuda-nvdisasm, or put the CUDA toolkit's bin folder on PATH",
    "compute-sanitizer": "it ships with the CUDA toolkit: put its bin folder on PATH or set CUDA_HOME",
    "ncu": "Nsight Compute ships with the CUDA toolkit: put its bin folder on PATH or set CUDA_HOME",
}
SANITIZER_TOOLS = ("memcheck", "racecheck", "synccheck")
#: torch's caching allocator rounds allocations up and would hide small overruns.
SANITIZER_ENV = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}


class ToolMissing(FileNotFoundError):
    """A CUDA tool is not installed where gemmlab looks."""


def toolkit_bin() -> Path:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    return Path(home) / "bin"


@cache
def find(name: str) -> str:
    """The path of `name` (one of INSTALL), or ToolMissing saying how to get it."""
    found = shutil.which(name)
    if not found and (toolkit_bin() / name).exists():
        found = str(toolkit_bin() / name)
    if not found:
        try:
            from cuda.pathfinder import find_nvidia_binary_utility

            found = find_nvidia_binary_utility(name)
        except Exception:  # an older cuda-pathfinder, or no such package
            found = None
    if not found:
        raise ToolMissing(f"{name} not found: {INSTALL[name]}")
    return found


def sanitizer_command(tool: str) -> list[str]:
    """compute-sanitizer with one tool, kernel faults only (host API probing is not one), 50 reports."""
    if tool not in SANITIZER_TOOLS:
        raise ValueError(f"unknown sanitizer tool {tool!r}; known: {', '.join(SANITIZER_TOOLS)}")
    return [find("compute-sanitizer"), "--tool", tool, "--report-api-errors", "no", "--print-limit", "50"]


def main(argv: list[str]) -> int:
    """`sanitizer TOOL`: print `env VAR=… compute-sanitizer …` (for scripts); `find NAME`: the path."""
    try:
        if len(argv) == 2 and argv[0] == "sanitizer":
            env = [f"{k}={v}" for k, v in SANITIZER_ENV.items()]
            print(shlex.join(["env", *env, *sanitizer_command(argv[1])]))
        elif len(argv) == 2 and argv[0] == "find":
            print(find(argv[1]))
        else:
            print("usage: python -m gemmlab.cuda.tools sanitizer TOOL | find NAME", file=sys.stderr)
            return 2
    except ToolMissing as exc:
        print(exc, file=sys.stderr)
        return 3
    except (KeyError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
