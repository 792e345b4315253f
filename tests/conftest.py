"""Shared test set-up: Triton's interpreter without a GPU, a private kernel cache, the gpu marker."""

from __future__ import annotations

import os

import pytest
import torch

from gemmlab import runtime

runtime.configure()  # before any test touches CUDA or Triton

HAS_GPU = torch.cuda.is_available()


def pytest_configure(config):
    # Compile into a cache of this run's own, so CI compiles every kernel for real.
    if "GEMMLAB_CACHE" not in os.environ:
        import tempfile

        os.environ["GEMMLAB_CACHE"] = tempfile.mkdtemp(prefix="gemmlab-cache-")


def pytest_collection_modifyitems(config, items):
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def device() -> torch.device:
    return runtime.default_device()
