"""TMA descriptors (`cuTensorMapEncodeTiled`) for row-major float32 matrices, cached.

A descriptor tells the copy engine how a 2-D global array is laid out and which
box one `cp.async.bulk.tensor` moves into shared memory, and in what swizzle.
Encoding one is a host call of a few microseconds; a rung asks for the same
few maps on every call, so they are cached by everything they encode.

The driver's constraints, checked here so a violation is a clear error rather
than CUDA_ERROR_INVALID_VALUE (HOPPER.md §3): the global address 16-byte
aligned, the row pitch a multiple of 16 bytes, each box side at most 256
elements, and with a swizzle the box's inner side at most the swizzle span.
"""

from __future__ import annotations

from functools import lru_cache

from .driver import TensorMap, checked

#: Swizzle span in bytes → the driver's CUtensorMapSwizzle value (0 = none).
SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}


@lru_cache(maxsize=256)
def matrix_map(address: int, rows: int, cols: int, row_pitch_bytes: int,
               box_rows: int, box_cols: int, swizzle_bytes: int = 128, tf32: bool = False) -> TensorMap:
    """The descriptor of a rows×cols float32 matrix whose box is box_rows×box_cols.

    Out-of-bounds parts of a box read as zeros, so ragged edges need no masks. With
    ``tf32`` the copy engine rounds each value to TF32 on its way into shared memory.
    """
    if address % 16 or row_pitch_bytes % 16:
        raise ValueError(f"TMA needs a 16-byte aligned address and pitch, got {address:#x}, "
                         f"{row_pitch_bytes} B")
    if not (0 < box_rows <= 256 and 0 < box_cols <= 256) or (box_cols * 4) % 16:
        raise ValueError(f"TMA box {box_rows}×{box_cols} floats is outside the driver's limits")
    if swizzle_bytes and box_cols * 4 > swizzle_bytes:
        raise ValueError(f"a {swizzle_bytes}-byte swizzle needs rows of at most {swizzle_bytes} B")
    from cuda.bindings import driver

    tensor_map = checked(driver.cuTensorMapEncodeTiled(
        driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 if tf32
        else driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        2,
        address,
        [driver.cuuint64_t(cols), driver.cuuint64_t(rows)],  # innermost dimension first
        [driver.cuuint64_t(row_pitch_bytes)],
        [driver.cuuint32_t(box_cols), driver.cuuint32_t(box_rows)],
        [driver.cuuint32_t(1), driver.cuuint32_t(1)],
        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        driver.CUtensorMapSwizzle(SWIZZLE[swizzle_bytes]),
        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    ), "cuTensorMapEncodeTiled")
    import ctypes

    return TensorMap(ctypes.string_at(tensor_map.getPtr(), 128))
