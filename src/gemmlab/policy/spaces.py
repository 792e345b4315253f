"""What `gemmlab tune` may vary, per rung: the search spaces live here, not in the rungs' files.

A `Space` names a rung's tunable launches and the macros (knobs) it varies on
them, and rebuilds a launch from (launch name, knob values) with the rung's
own builder (`gemmlab.launches`), so that a changed tile or step also changes the block, the tile
and the precondition (a float4 kernel with BM=128 has 512 threads and a
128×128 tile). Rebuilding a launch from the rung's current knobs gives the
rung's launch back exactly (a test holds every space to that).

Candidate order is fixed: the launch's current knobs first, then the product
of the knob values in the order listed here, skipping invalid combinations.
Ties in time go to the earlier candidate, so the status quo wins a tie.

Adding a space for a new rung: write its `build(name, knobs)` from the
rung's builder in `gemmlab.launches`, list its knobs, and add it to `SPACES`.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .. import launches as builders
from .. import problem
from ..cuda.dispatch import Launch
from ..cuda.handoff import SplitPays
from ..cuda.requires import all_of
from .classes import SIZES, ShapeClass, fewest_rows, size_of

Knobs = dict[str, int]


@dataclass(frozen=True)
class Space:
    rung: str
    knobs: tuple[tuple[str, tuple[int, ...]], ...]  # macro → values, in search order
    build: Callable[[str, Mapping[str, int]], Launch] = field(repr=False)
    launches: tuple[str, ...]  # the names of the launches it tunes (others, e.g. a scalar fallback, it leaves)
    valid: Callable[[Mapping[str, int]], bool] = field(default=lambda knobs: True, repr=False)
    # Knobs a launch may leave out of its macros, and the value that then holds (the macro's
    # default in the .cu): a knob added later keeps the rung's launches, and their cubins, as
    # they were, and records made before it still name whole launches.
    absent: Mapping[str, int] = field(default_factory=dict)
    # Knobs the space once searched and no longer does, with the value its launches keep: no candidate
    # varies them, and a record made while they were searched still rebuilds what it timed.
    retired: Mapping[str, int] = field(default_factory=dict)
    # Launches that run before a winner of this space in `default` (given the winner and its
    # class), each where its own precondition holds as well as the class's: kernels or
    # builds for the shapes of a class they suit better (before `small`'s winner, `thin`'s kernels
    # and the winner's knobs on a narrow tile; before an unsplit bigtile winner, its split-K twin
    # where splitting pays; before a b-padded winner, its 4-byte twin where C has few rows).
    # Given the winner, its class and the record's SM count. Not searched: made from the winner or fixed.
    refine: Callable[[Launch, ShapeClass, int], tuple[Launch, ...]] = field(default=lambda launch, cls, sms: (),
                                                                            repr=False)
    refined_by: tuple[str, ...] = ()  # the other rungs whose launches `refine` adds (their sources are default's)

    def current(self, launch: str) -> Knobs:
        """The knobs the rung's launch `launch` uses today."""
        defines = builders.named(self.rung, launch).defines
        return {name: int(defines[name]) if name in defines else self.absent[name] for name, _ in self.knobs}

    def knobs_of(self, knobs: Mapping[str, int]) -> Knobs:
        """`knobs` with the absent ones filled in (a record made before a knob existed) and the retired
        ones at their kept values where the record does not name them (a record made after)."""
        return {**self.absent, **self.retired, **knobs}

    def candidates(self, launch: str) -> list[Knobs]:
        """Every valid knob setting for launch `launch`, the current one first, then the product."""
        names = [name for name, _ in self.knobs]
        product = [dict(zip(names, values, strict=True))
                   for values in itertools.product(*(vals for _, vals in self.knobs))]
        current = self.current(launch)
        ordered = [current] + [p for p in product if p != current]
        return [p for p in ordered if self.valid(p)]


def _warptile(name: str, knobs: Mapping[str, int]) -> Launch:
    launch = builders.warptile_launch(knobs["BK"], knobs["MIN_BLOCKS"], exact=name == "whole-tiles")
    return builders.padded(launch) if name == "padded" else launch


def _float4(name: str, knobs: Mapping[str, int]) -> Launch:
    return builders.float4_launch(knobs["BM"], knobs["BK"], knobs["UNROLL_K"], knobs["MIN_BLOCKS"],
                                  exact=name == "whole-tiles")


def _float4_valid(knobs: Mapping[str, int]) -> bool:
    threads = (knobs["BM"] // 8) * (knobs["BM"] // 4)
    return (knobs["UNROLL_K"] <= knobs["BK"] and knobs["BK"] % knobs["UNROLL_K"] == 0
            and threads * knobs["MIN_BLOCKS"] <= 2048)


def _bigtile(name: str, knobs: Mapping[str, int]) -> Launch:
    j_outer = knobs.get("J_OUTER", _BIGTILE_RETIRED["J_OUTER"])  # retired: set only by a record's candidates
    return builders.bigtile_launch(name == "b-padded", j_outer, knobs["WARPS_M"], 2, knobs["BK"],
                                   knobs["STAGES"], 2 if knobs["WARPS_M"] == 2 else 1,
                                   fetch_ba=bool(knobs["FETCH_BA"]), tma=bool(knobs["TMA_COPY"]))


def _splitk(name: str, knobs: Mapping[str, int]) -> Launch:
    return builders.bigtile_launch(name == "b-padded", bk=knobs["BK"], stages=knobs["STAGES"], split=True,
                                   fetch_ba=bool(knobs["FETCH_BA"]), tma=bool(knobs["TMA_COPY"]))


def _step_fits(knobs: Mapping[str, int]) -> bool:
    """TMA_COPY with BK 16 or 32 only: bigtile's BK 8 launch with it ran 0.88–0.96× cuBLAS FP32
    at the large shapes on the H200, 9 % behind the same launch without it at 2048³: half the
    bytes per barrier round trip. BK 32 with TMA only (its boxes are what pays: 1.044× and 1.069×
    at the performance shape and 8192³ against 1.036× and 1.037× for BK 16 in one run,
    bigtile_tma.md), in 2 or 3 stages (two blocks' stages fit an SM's shared memory); 2
    stages with BK 32 only."""
    if knobs["TMA_COPY"] and knobs["BK"] == 8:
        return False
    if knobs["BK"] == 32 and (not knobs["TMA_COPY"] or knobs["STAGES"] > 3):
        return False
    return knobs["STAGES"] != 2 or knobs["BK"] == 32


def _tma_warp(name: str, knobs: Mapping[str, int]) -> Launch:
    return builders.tma_warp_launch(name == "b-padded", knobs["BK"], knobs["STAGES"], bool(knobs["FETCH_BA"]))


def _tma_warp_fits(knobs: Mapping[str, int]) -> bool:
    """TMA with BK 16 or 32 (`_step_fits`), and TMA_WARP_BLOCKS blocks' stages in an SM's shared memory."""
    return _step_fits(knobs | {"TMA_COPY": 1}) and \
        builders.TMA_WARP_BLOCKS * (_tma_warp("b-in-place", knobs).kernel.smem + SMEM_RESERVED) <= SM90_SMEM


def _small(name: str, knobs: Mapping[str, int]) -> Launch:
    return builders.small_launch(4 if name == "vec4" else 1, knobs["BM"], knobs["BN"], knobs["BK"],
                                 knobs["STAGES"], knobs["CHAINS"], knobs["MIN_BLOCKS"])


def _small_valid(knobs: Mapping[str, int]) -> bool:
    """Every thread copies whole float4s of both tiles each step (small.cu's static_assert),
    and the stages fit static shared memory's 48 KB."""
    launch = builders.small_launch(4, knobs["BM"], knobs["BN"], knobs["BK"], knobs["STAGES"], knobs["CHAINS"],
                                   knobs["MIN_BLOCKS"])
    whole = all(x % (4 * launch.threads) == 0 for x in (knobs["BM"] * knobs["BK"], knobs["BK"] * knobs["BN"]))
    return whole and launch.static_smem <= STATIC_SMEM


def _small_refine(launch: Launch, cls: ShapeClass, sms: int) -> tuple[Launch, ...]:
    """Where the class's layout lets a side of C be thin or narrow (a tiled class's M and K are
    multiples of 128): `thin`'s kernels where K ≤ THIN, or M is a few rows over a large B
    (`launches.default_thin_launches`), in the sizes such shapes reach (`_thin_reaches`), then the
    winner's narrow twin (`launches.narrow`); before
    a winner of 4-byte copies, its twins of wider ones where N or K allows (`launches.width_twins`)."""
    if cls.layout == "tiled":
        return ()
    return (*(x for x in builders.default_thin_launches() if _thin_reaches(x, cls, sms)), builders.narrow(launch),
            *(x for x in builders.width_twins(launch) if _widths_fit(x, cls)))


def _thin_reaches(launch: Launch, cls: ShapeClass, sms: int) -> bool:
    """Whether a shape a `thin` launch takes (M ≤ its rows, or K ≤ its columns) can fall in a
    class of `cls`'s size on `sms` SMs: micro, or a size no larger than that of the largest such
    shape (the other two sides at problem.MAX_DIM). On the H200's 132 SMs every one is micro
    (K ≤ 8: at most 8·8192² = 2²⁹ of work, micro's bound 2²²·132), so elsewhere the launch would
    never run, and still be listed in `gemmlab export`'s file."""
    most = problem.MAX_DIM
    rows, cols = launch.when.rows, launch.when.cols
    largest = size_of(rows, most, most, sms) if rows else size_of(most, most, cols, sms)
    return SIZES.index(cls.size) <= SIZES.index(largest)  # micro, SIZES' first, always


def _widths_fit(launch: Launch, cls: ShapeClass) -> bool:
    """Whether a class's layout leaves room for a width twin's copies: none of 16 bytes of A's rows
    in odd-n (N % 4 != 0), nor of B's in odd (K % 4 != 0). The others would never run there, and
    each would still be a kernel in `gemmlab export`'s file."""
    widths = launch.defines.get("VEC_A"), launch.defines.get("VEC_B")
    return not (cls.layout == "odd-n" and widths[0] == 4 or cls.layout == "odd" and widths[1] == 4)


def _bigtile_refine(launch: Launch, cls: ShapeClass, sms: int) -> tuple[Launch, ...]:
    """The winner's split-K twin (`launches.split_twin`) where `handoff.parts` splits the shape:
    a class is tuned at one shape, often one whose tiles fill whole waves (2048³: 256 tiles on
    264 slots), and an unsplit winner then runs its other shapes' last waves part empty
    (medium-odd on the H200, 2026-12-02: 0.80–0.85× cuBLAS at 2438×4958×2453 and three like it,
    before calibration gave that class to tma-warp). Where the tiles fill the GPU, the winner runs
    as it was timed."""
    if launch.defines.get("SPLIT"):
        return _padded_refine(launch, cls, sms)
    twin = builders.split_twin(launch)
    pays = SplitPays(twin.tile, twin.step, int(twin.defines["MIN_BLOCKS"]), sms)
    return (*_padded_refine(launch, cls, sms), dataclasses.replace(twin, when=all_of(twin.when, pays)))


def _padded_refine(launch: Launch, cls: ShapeClass, sms: int) -> tuple[Launch, ...]:
    """Before a b-padded winner, its twin that reads B as it lies by 4-byte copies
    (`launches.scalar_twin`) where C has few rows, in the classes that hold such shapes. The padded
    copy is one streaming pass over B whatever M, where the product's work grows with M, so at few
    rows the pass is most of the call (116×6278×7990 on the H200, 2026-12-02: 0.65× cuBLAS, the
    random record's worst).

    Not the same build reading B in place where K % 4 == 0 (an odd class's shapes whose N alone is
    odd): tried at 2a55aa1, it ran 0.88–0.93× cuBLAS at the four such large shapes of seed 2031,
    where the padded winner had run 1.04–1.11× at such shapes of seeds 2027–2029: the build without
    PAD_B is another ptxas allocation of the loop, and the slower (the `tma` rung's own in-place
    launch ran 0.89–0.95× there too)."""
    if not launch.defines.get("PAD_B") or fewest_rows(cls, sms) > builders.SCALAR_B_ROWS:
        return ()
    return (builders.scalar_twin(launch),)


#: Shared memory of an sm_90 SM, and what the system keeps of it per block (CUDA programming guide,
#: compute capability 9.0).
SM90_SMEM, SMEM_RESERVED = 228 * 1024, 1024
#: What a kernel may declare of static shared memory (more needs dynamic shared memory).
STATIC_SMEM = 48 * 1024

#: The bigtile kernel's two launches, for bigtile, splitk and tma alike.
_BIGTILE = ("b-in-place", "b-padded")

#: FETCH_BA and TMA_COPY leave the launches they are not set on as they were (bigtile.cu's 0).
_ABSENT = {"FETCH_BA": 0, "TMA_COPY": 0}
#: bigtile's knobs no longer searched, and the value its launches keep (SPACES' note).
_BIGTILE_RETIRED = {"J_OUTER": 2}


SPACES: dict[str, Space] = {
    # bigtile: b-in-place B as it lies, b-padded B's padded copy (any shape). MIN_BLOCKS follows the warps:
    # two 128-thread blocks or one 256-thread block per SM. A_T stays 1: A as it lies (A_T 0) lost
    # at every setting tried (bigtile.md). J_OUTER is not searched, its launches keep 2: 0 ran 4–90 %
    # behind each class's best in the 2026-11-30 record, and 1 won no class of the installed one
    # (04c164b, 2026-12-04: its best 1.0–6.6 % behind each class's best), so it was a knob that never
    # won (issue 27: a knob stays only where it wins). FETCH_BA (B's fragments first) changes ptxas's
    # register allocation: 2–3 % at the large shapes on the H200 (bigtile.md). TMA_COPY: the
    # tiles by TMA (sm_90a, BK 16 or 32), 2.7 % at the performance shape (bigtile_tma.md).
    "bigtile": Space("bigtile", (("WARPS_M", (2, 4)), ("BK", (16, 8, 32)), ("STAGES", (4, 3, 2)),
                                 ("FETCH_BA", (0, 1)), ("TMA_COPY", (0, 1))),
                     _bigtile, _BIGTILE, _step_fits, absent=_ABSENT, retired=_BIGTILE_RETIRED, refine=_bigtile_refine,
                     refined_by=("splitk",)),
    # splitk: bigtile with SPLIT 1 (J_OUTER 2, 2×2 warps: the winners above); its parts per tile
    # are the host's policy (cuda/handoff.py), not a knob.
    "splitk": Space("splitk", (("BK", (8, 16, 32)), ("STAGES", (3, 4, 2)), ("FETCH_BA", (0, 1)), ("TMA_COPY", (0, 1))),
                    _splitk, _BIGTILE, _step_fits, absent=_ABSENT, refine=_padded_refine),
    # small: vec4 16-byte copies, any 4-byte copies (any shape); tile, step, stages, chains and
    # the blocks per SM the split policy counts on (small.md; 4 since 2026-12-03: at 101–117
    # registers an SM holds 4 blocks of the 32×64 tile, and the policy counted 3). The first search (2026-12-01,
    # register prefetch, one chain) chose 32×64 tiles with BK 16 at every micro and tiny class.
    "small": Space("small", (("BM", (32, 64)), ("BN", (64,)), ("BK", (16, 32)), ("STAGES", (4, 6)),
                             ("CHAINS", (2, 4)), ("MIN_BLOCKS", (3, 2, 4))),
                   _small, ("vec4", "any"), _small_valid, refine=_small_refine, refined_by=("thin",)),
    # tma: splitk's space, around the tma rung's own launches (BK 16, 3 stages, FETCH_BA, TMA_COPY):
    # calibration (tune/calibrate.py) names that rung's launch where a random sweep found it fastest.
    "tma": Space("tma", (("BK", (16, 32)), ("STAGES", (3, 4, 2)), ("FETCH_BA", (1, 0)), ("TMA_COPY", (1,))),
                 _splitk, _BIGTILE, _step_fits, absent=_ABSENT, refine=_padded_refine),
    # tma-warp: tma's kernel in blocks of one warp (64×64 tiles, eight blocks an SM): step, stages
    # and the fragment order; the warps and the blocks an SM are what make the rung (bigtile_warp.md).
    "tma-warp": Space("tma-warp", (("BK", (16, 32)), ("STAGES", (3, 2, 4)), ("FETCH_BA", (1, 0))),
                      _tma_warp, _BIGTILE, _tma_warp_fits, absent={"FETCH_BA": 0}, refine=_padded_refine),
    # warptile: whole tiles, float4 bounds-checked (vec4), the same on padded copies.
    "warptile": Space("warptile", (("BK", (16, 8)), ("MIN_BLOCKS", (2, 1))), _warptile,
                      ("whole-tiles", "vec4", "padded")),
    # float4: whole tiles, bounds-checked (vec4); its scalar tiling2d fallback (any) is left as it is.
    "float4": Space("float4", (("BM", (64, 128)), ("BK", (32, 16)), ("UNROLL_K", (32, 16, 2)),
                               ("MIN_BLOCKS", (2, 1, 4))), _float4, ("whole-tiles", "vec4"), _float4_valid),
}


def space(rung: str) -> Space:
    return SPACES[rung]
