"""`tf32`'s and `3xtf32`'s chains: which kernel a tensor-core dispatcher runs at a shape.

Each is the same walk (kernels/cuda/tensor_dispatch.md has the measurements behind every bound):
- `short` where the reduction is one step of 32 or less and C is large: writing C is the work;
- the strict thin kernels `default` runs where C is thin (`STRICT_THIN`): streaming the long
  operand is the work, and a 64×64 tensor tile would be one to eight columns full;
- the Hopper kernel's split twins where its tiles are few and one wave of parts of at least
  `SPLIT_LEAST` fills the GPU (`where_split_pays`, `handoff.OneWave`);
- the Hopper kernel from `*_OUTPUTS` outputs and N ≥ `HOPPER_MIN_N`;
- below them a small-tile kernel: `mma-split` (TF32), `small` (strict FP32 is both faster there than
  three TF32 products and more accurate); on a GPU before Hopper, these alone.
The Hopper launches run only where C is at least `WIDTH_FLOOR` of their blocks side by side wide
(experiments/README.md#width-parts).
"""

from __future__ import annotations

import dataclasses

from .. import launches as builders
from ..cuda import hopper
from ..cuda.dispatch import Launch
from ..cuda.needs import When, all_of
from . import twins

#: Outputs (M·K) from which the Hopper kernels' persistent 128×256 tiles run (tensor_dispatch.md):
#: where wgmma-swap passes mma-split, and wgmma-3xtf32 passes cuBLAS FP32 and `small`.
HOPPER_TF32_OUTPUTS = 1 << 19
HOPPER_3X_OUTPUTS = 1 << 20
#: The shortest reduction the Hopper kernels run over: two steps of 32 lost to the small kernels.
HOPPER_MIN_N = 128
#: Where the split twins run ahead of the unsplit kernels: from 512² outputs (and N ≥ 512 for
#: 3xtf32), where `handoff.OneWave` splits (experiments/README.md#swap-split, #3x-split).
SPLIT_OUTPUTS = 1 << 18
SPLIT_3X_MIN_N = 512
#: The least part of each Hopper kernel's split twins, in elements of the reduction: shorter parts
#: lost to the unsplit chain (experiments/README.md#width-parts).
SPLIT_LEAST = {"wgmma-swap": 256, "wgmma-3xtf32": 200}
#: The width floor of the Hopper launches, as a fraction of their blocks side by side (`wide`).
WIDTH_FLOOR = (3, 4)
#: Where C is thin, `default`'s strict kernels: gemv first at K = 1, then thin's.
STRICT_THIN = (builders.gemv_launch(), *twins.default_thin_launches())


def from_outputs(launches: tuple[Launch, ...], outputs: int, min_reduction: int = 0,
                 min_cols: int = 0) -> tuple[Launch, ...]:
    """The same launches, each also requiring M·K ≥ `outputs`, N ≥ `min_reduction` and K ≥ `min_cols`
    (none of them a fallback any more)."""
    return tuple(dataclasses.replace(x, when=dataclasses.replace(x.when or When(), outputs=outputs,
                                                                 min_reduction=min_reduction, min_cols=min_cols))
                 for x in launches)


def wide(launch: Launch) -> int:
    """The columns of C a launch's blocks take side by side: its tile's, times its cluster."""
    return launch.tile[1] * launch.kernel.cluster[0]


def where_split_pays(twins: tuple[Launch, ...], outputs: int, min_reduction: int = 0,
                     min_cols: int = 0, least: int = 0) -> tuple[Launch, ...]:
    """Persistent split twins under their own preconditions, from `outputs` and `min_reduction`, and
    only where they split in one wave (`handoff.OneWave`) into parts of at least `least`: elsewhere
    the unsplit launch after them runs (in one part the SPLIT builds are slower than the shipped
    ones: experiments/README.md#3x-split)."""
    return tuple(dataclasses.replace(x, when=all_of(x.when, dataclasses.replace(hopper.one_wave(x), least=least)))
                 for x in from_outputs(twins, outputs, min_reduction, min_cols))


def chain(hopper_rung: str, twins: tuple[Launch, ...], outputs: int, split_min_n: int,
          below: str) -> tuple[Launch, ...]:
    """A tensor dispatcher (the module's walk): `short` from `outputs`, `STRICT_THIN`, the Hopper
    rung's split `twins` (from N ≥ `split_min_n`), the Hopper rung from `outputs`, then `below`'s
    launches."""
    num, den = WIDTH_FLOOR
    cols = wide(builders.RUNGS[hopper_rung][0]) * num // den
    split = where_split_pays(twins, SPLIT_OUTPUTS, split_min_n, cols, SPLIT_LEAST[hopper_rung])
    return (from_outputs((builders.short_launch(),), outputs) + STRICT_THIN + split
            + from_outputs(builders.RUNGS[hopper_rung], outputs, HOPPER_MIN_N, cols) + builders.RUNGS[below])


def tf32_launches() -> tuple[Launch, ...]:
    """`tf32`'s chain."""
    return chain("wgmma-swap", builders.wgmma_swap_split_launches(), HOPPER_TF32_OUTPUTS, HOPPER_MIN_N, "mma-split")


def x3_launches() -> tuple[Launch, ...]:
    """`3xtf32`'s chain."""
    return chain("wgmma-3xtf32", builders.wgmma_3xtf32_split_launches(), HOPPER_3X_OUTPUTS, SPLIT_3X_MIN_N, "small")
