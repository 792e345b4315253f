"""The CUDA driver calls: load cubins and launch their kernels on torch's current stream.

torch and cuda.core share the device's primary context, so device pointers
from ``tensor.data_ptr()`` are valid kernel arguments as they are.

Every launch goes through one driver call, ``cuLaunchKernelEx``, because the
Hopper rungs need what a plain launch cannot say: a thread-block cluster shape
(a launch attribute) and a TMA descriptor passed *by value* as a 128-byte
``__grid_constant__ CUtensorMap`` parameter. The parameter buffer is packed
here from typed values, so an argument's width is never guessed:

* ``np.int32`` → 4 bytes, ``np.float32`` → 4 bytes;
* a Python ``int`` → an 8-byte device pointer (``tensor.data_ptr()``);
* `TensorMap` → its 128 opaque bytes, 64-byte aligned.

A prepared launch without a cluster is replayed through ``cuLaunchKernel`` called by ctypes:
one foreign call, which costs less host time a launch than cuda.bindings' ``cuLaunchKernelEx``
from Python (experiments/README.md#host-overhead).
"""

from __future__ import annotations

import ctypes
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from .compiler import CompiledModule, NoGPUError

if TYPE_CHECKING:  # torch and numpy are imported where a call needs them: not to list or explain
    import numpy as np

#: The default dynamic shared-memory limit; more needs an explicit opt-in per kernel.
DEFAULT_DYNAMIC_SMEM = 48 * 1024


@cache
def _device(index: int):
    from cuda.core import Device

    dev = Device(index)
    dev.set_current()
    return dev


def current_device():
    import torch

    if not torch.cuda.is_available():
        raise NoGPUError("this implementation needs a CUDA GPU and none is available")
    dev = _device(torch.cuda.current_device())
    dev.set_current()
    return dev


def private_stream():
    """A stream of this process's own on torch's current device, as a torch stream: created by
    the driver (non-blocking), so no other code is handed it, as torch's pooled streams are
    (`torch.cuda.Stream` returns one of a few dozen per device, round-robin). Never destroyed:
    a caller keeps it for the process's life."""
    import torch
    from cuda.bindings import driver

    dev = current_device()
    handle = checked(driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING.value), "creating a stream")
    return torch.cuda.ExternalStream(int(handle), device=torch.device("cuda", dev.device_id))


@cache
def sm_count(device_index: int) -> int:
    import torch

    return torch.cuda.get_device_properties(device_index).multi_processor_count


_assumed_sms: list[int] = []  # `assumed_sms`'s figure, innermost last


def sms() -> int:
    """The SM count the launch policies plan for: the current GPU's, or the one `assumed_sms` sets."""
    if _assumed_sms:
        return _assumed_sms[-1]
    import torch

    return sm_count(torch.cuda.current_device())


@contextmanager
def assumed_sms(count: int):
    """Plan as if on a GPU of `count` SMs (`explain --shape` on a machine without that GPU)."""
    _assumed_sms.append(count)
    try:
        yield
    finally:
        _assumed_sms.pop()


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


def checked(result, what: str):
    """cuda.bindings returns (CUresult, value…): raise on an error, return the values."""
    from cuda.bindings import driver

    err, *values = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        _, name = driver.cuGetErrorName(err)
        raise RuntimeError(f"{what} failed: {name.decode() if isinstance(name, bytes) else err}")
    return values[0] if len(values) == 1 else values


def _raise_smem_limit(kernel, nbytes: int, device_id: int) -> None:
    key = (int(kernel.handle), nbytes, device_id)
    if key in _smem_raised:
        return
    from cuda.bindings import driver

    attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    checked(driver.cuKernelSetAttribute(attr, nbytes, kernel.handle, device_id),
           f"cuKernelSetAttribute({nbytes} bytes of shared memory)")
    _smem_raised.add(key)


@dataclass(frozen=True)
class TensorMap:
    """A TMA descriptor's 128 opaque bytes (`cuTensorMapEncodeTiled`), passed by value."""

    raw: bytes

    def __post_init__(self):
        if len(self.raw) != 128:
            raise ValueError(f"a CUtensorMap is 128 bytes, got {len(self.raw)}")


def _aligned_copy(raw: bytes, alignment: int = 64) -> tuple[ctypes.Array, int]:
    """A buffer holding ``raw`` at an ``alignment``-byte boundary, and that address.

    CUtensorMap is declared alignas(64) in cuda.h; ctypes before Python 3.13 ignores
    ``_align_``, so the copy is placed by hand.
    """
    buf = (ctypes.c_ubyte * (len(raw) + alignment))()
    address = -(-ctypes.addressof(buf) // alignment) * alignment
    ctypes.memmove(address, raw, len(raw))
    return buf, address


def pack(args) -> tuple[ctypes.Array, list]:
    """The ``void**`` parameter array cuLaunchKernelEx takes, and the values it points into.

    The caller keeps the second element alive until the launch call has returned.
    """
    import numpy as np

    values: list = []
    addresses: list[int] = []
    for x in args:
        if isinstance(x, TensorMap):
            buf, address = _aligned_copy(x.raw)
            values.append(buf)
            addresses.append(address)
            continue
        if isinstance(x, np.int32):
            value = ctypes.c_int32(int(x))
        elif isinstance(x, np.float32):
            value = ctypes.c_float(float(x))
        elif isinstance(x, int) and not isinstance(x, bool):
            value = ctypes.c_uint64(x)  # a device pointer
        else:
            raise TypeError(f"kernel argument of unsupported type {type(x).__name__}: {x!r}")
        values.append(value)
        addresses.append(ctypes.addressof(value))
    pointers = (ctypes.c_void_p * max(len(values), 1))(*addresses)
    return pointers, values


def _config(grid: tuple[int, ...], block: tuple[int, ...], smem: int,
            cluster: tuple[int, int, int]):
    import torch
    from cuda.bindings import driver

    grid = (*grid, 1, 1)[:3]
    block = (*block, 1, 1)[:3]
    config = driver.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = grid
    config.blockDimX, config.blockDimY, config.blockDimZ = block
    config.sharedMemBytes = smem
    config.hStream = driver.CUstream(torch.cuda.current_stream().cuda_stream)
    config.numAttrs = 0
    if tuple(cluster) != (1, 1, 1):
        if any(g % c for g, c in zip(grid, cluster, strict=True)):
            raise ValueError(f"grid {grid} is not a whole number of clusters {cluster}")
        attr = driver.CUlaunchAttribute()
        attr.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster
        config.attrs = [attr]
        config.numAttrs = 1
    return config


@cache
def _launcher():
    """libcuda's ``cuLaunchKernel`` as a ctypes function, or None where the library cannot be loaded
    (then every launch goes through cuda.bindings)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    fn = lib.cuLaunchKernel
    u32, ptr = ctypes.c_uint, ctypes.c_void_p
    # (function, grid x y z, block x y z, dynamic shared bytes, stream, void** params, void** extra)
    fn.argtypes = [ptr, u32, u32, u32, u32, u32, u32, u32, ptr, ptr, ptr]
    fn.restype = ctypes.c_int
    return fn


def _error_name(code: int) -> str:
    """The CUresult's name (its enum's, which needs no driver call)."""
    from cuda.bindings import driver

    try:
        return driver.CUresult(code).name
    except ValueError:  # a code cuda.bindings does not know
        return f"CUresult {code}"


@dataclass(frozen=True)
class Prepared:
    """One launch with everything worked out: its driver config (stream included) and its packed
    parameters. Running it again costs one driver call; `CudaSolver` keeps these per call site.

    ``plain``: the ``cuLaunchKernel`` arguments before the parameters (function handle, grid,
    block, dynamic shared bytes, stream) where the launch has no cluster, so that `run` can make
    it by ctypes; None for a cluster launch, which needs ``cuLaunchKernelEx``'s attribute."""

    kernel: object
    config: object
    pointers: ctypes.Array
    keep: list  # what `pointers` points into
    plain: tuple[int, ...] | None = None

    def run(self) -> None:
        launcher = _launcher() if self.plain is not None else None
        if launcher is not None:
            code = launcher(*self.plain, ctypes.addressof(self.pointers), None)
            if code:
                raise RuntimeError(f"launching {getattr(self.kernel, 'name', 'kernel')} failed: "
                                   f"{_error_name(code)}")
            return
        from cuda.bindings import driver

        checked(driver.cuLaunchKernelEx(self.config, self.kernel.handle, ctypes.addressof(self.pointers), 0),
               f"launching {getattr(self.kernel, 'name', 'kernel')}")


def prepare(kernel, grid: tuple[int, ...], block: tuple[int, ...], smem: int, *args,
            cluster: tuple[int, int, int] = (1, 1, 1)) -> Prepared:
    """A launch on torch's current stream, ready to run (`Prepared.run`) once or many times."""
    dev = current_device()
    if smem > DEFAULT_DYNAMIC_SMEM:
        _raise_smem_limit(kernel, smem, dev.device_id)
    config = _config(grid, block, smem, cluster)
    pointers, keep = pack(args)
    plain = None
    if tuple(cluster) == (1, 1, 1):
        # The same numbers the config holds, for the ctypes path (CUkernel handles launch as CUfunctions).
        plain = (int(kernel.handle), config.gridDimX, config.gridDimY, config.gridDimZ, config.blockDimX,
                 config.blockDimY, config.blockDimZ, smem, int(config.hStream))
    return Prepared(kernel, config, pointers, keep, plain)


def launch(kernel, grid: tuple[int, ...], block: tuple[int, ...], smem: int, *args,
           cluster: tuple[int, int, int] = (1, 1, 1)) -> None:
    """Launch on torch's current stream; ``grid`` counts blocks, a multiple of ``cluster``."""
    prepare(kernel, grid, block, smem, *args, cluster=cluster).run()


_resident: dict[tuple, int] = {}


def resident_blocks(kernel, block: tuple[int, ...], smem: int, cluster: tuple[int, int, int]) -> int:
    """How many blocks of this kernel the whole GPU holds at once (whole clusters only).

    A persistent grid larger than this would leave blocks waiting for others to
    finish all their tiles; the occupancy calculator says how many fit.
    """
    dev = current_device()
    key = (int(kernel.handle), tuple(block), smem, tuple(cluster), dev.device_id)
    if key not in _resident:
        from cuda.bindings import driver

        if smem > DEFAULT_DYNAMIC_SMEM:
            _raise_smem_limit(kernel, smem, dev.device_id)
        size = cluster[0] * cluster[1] * cluster[2]
        threads = block[0] * block[1]
        if size == 1:
            per_sm = kernel.occupancy.max_active_blocks_per_multiprocessor(threads, smem)
            _resident[key] = per_sm * sm_count(dev.device_id)
        else:
            config = _config((size, 1, 1), block, smem, cluster)
            clusters = checked(driver.cuOccupancyMaxActiveClusters(kernel.handle, config),
                              "cuOccupancyMaxActiveClusters")
            _resident[key] = int(clusters) * size
    return _resident[key]


def i32(x: int) -> np.int32:
    """A 4-byte int kernel argument (`pack` passes a plain int as a 64-bit pointer)."""
    import numpy as np

    return np.int32(x)
