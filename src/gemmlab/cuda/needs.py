"""A launch's precondition, in one place: what it needs of the GPU and the build (`Needs`, a
launch's `needs`), and when a call suits it (`When`, a launch's `when`: M, N, K and the pointers).
Each says itself in words and in C++.

**Of the GPU and the build.**

Three thresholds matter to the ladder, and they are not one number:

* **sm_80** — ``cp.async`` (the copy engine), ``mma.sync`` with TF32, ``cvt.rna.tf32``:
  any GPU from Ampere on, and any build for such a target;
* **sm_90** — TMA (``cp.async.bulk.tensor``), ``mbarrier`` transaction counts, clusters:
  Hopper and every later GPU, from a plain ``sm_90`` (or later) build;
* **sm_90a** — ``wgmma`` and ``setmaxnreg``: arch-specific instructions that exist on
  compute capability 9.0 alone, and only in a build for the ``sm_90a`` target
  (``__CUDA_ARCH_FEAT_SM90_ALL``); a plain ``sm_90`` build, or a Blackwell GPU, has none.

`Needs` says each of these once: whether a device runs it (dispatch, ``can_run_on``, the
tuner), whether a target builds it (``inspect --arch``), the words (``explain``) and the
preprocessor test of a device pass that holds it (the exporter's guards, and the bit an
exported file reads back to learn what its loaded image holds).

**Of the call.** A fast path holds for a call when M, N and K are multiples of given numbers and
some operands start on a byte boundary. `When` holds those numbers: calling it decides, `str()`
says them for `explain`, `inspect` and `--json`, `cpp()` is the C++ test of an exported file. Text
and test cannot drift apart, because there is only one of them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import Enum
from functools import total_ordering
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

#: A target's name: sm_XY, optionally `a` (arch-specific) or `f` (family-specific).
ARCH_NAME = re.compile(r"sm_(\d+)([af]?)")


def cc_of(arch: str) -> tuple[int, int]:
    """`sm_90a` → (9, 0), `sm_120` → (12, 0), `sm_100f` → (10, 0)."""
    name = ARCH_NAME.fullmatch(arch)
    if not name:
        raise ValueError(f"not an architecture name: {arch!r}")
    number = int(name.group(1))
    return number // 10, number % 10


@total_ordering
class Needs(Enum):
    """The strongest feature a kernel uses; each member implies the ones before it."""

    #       rank, min cc, in words,       what it brings,                         device-pass test
    # (what it brings is written without commas: preconditions are comma-separated clauses)
    ANY = (0, (5, 0), "any GPU", "plain CUDA", "1")
    SM80 = (1, (8, 0), "sm_80+", "cp.async/mma.sync/TF32 rounding", "__CUDA_ARCH__ >= 800")
    SM90 = (2, (9, 0), "sm_90+", "TMA/mbarrier transactions/clusters", "__CUDA_ARCH__ >= 900")
    SM90A = (3, (9, 0), "sm_90a only", "wgmma/setmaxnreg", "defined(__CUDA_ARCH_FEAT_SM90_ALL)")

    def __init__(self, rank: int, min_cc: tuple[int, int], short: str, features: str, guard: str):
        self.rank = rank
        self.min_cc = min_cc
        self.short = short
        self.features = features
        #: A preprocessor condition, true in a device pass whose target has these features.
        self.guard = guard

    def __lt__(self, other: Needs) -> bool:
        return self.rank < other.rank

    def __str__(self) -> str:
        """"sm_90+ (TMA/mbarrier transactions/clusters)": the tier and what it brings (a precondition's
        clause); `short` is the GPUs alone, for a rung's needs line."""
        return self.short if self is Needs.ANY else f"{self.short} ({self.features})"

    @property
    def bit(self) -> int:
        """This member's bit in an exported file's record of what its loaded image holds (ANY: 0)."""
        return 0 if self is Needs.ANY else 1 << (self.rank - 1)

    def runs_on(self, cc: tuple[int, int]) -> bool:
        """Whether a device of compute capability `cc` has these features."""
        return cc == self.min_cc if self is Needs.SM90A else cc >= self.min_cc

    def builds_for(self, arch: str) -> bool:
        """Whether a build for target `arch` (sm_XY[a|f]) holds these features: sm_90a's
        instructions for sm_90a alone, anything else for its capability or later."""
        return self.runs_on(cc_of(arch)) and (self is not Needs.SM90A or arch.endswith("a"))

    @classmethod
    def of(cls, *needs: Needs) -> Needs:
        """The strongest of several (a launch and its pre-passes); ANY for none."""
        return max(needs, default=cls.ANY, key=lambda n: n.rank)


def aligned(*tensors: torch.Tensor, to: int) -> bool:
    return all(t.data_ptr() % to == 0 for t in tensors)


@dataclass(frozen=True)
class When:
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
VEC4 = When(n=4, k=4, align=16)


def whole_tiles(rows: int, depth: int, cols: int) -> When:
    """The shape is a whole number of rows×depth (A) and depth×cols (B) tiles, and float4-aligned."""
    return When(m=rows, n=math.lcm(depth, 4), k=math.lcm(cols, 4), align=16)



@dataclass(frozen=True)
class AllOf:
    """Several preconditions at once (`When`, a shape class of `policy.classes`), with the same
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
