"""The host side of a 16-byte kernel run on any shape: operands padded, C copied back.

A float4 kernel needs rows that start on 16-byte boundaries: N % 4 == 0,
K % 4 == 0 and aligned pointers. Where a call has none of that, its scalar
fallback used to run at half the speed. Instead: copy A into rows of
pitch(N) floats and B into pitch(N) rows of pitch(K) floats, zeros in the
padding (which adds nothing to any product), run the kernel on the padded
problem into a padded C, and copy C's M×K back. At the performance shape the
three copies move about 0.8 GB, a few percent of the product's time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

from . import driver as cl
from .dispatch import Call, Kernel, KernelCall, Launch

#: Four destination columns a thread (pad.cu's PAD_WIDE): faster than one at every size timed
#: (experiments/README.md#tools).
PAD_COPY = Kernel("pad.cu", "pad_copy", (256, 1), {"PAD_WIDE": 4})
#: The destination columns one block of PAD_COPY writes: its grid is ceil(columns / this) by rows.
PAD_BLOCK_COLS = PAD_COPY.block[0] * PAD_COPY.defines["PAD_WIDE"]
ALIGN = 1024  # bytes: where each buffer in a workspace starts


def pitch(x: int) -> int:
    """A row length in floats rounded up to a multiple of 4 (16 bytes)."""
    return -(-x // 4) * 4


def up(nbytes: int) -> int:
    """A byte count rounded up to the workspace alignment."""
    return -(-nbytes // ALIGN) * ALIGN


@dataclass(frozen=True)
class PaddedOperands:
    """Host of a launch whose kernel runs on padded copies of A, B and C."""

    label = "padded"  # how `launch_label` tells this launch from the same kernel run in place

    def kernels(self, launch: Launch) -> tuple[Kernel, ...]:
        return (PAD_COPY,)

    @staticmethod
    def layout(m: int, n: int, k: int) -> tuple[int, int, int, int]:
        """Byte offsets of the padded B and C in the workspace (A at 0), and its size."""
        b_at = up(m * pitch(n) * 4)
        c_at = b_at + up(pitch(n) * pitch(k) * 4)
        return 0, b_at, c_at, c_at + up(m * pitch(k) * 4)

    def workspace_bytes(self, launch: Launch, m: int, n: int, k: int) -> int:
        return self.layout(m, n, k)[3]

    def kernel_calls(self, launch: Launch, call: Call, workspace: torch.Tensor) -> list[KernelCall]:
        m, n, k = call.m, call.n, call.k
        n4, k4 = pitch(n), pitch(k)
        base = workspace.data_ptr()
        a, b, c = (base + at for at in self.layout(m, n, k)[:3])

        def copy(src: int, dst: int, rows: int, cols: int, ld: int, dst_rows: int, dst_cols: int) -> KernelCall:
            return KernelCall(PAD_COPY, (-(-dst_cols // PAD_BLOCK_COLS), dst_rows, 1),
                        (src, dst, *map(cl.i32, (rows, cols, ld, dst_rows, dst_cols))))

        return [
            copy(call.a.data_ptr(), a, m, n, n, m, n4),
            copy(call.b.data_ptr(), b, n, k, k, n4, k4),
            KernelCall(launch.kernel, launch.grid(m, k4), (a, b, c, cl.i32(m), cl.i32(n4), cl.i32(k4))),
            copy(c, call.c.data_ptr(), m, k, k4, m, k),
        ]
