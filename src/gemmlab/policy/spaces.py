"""What `gemmlab tune` may vary, per rung: each `Space` names a rung's tunable launches and knobs.

A launch is rebuilt from (name, knobs) with the rung's own builder (`gemmlab.launches`), so a changed
tile also changes the block and the precondition; the current knobs rebuild the rung's launch exactly.
Candidates come current knobs first, so the status quo wins a tie.
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
from ..cuda.needs import all_of
from . import twins
from .classes import SIZES, ShapeClass, fewest_rows, size_of

Knobs = dict[str, int]


@dataclass(frozen=True)
class Space:
    rung: str
    knobs: tuple[tuple[str, tuple[int, ...]], ...]  # macro → values, in search order
    build: Callable[[str, Mapping[str, int]], Launch] = field(repr=False)
    launches: tuple[str, ...]  # those it tunes; others (a scalar fallback) stay as they are
    valid: Callable[[Mapping[str, int]], bool] = field(default=lambda knobs: True, repr=False)
    # Knobs a launch may leave out, at the .cu's default: a new knob leaves old launches, cubins and
    # records as they were.
    absent: Mapping[str, int] = field(default_factory=dict)
    # Knobs no longer searched, at the value the launches keep: older records still rebuild what they timed.
    retired: Mapping[str, int] = field(default_factory=dict)
    # Launches `default` runs before this space's winner (given it, its class and the SM count), for the
    # class's shapes they suit better; made from the winner, not searched (policy/default.md, "Dispatch").
    refine: Callable[[Launch, ShapeClass, int], tuple[Launch, ...]] = field(default=lambda launch, cls, sms: (),
                                                                            repr=False)
    refined_by: tuple[str, ...] = ()  # rungs whose launches `refine` adds

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
    """TMA copies only with BK 16 or 32 (at BK 8 a barrier round trip moves half the bytes), BK 32 only
    with TMA and in 2 or 3 stages (two blocks' stages fit an SM), 2 stages only with BK 32
    (kernels/cuda/bigtile_tma.md)."""
    if knobs["TMA_COPY"] and knobs["BK"] == 8:
        return False
    if knobs["BK"] == 32 and (not knobs["TMA_COPY"] or knobs["STAGES"] > 3):
        return False
    return knobs["STAGES"] != 2 or knobs["BK"] == 32


def _tma_warp(name: str, knobs: Mapping[str, int]) -> Launch:
    return builders.tma_warp_launch(name == "b-padded", knobs["BK"], knobs["STAGES"], bool(knobs["FETCH_BA"]))


def _tma_warp_fits(knobs: Mapping[str, int]) -> bool:
    """`_step_fits` with TMA, and TMA_WARP_BLOCKS blocks' stages in an SM's shared memory."""
    return _step_fits(knobs | {"TMA_COPY": 1}) and \
        builders.TMA_WARP_BLOCKS * (_tma_warp("b-in-place", knobs).kernel.smem + SMEM_RESERVED) <= SM90_SMEM


def _small(name: str, knobs: Mapping[str, int]) -> Launch:
    return builders.small_launch(4 if name == "vec4" else 1, knobs["BM"], knobs["BN"], knobs["BK"],
                                 knobs["STAGES"], knobs["CHAINS"], knobs["MIN_BLOCKS"])


def _small_valid(knobs: Mapping[str, int]) -> bool:
    """Every thread copies whole float4s of both tiles (small.cu's static_assert); stages fit static smem."""
    launch = builders.small_launch(4, knobs["BM"], knobs["BN"], knobs["BK"], knobs["STAGES"], knobs["CHAINS"],
                                   knobs["MIN_BLOCKS"])
    whole = all(x % (4 * launch.threads) == 0 for x in (knobs["BM"] * knobs["BK"], knobs["BK"] * knobs["BN"]))
    return whole and launch.static_smem <= STATIC_SMEM


def _small_refine(launch: Launch, cls: ShapeClass, sms: int) -> tuple[Launch, ...]:
    """Outside tiled classes (whose M and K are multiples of 128, never thin): `thin`'s kernels where
    such shapes can fall, the winner's narrow twin, and its wider-copy twins where the layout allows."""
    if cls.layout == "tiled":
        return ()
    return (*(x for x in twins.default_thin_launches() if _thin_reaches(x, cls, sms)), builders.narrow(launch),
            *(x for x in builders.width_twins(launch) if _widths_fit(x, cls)))


def _thin_reaches(launch: Launch, cls: ShapeClass, sms: int) -> bool:
    """Whether a shape a `thin` launch takes can fall in a class of `cls`'s size: a launch that could
    never run there would still be a kernel in `gemmlab export`'s file (on the H200, micro only)."""
    most = problem.MAX_DIM
    rows, cols = launch.when.rows, launch.when.cols
    largest = size_of(rows, most, most, sms) if rows else size_of(most, most, cols, sms)
    return SIZES.index(cls.size) <= SIZES.index(largest)  # micro, SIZES' first, always


def _widths_fit(launch: Launch, cls: ShapeClass) -> bool:
    """Whether a class's layout allows a width twin's 16-byte copies (of A's rows not in odd-n, of B's
    not in odd): one that could never run would still be a kernel in `gemmlab export`'s file."""
    widths = launch.defines.get("VEC_A"), launch.defines.get("VEC_B")
    return not (cls.layout == "odd-n" and widths[0] == 4 or cls.layout == "odd" and widths[1] == 4)


def _bigtile_refine(launch: Launch, cls: ShapeClass, sms: int) -> tuple[Launch, ...]:
    """The winner's split-K twin where `handoff.parts` splits the shape: a class is tuned at one shape
    whose tiles may fill whole waves, and its other shapes' last wave runs part empty
    (policy/default.md, "The split-K twin")."""
    if launch.defines.get("SPLIT"):
        return _padded_refine(launch, cls, sms)
    twin = twins.split_twin(launch)
    pays = SplitPays(twin.tile, twin.depth, int(twin.defines["MIN_BLOCKS"]), sms)
    return (*_padded_refine(launch, cls, sms), dataclasses.replace(twin, when=all_of(twin.when, pays)))


def _padded_refine(launch: Launch, cls: ShapeClass, sms: int) -> tuple[Launch, ...]:
    """Before a b-padded winner, its 4-byte-copy twin where C has few rows: B's padded copy costs the
    same whatever M, so there it is most of the call (experiments/README.md#scalar-b). Not a twin reading
    B in place by 16 bytes: without PAD_B ptxas builds a slower loop (experiments/README.md#random-shapes)."""
    if not launch.defines.get("PAD_B") or fewest_rows(cls, sms) > twins.SCALAR_B_ROWS:
        return ()
    return (twins.scalar_twin(launch),)


#: Shared memory of an sm_90 SM, and what the system keeps per block (CUDA programming guide, cc 9.0).
SM90_SMEM, SMEM_RESERVED = 228 * 1024, 1024
#: What a kernel may declare of static shared memory (more needs dynamic shared memory).
STATIC_SMEM = 48 * 1024

_BIGTILE = ("b-in-place", "b-padded")

_ABSENT = {"FETCH_BA": 0, "TMA_COPY": 0}  # bigtile.cu's defaults
_BIGTILE_RETIRED = {"J_OUTER": 2}


SPACES: dict[str, Space] = {
    # MIN_BLOCKS follows the warps: two 128-thread blocks or one 256-thread block per SM. A_T and J_OUTER
    # are fixed where their other values lost; FETCH_BA and TMA_COPY won (kernels/cuda/bigtile.md, bigtile_tma.md).
    "bigtile": Space("bigtile", (("WARPS_M", (2, 4)), ("BK", (16, 8, 32)), ("STAGES", (4, 3, 2)),
                                 ("FETCH_BA", (0, 1)), ("TMA_COPY", (0, 1))),
                     _bigtile, _BIGTILE, _step_fits, absent=_ABSENT, retired=_BIGTILE_RETIRED, refine=_bigtile_refine,
                     refined_by=("splitk",)),
    # Parts per tile are the host's policy (cuda/handoff.py), not a knob.
    "splitk": Space("splitk", (("BK", (8, 16, 32)), ("STAGES", (3, 4, 2)), ("FETCH_BA", (0, 1)), ("TMA_COPY", (0, 1))),
                    _splitk, _BIGTILE, _step_fits, absent=_ABSENT, refine=_padded_refine),
    # MIN_BLOCKS: the blocks per SM the split policy counts on (kernels/cuda/small.md, fifth hypothesis).
    "small": Space("small", (("BM", (32, 64)), ("BN", (64,)), ("BK", (16, 32)), ("STAGES", (4, 6)),
                             ("CHAINS", (2, 4)), ("MIN_BLOCKS", (3, 2, 4))),
                   _small, ("vec4", "any"), _small_valid, refine=_small_refine, refined_by=("thin",)),
    # splitk's space around the tma rung's launches, so calibration (tune/calibrate.py) can name them.
    "tma": Space("tma", (("BK", (16, 32)), ("STAGES", (3, 4, 2)), ("FETCH_BA", (1, 0)), ("TMA_COPY", (1,))),
                 _splitk, _BIGTILE, _step_fits, absent=_ABSENT, refine=_padded_refine),
    # One-warp blocks, eight an SM, make the rung, so they are not knobs (kernels/cuda/bigtile_warp.md).
    "tma-warp": Space("tma-warp", (("BK", (16, 32)), ("STAGES", (3, 2, 4)), ("FETCH_BA", (1, 0))),
                      _tma_warp, _BIGTILE, _tma_warp_fits, absent={"FETCH_BA": 0}, refine=_padded_refine),
    "warptile": Space("warptile", (("BK", (16, 8)), ("MIN_BLOCKS", (2, 1))), _warptile,
                      ("whole-tiles", "vec4", "padded")),
    "float4": Space("float4", (("BM", (64, 128)), ("BK", (32, 16)), ("UNROLL_K", (32, 16, 2)),
                               ("MIN_BLOCKS", (2, 1, 4))), _float4, ("whole-tiles", "vec4"), _float4_valid),
}


def space(rung: str) -> Space:
    return SPACES[rung]
