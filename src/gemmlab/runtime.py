"""Where code runs: the device to use, and the process environment gemmlab needs.

`configure()` is the one place that environment is set, explicitly: the command
line calls it before any command, the tests' conftest before any test. It is
idempotent and only sets what the user has not set.
"""

from __future__ import annotations

import os

import torch

from .cuda.compiler import keep_ptxas_reports


def has_gpu() -> bool:
    return torch.cuda.is_available()


def configure() -> None:
    """Keep ptxas reports (before CUDA initialises); without a GPU, run Triton kernels through
    its interpreter (before a Triton kernel module is imported: `registry` imports them lazily)."""
    keep_ptxas_reports()
    if not has_gpu():
        os.environ.setdefault("TRITON_INTERPRET", "1")


def default_device() -> torch.device:
    return torch.device("cuda") if has_gpu() else torch.device("cpu")


def gpu_name() -> str:
    return torch.cuda.get_device_name() if has_gpu() else "cpu"
