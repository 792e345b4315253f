"""Triton: one program per output tile, the compiler does the rest.

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

``PRECISION`` selects the arithmetic. ``"ieee"`` is strict FP32 FMA
(precision class ``fp32``). ``"split3"`` is 3xTF32 (class ``fp32x3``): each
operand x is split into ``big`` (x rounded to TF32's 10-bit mantissa) and
``small = x − big``, and three tensor-core products are summed in FP32,
``small·big + big·small + big·big``; the dropped ``small·small`` is 2⁻²² of the
product, below FP32's own rounding. We split ourselves rather than ask Triton
for ``input_precision="tf32x3"`` because of the values that are not numbers:
for x = ±Inf, x − big is NaN, and Inf · 0 in a correction term is NaN too. So
the correction terms see 0 where x is not finite and only ``big·big`` carries
±Inf and NaN, which then propagate as the FP32 product says.

Where the sum is kept matters as much as the split. The tensor cores add each
product into their FP32 accumulator with truncation, not round-to-nearest, so
the error of a long chain of ``tl.dot(…, acc)`` grows with the reduction and
at N = 8192 ends well above plain FP32's (``scripts/tune.py triton-tf32x3
'{"promote": false}'`` shows it). With
``PROMOTE`` the tensor cores sum only ``STEPS`` reduction steps into a fresh
partial tile, which is then added to ``acc`` by an ordinary, correctly rounded
FP32 add.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def split_tf32(x):
    """(big, big where x is finite else 0, x − big where x is finite else 0).

    For finite x, big + small = x exactly, big has TF32's 10-bit mantissa and
    |small| ≤ 2⁻¹¹·|x| (2⁻¹⁰ where it had to truncate); the tensor core drops
    small's low bits, an error of about 2⁻²² of the product.

    big is x rounded to nearest (ties away) at mantissa bit 13, done on the
    bits; near FLT_MAX that rounding can carry into Inf, and there big is x
    truncated instead. NaN stays a quiet NaN whose payload survives the
    tensor core dropping the low 13 bits.
    """
    bits = x.to(tl.uint32, bitcast=True)
    big = ((bits + 0x1000) & 0xFFFFE000).to(tl.float32, bitcast=True)
    truncated = (bits & 0xFFFFE000).to(tl.float32, bitcast=True)
    finite = (x - x) == 0.0  # false for ±Inf and NaN
    big = tl.where((big - big) == 0.0, big, truncated)
    quiet_nan = (bits | 0x00400000).to(tl.float32, bitcast=True)
    big_or_special = tl.where(finite, big, tl.where(x == x, x, quiet_nan))
    return big_or_special, tl.where(finite, big, 0.0), tl.where(finite, x - big, 0.0)


@triton.jit
def grouped_tile(M, K, BLOCK_ROWS: tl.constexpr, BLOCK_COLS: tl.constexpr,
                 GROUP_ROWS: tl.constexpr):
    """The rows and columns of C this program owns, in grouped program order."""
    pid = tl.program_id(0)
    row_tiles = tl.cdiv(M, BLOCK_ROWS)
    col_tiles = tl.cdiv(K, BLOCK_COLS)
    per_group = GROUP_ROWS * col_tiles
    first_row_tile = (pid // per_group) * GROUP_ROWS
    rows_in_group = tl.minimum(row_tiles - first_row_tile, GROUP_ROWS)
    row_tile = first_row_tile + (pid % per_group) % rows_in_group
    col_tile = (pid % per_group) // rows_in_group
    return (row_tile * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS),
            col_tile * BLOCK_COLS + tl.arange(0, BLOCK_COLS))


@triton.jit
def dot3(a_lo, a_hi_finite, a_hi, b_lo, b_hi_finite, b_hi, acc):
    """acc + a·b as three TF32 tensor-core products: the corrections, then hi·hi."""
    acc = tl.dot(a_lo, b_hi_finite, acc, input_precision="tf32")
    acc = tl.dot(a_hi_finite, b_lo, acc, input_precision="tf32")
    return tl.dot(a_hi, b_hi, acc, input_precision="tf32")


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, gate_ptr,
    BLOCK_ROWS: tl.constexpr, BLOCK_COLS: tl.constexpr, BLOCK_RED: tl.constexpr,
    GROUP_ROWS: tl.constexpr, PRECISION: tl.constexpr, GATED: tl.constexpr,
    STEPS: tl.constexpr, PROMOTE: tl.constexpr,
):
    rows, cols = grouped_tile(M, K, BLOCK_ROWS, BLOCK_COLS, GROUP_ROWS)
    # GATED: run only if *gate_ptr != 0, decided on the device (no host sync).
    # The pre-split rung launches this kernel for inputs that hold ±Inf or NaN.
    n_end = N
    m_end = M
    if GATED:
        run = tl.load(gate_ptr) != 0
        n_end = tl.where(run, N, 0)
        m_end = tl.where(run, M, 0)  # rows to store: none when the gate is down
    red = tl.arange(0, BLOCK_RED)
    acc = tl.zeros((BLOCK_ROWS, BLOCK_COLS), dtype=tl.float32)
    for n0 in range(0, n_end, BLOCK_RED * STEPS):
        # split3: STEPS steps are summed on the tensor cores, then (PROMOTE)
        # added to acc with an IEEE FP32 add; see the module docstring.
        part = tl.zeros((BLOCK_ROWS, BLOCK_COLS), dtype=tl.float32) if PROMOTE else acc
        for j in tl.static_range(STEPS):
            n = n0 + j * BLOCK_RED + red
            a = tl.load(a_ptr + rows[:, None] * N + n[None, :],
                        mask=(rows[:, None] < M) & (n[None, :] < N), other=0.0)
            b = tl.load(b_ptr + n[:, None] * K + cols[None, :],
                        mask=(n[:, None] < N) & (cols[None, :] < K), other=0.0)
            if PRECISION == "split3":
                a_hi, a_hi_finite, a_lo = split_tf32(a)
                b_hi, b_hi_finite, b_lo = split_tf32(b)
                part = dot3(a_lo, a_hi_finite, a_hi, b_lo, b_hi_finite, b_hi, part)
            else:
                part = tl.dot(a, b, part, input_precision=PRECISION)
        acc = acc + part if PROMOTE else part
    tl.store(c_ptr + rows[:, None] * K + cols[None, :], acc,
             mask=(rows[:, None] < m_end) & (cols[None, :] < K))


class TritonMatmul:
    """A ``solve`` with one fixed configuration."""

    def __init__(self, rows: int, cols: int, red: int, group: int, warps: int, stages: int,
                 precision: str, steps: int = 1, promote: bool = False):
        self.config = dict(BLOCK_ROWS=rows, BLOCK_COLS=cols, BLOCK_RED=red, GROUP_ROWS=group,
                           PRECISION=precision, STEPS=steps, PROMOTE=promote)
        self.warps, self.stages = warps, stages

    def grid(self, m: int, k: int) -> tuple[int]:
        return (triton.cdiv(m, self.config["BLOCK_ROWS"]) * triton.cdiv(k, self.config["BLOCK_COLS"]),)

    def __call__(self, a, b, c, m, n, k, gate=None) -> None:
        """With a gate tensor, C is written only if gate[0] != 0 at run time."""
        matmul_kernel[self.grid(m, k)](a, b, c, m, n, k, c if gate is None else gate, **self.config,
                                       GATED=gate is not None,
                                       num_warps=self.warps, num_stages=self.stages)
