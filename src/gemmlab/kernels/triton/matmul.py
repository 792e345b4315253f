"""Rung 11 — Triton: one program per output tile, the compiler does the rest.

The kernel below is the whole of the 2D-tiled, vectorised, pipelined CUDA
ladder in thirty lines. Each *program* computes one ``BLOCK_ROWS × BLOCK_COLS``
tile of C. It walks the reduction in steps of ``BLOCK_RED``, loading a tile of
A and a tile of B with masks (out-of-range elements read as 0, so no fallback
kernel is needed for odd shapes) and accumulating their product with
``tl.dot``. Triton picks the thread layout, vector widths, shared-memory
staging and the software pipeline (``num_stages``) itself.

Program order matters for the L2 cache. Numbering tiles row by row means
consecutive programs share one row of A but each needs a different column
panel of B. Grouping ``GROUP_ROWS`` row-tiles together ("super-grouping")
makes a wave of programs cover a squarer block of C, so the A and B panels it
touches are reused from L2 instead of re-read from HBM.

``input_precision`` selects the arithmetic: ``"ieee"`` is strict FP32 FMA
(precision class ``fp32``); ``"tf32x3"`` splits each operand into a TF32 high
part and a TF32 remainder and sums three tensor-core products, which is as
accurate as FP32 (class ``fp32x3``) at tensor-core speed.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    BLOCK_ROWS: tl.constexpr, BLOCK_COLS: tl.constexpr, BLOCK_RED: tl.constexpr,
    GROUP_ROWS: tl.constexpr, PRECISION: tl.constexpr,
):
    # Grouped program order: GROUP_ROWS row-tiles share a column sweep.
    pid = tl.program_id(0)
    row_tiles = tl.cdiv(M, BLOCK_ROWS)
    col_tiles = tl.cdiv(K, BLOCK_COLS)
    per_group = GROUP_ROWS * col_tiles
    first_row_tile = (pid // per_group) * GROUP_ROWS
    rows_in_group = tl.minimum(row_tiles - first_row_tile, GROUP_ROWS)
    row_tile = first_row_tile + (pid % per_group) % rows_in_group
    col_tile = (pid % per_group) // rows_in_group

    rows = row_tile * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    cols = col_tile * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
    red = tl.arange(0, BLOCK_RED)
    acc = tl.zeros((BLOCK_ROWS, BLOCK_COLS), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_RED):
        n = n0 + red
        a = tl.load(a_ptr + rows[:, None] * N + n[None, :],
                    mask=(rows[:, None] < M) & (n[None, :] < N), other=0.0)
        b = tl.load(b_ptr + n[:, None] * K + cols[None, :],
                    mask=(n[:, None] < N) & (cols[None, :] < K), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rows[:, None] * K + cols[None, :], acc,
             mask=(rows[:, None] < M) & (cols[None, :] < K))


class TritonMatmul:
    """A ``solve`` with one fixed configuration."""

    def __init__(self, rows: int, cols: int, red: int, group: int, warps: int, stages: int,
                 precision: str):
        self.config = dict(BLOCK_ROWS=rows, BLOCK_COLS=cols, BLOCK_RED=red, GROUP_ROWS=group,
                           PRECISION=precision)
        self.warps, self.stages = warps, stages

    def __call__(self, a, b, c, m, n, k) -> None:
        grid = (triton.cdiv(m, self.config["BLOCK_ROWS"]) * triton.cdiv(k, self.config["BLOCK_COLS"]),)
        matmul_kernel[grid](a, b, c, m, n, k, **self.config,
                            num_warps=self.warps, num_stages=self.stages)
