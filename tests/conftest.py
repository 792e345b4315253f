"""Shared test set-up: Triton's interpreter without a GPU, a private kernel cache, the gpu marker."""

from __future__ import annotations

import os

import pytest

from gemmlab import runtime  # first: it configures CUDA before torch initialises it

import torch  # noqa: E402  isort: skip

runtime.configure()

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
