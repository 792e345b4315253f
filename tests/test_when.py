"""Every launch's precondition in words says exactly what its predicate decides."""

from __future__ import annotations

import dataclasses
import itertools
import re

import pytest
import torch

from gemmlab import registry
from gemmlab.cuda.handoff import OneWave, SplitPays
from gemmlab.cuda.needs import VEC4, AllOf, Needs, When, whole_tiles
from gemmlab.policy.classes import InClass


def _parts(when) -> tuple:
    return when.parts if isinstance(when, AllOf) else (when,)


def _own(launch):
    """The launch under its own `When` alone: `default` adds a shape class (`InClass`), whose
    words tests/test_tune.py reads; None where the launch has no other precondition."""
    own = [p for p in _parts(launch.when) if isinstance(p, When)]
    return dataclasses.replace(launch, when=own[0]) if len(own) == 1 else None


LAUNCHES = [(impl, _own(launch)) for impl in registry.IMPLEMENTATIONS for launch in impl.launches
            if launch.when is not None and _own(launch) is not None]
SIZES = (1, 2, 3, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 132, 256, 384)
#: Element offsets of A, B and C from a 64-byte aligned allocation: 4, 8, 16 and 32 bytes off, or none.
OFFSETS = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (2, 2, 2), (4, 0, 0), (0, 4, 4), (8, 8, 8)]


def _operands(m: int, n: int, k: int, offsets) -> tuple[torch.Tensor, ...]:
    def at(rows, cols, off):
        return torch.empty(rows * cols + 8)[off:off + rows * cols].view(rows, cols)

    return at(m, n, offsets[0]), at(n, k, offsets[1]), at(m, k, offsets[2])


def read_text(text: str):
    """An independent reading of the words: `X % d == 0` clauses and `… N-byte aligned` ones."""
    clauses = [c.strip() for c in text.split(",")]
    mods, aligns, cc, outputs, rows, cols, a_elements, b_elements = [], [], None, 0, None, None, 0, 0
    reduction, least, wide = None, 0, 0
    for clause in clauses:
        if m := re.fullmatch(r"([MNK]) % (\d+) == 0", clause):
            mods.append(("MNK".index(m.group(1)), int(m.group(2))))
        elif m := re.fullmatch(r"M·K ≥ (\d+)", clause):
            outputs = int(m.group(1))
        elif m := re.fullmatch(r"M ≤ (\d+)", clause):
            rows = int(m.group(1))
        elif m := re.fullmatch(r"K ≤ (\d+)", clause):
            cols = int(m.group(1))
        elif m := re.fullmatch(r"N ≤ (\d+)", clause):
            reduction = int(m.group(1))
        elif m := re.fullmatch(r"N ≥ (\d+)", clause):
            least = int(m.group(1))
        elif m := re.fullmatch(r"K ≥ (\d+)", clause):
            wide = int(m.group(1))
        elif m := re.fullmatch(r"M·N ≥ (\d+)", clause):
            a_elements = int(m.group(1))
        elif m := re.fullmatch(r"N·K ≥ (\d+)", clause):
            b_elements = int(m.group(1))
        elif m := re.fullmatch(r"(\d+)-byte aligned pointers", clause):
            aligns.append(((0, 1, 2), int(m.group(1))))
        elif m := re.fullmatch(r"([ABC](?: and [ABC])*) (\d+)-byte aligned", clause):
            aligns.append((tuple("ABC".index(x) for x in m.group(1).split(" and ")), int(m.group(2))))
        elif m := re.fullmatch(r"sm_(\d)(\d)(\+|a only) \([^,()]+\)", clause):  # a floor, or sm_90a's GPU
            cc = (int(m.group(1)), int(m.group(2)))
        else:
            raise AssertionError(f"clause {clause!r} of {text!r} says nothing checkable")

    def holds(tensors, dims) -> bool:
        return (all(dims[i] % d == 0 for i, d in mods) and dims[0] * dims[2] >= outputs
                and (rows is None or dims[0] <= rows) and (cols is None or dims[2] <= cols)
                and (reduction is None or dims[1] <= reduction) and dims[1] >= least and dims[2] >= wide
                and dims[0] * dims[1] >= a_elements and dims[1] * dims[2] >= b_elements
                and all(tensors[i].data_ptr() % to == 0 for which, to in aligns for i in which))

    return holds, cc


@pytest.mark.parametrize("impl,launch", LAUNCHES, ids=lambda x: getattr(x, "name", None) or x.entry)
def test_precondition_text_matches_its_predicate(impl, launch):
    holds, cc = read_text(launch.precondition)
    assert cc == (launch.all_needs.min_cc if launch.all_needs is not Needs.ANY else None), launch.precondition
    seen = set()
    # An outputs floor (the tensor-core dispatchers'), or A's or B's (narrow outputs, thin's wider
    # kernels), or a bound on the rows
    # past the grid's (a b-padded winner's 4-byte twin), is only crossed by sizes past the grid's.
    past = (launch.when.outputs or launch.when.a_elements or launch.when.b_elements
            or launch.when.rows >= max(SIZES))
    sizes = SIZES + ((1024, 2048) if past else ())
    if max(launch.when.a_elements, launch.when.b_elements) > 2048 * 2048:  # default's thin rows: 2²⁴ of B
        sizes += (4096,)
    for dims in itertools.product(sizes, repeat=3):
        for offsets in OFFSETS:
            tensors = _operands(*dims, offsets)
            decided = launch.when(*tensors, *dims)
            assert decided == holds(tensors, dims), (impl.name, launch.precondition, dims, offsets)
            seen.add(decided)
    assert seen == {True, False}, "the grid never tells the two apart"


def test_every_precondition_is_declared_as_requires_a_shape_class_or_the_split_policy():
    for impl in registry.IMPLEMENTATIONS:
        for launch in impl.launches:
            if launch.when is not None:
                parts = _parts(launch.when)
                assert all(isinstance(p, When | InClass | SplitPays | OneWave) for p in parts), launch
                assert sum(isinstance(p, When) for p in parts) <= 1, launch


def test_when_renders_and_decides():
    assert str(VEC4) == "N % 4 == 0, K % 4 == 0, 16-byte aligned pointers"
    assert str(whole_tiles(64, 16, 64)) == "M % 64 == 0, N % 16 == 0, K % 64 == 0, 16-byte aligned pointers"
    assert str(whole_tiles(8, 2, 6)) == "M % 8 == 0, N % 4 == 0, K % 12 == 0, 16-byte aligned pointers"
    assert str(When(n=4, align=16, operands="A")) == "N % 4 == 0, A 16-byte aligned"
    assert str(When()) == "always"
    assert str(When(outputs=1 << 19)) == "M·K ≥ 524288"
    assert When(outputs=1 << 19).cpp() == "(long long)M * K >= 524288LL"  # 8192² overflows an int
    narrow = When(cols=32, a_elements=1 << 19)
    assert str(narrow) == "K ≤ 32, M·N ≥ 524288"
    assert narrow.cpp() == "K <= 32 && (long long)M * N >= 524288LL"
    big, thin, c = torch.empty(1024, 512), torch.empty(512, 32), torch.empty(1024, 32)
    assert narrow(big, thin, c, 1024, 512, 32) and not narrow(big, torch.empty(512, 33), c, 1024, 512, 33)
    assert not narrow(big[:1023], thin, c[:1023], 1023, 512, 32)  # M·N one row short
    wide = When(rows=8, b_elements=1 << 20)
    assert str(wide) == "M ≤ 8, N·K ≥ 1048576" and wide.cpp() == "M <= 8 && (long long)N * K >= 1048576LL"
    assert wide(big[:8], torch.empty(1024, 1024), c[:8], 8, 1024, 1024)
    assert not wide(big[:8], torch.empty(1024, 1023), c[:8], 8, 1024, 1023)  # N·K one column short
    few = When(rows=8)
    assert str(few) == "M ≤ 8" and few.cpp() == "M <= 8"
    short = When(reduction=32)
    assert str(short) == "N ≤ 32" and short.cpp() == "N <= 32"
    assert short(big, thin[:32], c, 1024, 32, 32) and not short(big, thin[:33], c, 1024, 33, 32)
    assert few(big[:8], thin, c[:8], 8, 512, 32) and not few(big[:9], thin, c[:9], 9, 512, 32)
    a, b, c = _operands(16, 16, 16, (0, 1, 0))
    assert When(n=4, align=16, operands="A")(a, b, c, 16, 16, 16)
    assert not VEC4(a, b, c, 16, 16, 16)
    assert not When(m=32)(a, b, c, 16, 16, 16)
