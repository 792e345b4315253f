"""Where code runs: the device to use, and the process environment gemmlab needs.

`configure()` is the one place that environment is set, explicitly: the command
line calls it before any command, the tests' conftest before any test. It is
idempotent and only sets what the user has not set.

Whether there is a GPU is asked without importing torch where the answer is
plainly no (no CUDA driver library to load): torch takes a second or two to
import, and `gemmlab list`, `explain`, `new`, `-h` must start at once.
"""

from __future__ import annotations

import ctypes
import os
import sys
from functools import cache
from typing import TYPE_CHECKING

from .cuda.compiler import keep_ptxas_reports

if TYPE_CHECKING:
    import torch

#: The CUDA driver's library, by platform: without it no process here can use a GPU.
DRIVER_LIBRARY = {"win32": "nvcuda.dll"}.get(sys.platform, "libcuda.so.1")


@cache
def driver_present() -> bool:
    """Whether the CUDA driver's library loads here (it is only opened, not initialised)."""
    try:
        ctypes.CDLL(DRIVER_LIBRARY)
    except OSError:
        return False
    return True


def has_gpu() -> bool:
    """Whether a CUDA GPU is usable: no where the driver is missing (torch not imported for
    that), else torch's answer."""
    if "torch" not in sys.modules and not driver_present():
        return False
    import torch

    return torch.cuda.is_available()


def configure() -> None:
    """Keep ptxas reports (before CUDA initialises); without a GPU, run Triton kernels through
    its interpreter (before a Triton kernel module is imported: `registry` imports them lazily)."""
    keep_ptxas_reports()
    if not has_gpu():
        os.environ.setdefault("TRITON_INTERPRET", "1")


def default_device() -> torch.device:
    import torch

    return torch.device("cuda") if has_gpu() else torch.device("cpu")


def gpu_name() -> str:
    if not has_gpu():
        return "cpu"
    import torch

    return torch.cuda.get_device_name()
