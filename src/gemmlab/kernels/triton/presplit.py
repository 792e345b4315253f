"""3xTF32 with the split paid once, before the product.

``triton-tf32x3`` splits every operand tile inside the reduction loop: a
program re-splits the same A row panel for every column tile it meets, so each
element of A is split K/BLOCK_COLS times and each element of B M/BLOCK_ROWS
times, and the splitting arithmetic competes with the loads for issue slots.
Here a first pass splits each element once and writes two planes per operand,

    hi = x rounded to TF32,   lo = x − hi      (exact, see ``split_tf32``),

and the product kernel only loads four tiles and issues three tensor-core
products per step, ``lo_a·hi_b + hi_a·lo_b + hi_a·hi_b``, summed into a fresh
tile that is then added to the accumulator in IEEE FP32 (``PROMOTE``: the
tensor cores' own accumulation truncates; see ``matmul.py``). The extra traffic is
one read and two writes of A and B (about 0.9 GB at the performance shape,
a fraction of a millisecond at HBM speed) against a product that is compute
bound.

The first pass writes B's planes transposed (K×N, reduction index
contiguous), the layout in which Hopper's tensor cores read TF32 operands;
``transpose_b=False`` keeps the untransposed layout for comparison.

Not-a-number values. The planes hold 0 where x is ±Inf or NaN, which would be
wrong, so the first pass also raises a device flag when it meets one. The
product kernel runs only when the flag is down; the in-loop splitting kernel of
``triton-tf32x3``, launched right after and gated on the same flag, runs only
when it is up. The choice is made on the GPU: no host synchronisation.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .matmul import TritonMatmul, dot3, grouped_tile, split_tf32


@triton.jit
def split_kernel(x_ptr, hi_ptr, lo_ptr, special_ptr, R, C, R_OUT, C_OUT, pitch,
                 TRANSPOSE: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """hi and lo planes of the R×C matrix x (stored transposed if TRANSPOSE); flag ±Inf/NaN.

    The planes cover R_OUT×C_OUT ≥ R×C, zero outside x, with row pitch
    ``pitch``: padding the reduction length to whole steps lets the product
    kernel read its tiles without masks along the reduction, and a pitch that
    is a multiple of 16 keeps every row 64-byte aligned, whatever N and K are.
    """
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    inside = (r[:, None] < R) & (c[None, :] < C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :], mask=inside, other=0.0)
    _, hi, lo = split_tf32(x)
    if TRANSPOSE:
        out = c[None, :] * pitch + r[:, None]
    else:
        out = r[:, None] * pitch + c[None, :]
    covered = (r[:, None] < R_OUT) & (c[None, :] < C_OUT)
    tl.store(hi_ptr + out, hi, mask=covered)
    tl.store(lo_ptr + out, lo, mask=covered)
    specials = tl.sum(tl.where(inside & ((x - x) != 0.0), 1, 0))
    tl.atomic_max(special_ptr, (specials > 0).to(tl.int32))


@triton.jit
def presplit_kernel(
    a_hi, a_lo, b_hi, b_lo, c_ptr, special_ptr, M, N_PAD, K, stride_am, stride_bn, stride_bk,
    BLOCK_ROWS: tl.constexpr, BLOCK_COLS: tl.constexpr, BLOCK_RED: tl.constexpr,
    GROUP_ROWS: tl.constexpr, STEPS: tl.constexpr, PROMOTE: tl.constexpr,
):
    rows, cols = grouped_tile(M, K, BLOCK_ROWS, BLOCK_COLS, GROUP_ROWS)
    run = tl.load(special_ptr) == 0  # the planes are only right without ±Inf/NaN
    n_end = tl.where(run, N_PAD, 0)  # the planes are zero from N to N_PAD
    m_end = tl.where(run, M, 0)  # rows to store: none when the flag is up
    red = tl.arange(0, BLOCK_RED)
    acc = tl.zeros((BLOCK_ROWS, BLOCK_COLS), dtype=tl.float32)
    for n0 in range(0, n_end, BLOCK_RED * STEPS):
        # STEPS steps summed on the tensor cores, then an IEEE FP32 add (PROMOTE).
        part = tl.zeros((BLOCK_ROWS, BLOCK_COLS), dtype=tl.float32) if PROMOTE else acc
        for j in tl.static_range(STEPS):
            n = n0 + j * BLOCK_RED + red
            a_at = rows[:, None] * stride_am + n[None, :]
            a_in = rows[:, None] < M  # no mask along the reduction: tiles load whole
            b_at = n[:, None] * stride_bn + cols[None, :] * stride_bk
            b_in = cols[None, :] < K
            ah = tl.load(a_hi + a_at, mask=a_in, other=0.0)
            al = tl.load(a_lo + a_at, mask=a_in, other=0.0)
            bh = tl.load(b_hi + b_at, mask=b_in, other=0.0)
            bl = tl.load(b_lo + b_at, mask=b_in, other=0.0)
            part = dot3(al, ah, ah, bl, bh, bh, part)
        acc = acc + part if PROMOTE else part
    tl.store(c_ptr + rows[:, None] * K + cols[None, :], acc,
             mask=(rows[:, None] < m_end) & (cols[None, :] < K))


class PreSplit:
    """A ``solve``: split pass, gated product, gated in-loop fallback for ±Inf/NaN."""

    SPLIT_BLOCK = 64

    def __init__(self, rows: int, cols: int, red: int, group: int, warps: int, stages: int,
                 transpose_b: bool, steps: int = 1, promote: bool = True):
        self.config = dict(BLOCK_ROWS=rows, BLOCK_COLS=cols, BLOCK_RED=red, GROUP_ROWS=group,
                           STEPS=steps, PROMOTE=promote)
        self.warps, self.stages, self.transpose_b = warps, stages, transpose_b
        self.fallback = TritonMatmul(rows, cols, red, group, warps, stages, "split3", steps, promote)

    def _split(self, x, rows, cols, rows_out, cols_out, transpose, special):
        """(planes, pitch): the hi and lo planes of x, rows_out×cols_out, and their row pitch."""
        outer, inner = (cols_out, rows_out) if transpose else (rows_out, cols_out)
        pitch = -(-inner // 16) * 16
        planes = torch.empty((2, outer * pitch), dtype=torch.float32, device=x.device)
        grid = (triton.cdiv(rows_out, self.SPLIT_BLOCK), triton.cdiv(cols_out, self.SPLIT_BLOCK))
        split_kernel[grid](x, planes[0], planes[1], special, rows, cols, rows_out, cols_out, pitch,
                           TRANSPOSE=transpose, BLOCK_R=self.SPLIT_BLOCK, BLOCK_C=self.SPLIT_BLOCK)
        return planes, pitch

    def __call__(self, a, b, c, m, n, k) -> None:
        special = torch.zeros(1, dtype=torch.int32, device=a.device)
        step = max(16, self.config["BLOCK_RED"] * self.config["STEPS"])
        n_pad = -(-n // step) * step  # whole reduction steps
        a_planes, a_pitch = self._split(a, m, n, m, n_pad, False, special)
        b_planes, b_pitch = self._split(b, n, k, n_pad, k, self.transpose_b, special)
        stride_bn, stride_bk = (1, b_pitch) if self.transpose_b else (b_pitch, 1)
        presplit_kernel[self.fallback.grid(m, k)](
            a_planes[0], a_planes[1], b_planes[0], b_planes[1], c, special, m, n_pad, k,
            a_pitch, stride_bn, stride_bk, **self.config, num_warps=self.warps, num_stages=self.stages)
        self.fallback(a, b, c, m, n, k, gate=special)
