"""The twins and refinements `default` puts before a record's winners, and their thresholds: each a
launch of a rung's kernel built again (split, on a line of blocks, reading B by 4-byte copies,
the thin kernels at their floor). The rungs run their own launches (`launches.RUNGS`); only
`default`'s chain, `spaces`' refinements and `tensor` use these.
"""

from __future__ import annotations

import dataclasses

from .. import launches as builders
from ..cuda.dispatch import Launch
from ..cuda.needs import When


def split_twin(launch: Launch) -> Launch:
    """A bigtile launch's SPLIT 1 twin (`splitk`'s build of its knobs), named "split-…"; the parts
    are the host's policy (cuda/handoff.py)."""
    twin = builders.bigtile_launch(bool(launch.defines["PAD_B"]), **(builders.bigtile_knobs(launch.defines) | {"split": True}))
    return dataclasses.replace(twin, name=f"split-{launch.name}")


#: The most rows of C at which a b-padded winner's `scalar_twin` runs first: B's padded copy's
#: share of a call grows as 1/M, the 4-byte copies' cost does not (experiments/README.md#scalar-b).
SCALAR_B_ROWS = 128


def tail_twin(launch: Launch) -> Launch:
    """A bigtile launch's twin on a line of blocks (SPLIT 2): the last wave's few tiles may split
    into more parts than the rest (`handoff.tail_plan`, bigtile_splitk.md). Named "tail-…"."""
    if launch.source != "bigtile.cu":
        raise ValueError(f"tail_twin: {launch.name} is not a bigtile launch")
    twin = launch.with_defines({"SPLIT": 2})
    return dataclasses.replace(twin, name=f"tail-{launch.name}", when=launch.when)


def tailed(chain: tuple[Launch, ...]) -> tuple[Launch, ...]:
    """`chain` with each split bigtile launch (SPLIT 1) turned into its `tail_twin`, as
    `default` runs them (experiments/README.md#tail-split); the rungs keep SPLIT 1, as ladder steps."""
    def splits(x: Launch) -> bool:
        return x.source == "bigtile.cu" and x.defines.get("SPLIT") == 1
    return tuple(tail_twin(x) if splits(x) else x for x in chain)


def scalar_twin(launch: Launch) -> Launch:
    """A b-padded bigtile launch's twin reading B as it lies by 4-byte copies (VEC 1, no TMA_COPY),
    split as `split_twin`, under M ≤ SCALAR_B_ROWS. Named "scalar-…"."""
    twin = builders.bigtile_launch(False, **(builders.bigtile_knobs(launch.defines) | {"split": True, "tma": False}), vec=1)
    return dataclasses.replace(twin, name=f"scalar-{launch.name}", when=When(rows=SCALAR_B_ROWS))


#: Where `default` runs thin_rows (four columns a lane) before `small`'s winners: hoisted `small`
#: leads it elsewhere (thin.md's preconditions, experiments/README.md#thin-floor).
DEFAULT_THIN_ROWS = 4
DEFAULT_THIN_B = 1 << 24


def default_thin_launches() -> tuple[Launch, ...]:
    """The `thin` kernels `default` runs before `small`'s winners: the rung's thin_cols, and thin_rows
    under DEFAULT_THIN_ROWS and DEFAULT_THIN_B."""
    cols = tuple(x for x in builders.THIN_LAUNCHES if x.entry == "thin_cols")
    rows = builders.thin_launch("rows", 4)
    return (*cols, dataclasses.replace(rows, when=When(rows=DEFAULT_THIN_ROWS, b_elements=DEFAULT_THIN_B)))
