"""The Triton rungs: `matmul` (one program a tile, IEEE FP32 or 3xTF32) and `presplit` (3xTF32
with each operand split once, before the product).

The registry names a rung's solver by a `TritonConfig`, which is read without importing Triton:
its module, and Triton with it, is imported when the rung is first called.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, eq=False)
class TritonConfig:
    """Factory of a Triton solver: its class and configuration (which scripts/tune.py varies)."""

    module: str  # under gemmlab.kernels.triton
    cls: str
    config: dict

    @property
    def tile(self) -> tuple[int, int, int]:
        return self.config["rows"], self.config["cols"], self.config["red"]

    def __call__(self) -> Callable[..., None]:
        module = importlib.import_module(f"{__name__}.{self.module}")
        return getattr(module, self.cls)(**self.config)


def triton_matmul(**config) -> TritonConfig:
    """`matmul.TritonMatmul` with this configuration."""
    return TritonConfig("matmul", "TritonMatmul", config)


def triton_presplit(**config) -> TritonConfig:
    """`presplit.PreSplit` with this configuration."""
    return TritonConfig("presplit", "PreSplit", config)
