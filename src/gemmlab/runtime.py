"""Where code runs: the device to use, and Triton's CPU interpreter without a GPU."""

from __future__ import annotations

import os

import torch


def has_gpu() -> bool:
    return torch.cuda.is_available()


def configure() -> None:
    """Without a GPU, Triton kernels run through the interpreter (set before triton loads)."""
    if not has_gpu():
        os.environ.setdefault("TRITON_INTERPRET", "1")


def default_device() -> torch.device:
    return torch.device("cuda") if has_gpu() else torch.device("cpu")


def gpu_name() -> str:
    return torch.cuda.get_device_name() if has_gpu() else "cpu"
