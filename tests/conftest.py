"""Shared test set-up: Triton's interpreter without a GPU, a private kernel cache, the gpu marker, and on a
GPU the target's tune record for `default`."""

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
    # The GPU tests that assume default's dispatch (its preludes, twins and class winners) assume the
    # H200's record, the target's: on any GPU they run under it, named, whatever GPU this is and
    # whatever record it has or borrows (on a CPU, default reads the target's record anyway).
    if HAS_GPU and "GEMMLAB_TUNE_RECORD" not in os.environ:
        from gemmlab.policy import record

        os.environ["GEMMLAB_TUNE_RECORD"] = str(record.installed_path(record.TARGET))


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
