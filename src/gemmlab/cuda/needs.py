"""What a kernel needs of the GPU and of the build, by feature: one type for every reader.

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
"""

from __future__ import annotations

import re
from enum import Enum
from functools import total_ordering

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
