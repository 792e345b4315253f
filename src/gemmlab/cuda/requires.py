"""A launch's precondition, declared once: it both decides the call and says itself in words.

A fast path holds for a call when M, N and K are multiples of given numbers
and some operands start on a byte boundary. `Requires` holds those numbers;
calling it decides, `str()` renders the same numbers as text for `explain`,
`inspect` and `--json`, and `cpp()` as the C++ test of an exported file.
Text and test cannot drift apart, because there is only one of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def aligned(*tensors: torch.Tensor, to: int) -> bool:
    return all(t.data_ptr() % to == 0 for t in tensors)


@dataclass(frozen=True)
class Requires:
    """M % m == 0, N % n == 0, K % k == 0, the named operands `align`-byte aligned, at least
    `outputs` elements of C (M·K): where a kernel's tiles only pay once the output fills the GPU;
    and, where set, at most `rows` rows of C (M) or `cols` columns (K), and at least `a_elements`
    of A (M·N) or `b_elements` of B (N·K): thin or narrow outputs; at most `reduction` (N): a
    reduction short enough for one tile of A and B; at least `min_reduction` (N): one long enough
    to pay for a kernel's fixed costs (the Hopper kernels' pipelines and pre-passes); at least
    `min_cols` columns of C (K): as wide as a kernel's tile, which would otherwise compute mostly
    nothing."""

    m: int = 1
    n: int = 1
    k: int = 1
    align: int = 0  # bytes; 0: no alignment needed
    operands: str = "ABC"  # which of A, B, C must be aligned
    outputs: int = 0
    rows: int = 0  # 0: any M
    cols: int = 0  # 0: any K
    a_elements: int = 0
    b_elements: int = 0
    reduction: int = 0  # 0: any N
    min_reduction: int = 0
    min_cols: int = 0

    def __call__(self, a, b, c, m: int, n: int, k: int) -> bool:
        tensors = {"A": a, "B": b, "C": c}
        return (m % self.m == 0 and n % self.n == 0 and k % self.k == 0 and m * k >= self.outputs
                and (not self.rows or m <= self.rows) and (not self.cols or k <= self.cols)
                and (not self.reduction or n <= self.reduction) and n >= self.min_reduction and k >= self.min_cols
                and m * n >= self.a_elements and n * k >= self.b_elements
                and (not self.align or aligned(*(tensors[x] for x in self.operands), to=self.align)))

    #: The bounds on the shape's size, each a field (0: unset), in words and in C++, in order.
    _BOUNDS = (("outputs", "M·K ≥ {}", "(long long)M * K >= {}LL"), ("rows", "M ≤ {}", "M <= {}"),
               ("cols", "K ≤ {}", "K <= {}"), ("reduction", "N ≤ {}", "N <= {}"),
               ("min_reduction", "N ≥ {}", "N >= {}"), ("min_cols", "K ≥ {}", "K >= {}"),
               ("a_elements", "M·N ≥ {}", "(long long)M * N >= {}LL"),
               ("b_elements", "N·K ≥ {}", "(long long)N * K >= {}LL"))

    def _parts(self, words: bool) -> list[str]:
        """The multiples' clauses and the bounds' (as words or as C++); alignment is the callers'."""
        mod = "{} % {} == 0"
        parts = [mod.format(dim, mult) for dim, mult in (("M", self.m), ("N", self.n), ("K", self.k)) if mult > 1]
        return parts + [(text if words else code).format(getattr(self, name))
                        for name, text, code in self._BOUNDS if getattr(self, name)]

    def __str__(self) -> str:
        parts = self._parts(words=True)
        if self.align:
            parts.append(f"{self.align}-byte aligned pointers" if self.operands == "ABC"
                         else f"{' and '.join(self.operands)} {self.align}-byte aligned")
        return ", ".join(parts) or "always"

    def cpp(self) -> str:
        """The same test as a C++ expression over `M`, `N`, `K` and the pointers `A`, `B`, `C`
        (what `gemmlab export` writes into its `solve`)."""
        parts = self._parts(words=False)
        if self.align:
            parts += [f"((uintptr_t){x} % {self.align} == 0)" for x in self.operands]
        return " && ".join(parts) or "true"

#: The float4 paths: every row of A, B and C starts on a 16-byte boundary.
VEC4 = Requires(n=4, k=4, align=16)


def whole_tiles(rows: int, step: int, cols: int) -> Requires:
    """The shape is a whole number of rows×step (A) and step×cols (B) tiles, and float4-aligned."""
    return Requires(m=rows, n=math.lcm(step, 4), k=math.lcm(cols, 4), align=16)



@dataclass(frozen=True)
class AllOf:
    """Several preconditions at once (`Requires`, a shape class of `policy.classes`), with the same
    trio: calling decides, `str()` says them all, `cpp()` joins their C++ tests."""

    parts: tuple

    def __call__(self, a, b, c, m: int, n: int, k: int) -> bool:
        return all(p(a, b, c, m, n, k) for p in self.parts)

    def __str__(self) -> str:
        return ", ".join(str(p) for p in self.parts)

    def cpp(self) -> str:
        return " && ".join(f"({p.cpp()})" for p in self.parts)


def all_of(*conds):
    """The preconditions `conds` at once, nested `AllOf`s flattened and None (no precondition)
    left out: one of them alone as it is, none as None."""
    flat = tuple(p for c in conds if c is not None for p in (c.parts if isinstance(c, AllOf) else (c,)))
    return None if not flat else flat[0] if len(flat) == 1 else AllOf(flat)
