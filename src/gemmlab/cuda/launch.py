"""Load cubins and launch their kernels on torch's current stream (cuda.core).

torch and cuda.core share the device's primary context, so device pointers
from ``tensor.data_ptr()`` are valid kernel arguments as they are. Integers
must travel as ``np.int32``: a bare Python int is passed as 8 bytes.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import torch

from .compiler import CompiledModule, NoGPUError

#: The default dynamic shared-memory limit; more needs an explicit opt-in per kernel.
DEFAULT_DYNAMIC_SMEM = 48 * 1024


def require_gpu() -> None:
    if not torch.cuda.is_available():
        raise NoGPUError("this implementation needs a CUDA GPU and none is available")


@cache
def _device(index: int):
    from cuda.core import Device

    dev = Device(index)
    dev.set_current()
    return dev


def current_device():
    require_gpu()
    dev = _device(torch.cuda.current_device())
    dev.set_current()
    return dev


_streams: dict[tuple[int, int], object] = {}


def current_stream():
    """torch's current stream, wrapped once for cuda.core."""
    dev = current_device()
    ts = torch.cuda.current_stream()
    key = (dev.device_id, ts.cuda_stream)
    s = _streams.get(key)
    if s is None:
        s = _streams[key] = dev.create_stream(ts)
    return s


_kernels: dict[tuple[str, str, int], object] = {}


def get_kernel(module: CompiledModule, name: str, dynamic_smem: int = 0):
    """The loaded kernel, with its dynamic shared-memory limit raised where needed."""
    dev = current_device()
    key = (module.key, name, dev.device_id)
    kernel = _kernels.get(key)
    if kernel is None:
        from cuda.core import ObjectCode

        kernel = ObjectCode.from_cubin(module.cubin).get_kernel(name)
        _kernels[key] = kernel
    if dynamic_smem > DEFAULT_DYNAMIC_SMEM:
        _raise_smem_limit(kernel, dynamic_smem, dev.device_id)
    return kernel


_smem_raised: set[tuple[int, int, int]] = set()


def _raise_smem_limit(kernel, nbytes: int, device_id: int) -> None:
    key = (int(kernel.handle), nbytes, device_id)
    if key in _smem_raised:
        return
    from cuda.bindings import driver

    attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    (err,) = driver.cuKernelSetAttribute(attr, nbytes, kernel.handle, device_id)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuKernelSetAttribute({nbytes} bytes of shared memory) failed: {err}")
    _smem_raised.add(key)


def launch(kernel, grid: tuple[int, ...], block: tuple[int, ...], smem: int, *args) -> None:
    from cuda.core import LaunchConfig
    from cuda.core import launch as cc_launch

    cfg = LaunchConfig(grid=grid, block=block, shmem_size=smem)
    cc_launch(current_stream(), cfg, kernel, *args)


def i32(x: int) -> np.int32:
    return np.int32(x)
