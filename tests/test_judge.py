"""The judge passes right solutions and fails wrong ones, for the reason that matters."""

from __future__ import annotations

import pytest
import torch

from gemmlab import registry
from gemmlab.judge.cases import LEETGPU_SHAPES, NOTES_SHAPES, Case, make_inputs, standard_cases
from gemmlab.judge.runner import judge
from gemmlab.reference import Precision
from tests.fixtures import wrong

CPU = torch.device("cpu")


def test_standard_cases_cover_the_spec():
    cases = standard_cases(seed=5)
    shapes = {c.shape for c in cases}
    assert set(NOTES_SHAPES) <= shapes and set(LEETGPU_SHAPES) <= shapes
    assert (8192, 6144, 4096) in shapes and any(8192 in c.shape for c in cases if c.group == "edge")
    assert [c.group for c in cases][:2] == ["example", "example"]
    assert sum(c.group == "random" for c in cases) == 3


def test_inputs_are_fresh_zero_mean_and_replayable():
    case = Case("x", "random", (64, 64, 64))
    a1, b1 = make_inputs(case, 11, CPU)
    a2, _ = make_inputs(case, 11, CPU)
    a3, _ = make_inputs(case, 12, CPU)
    assert torch.equal(a1, a2) and not torch.equal(a1, a3) and not torch.equal(a1, b1)
    assert a1.min() >= -1 and a1.max() < 1 and abs(a1.mean()) < 0.1 and (a1 != 0).all()


def test_torch_passes_every_cpu_case():
    j = judge("torch", registry.get("torch").solve, Precision.FP32, standard_cases(1), CPU, 1)
    assert j.passed, [r for r in j.results if not r.passed and r.status != "skip"]
    assert [r.status for r in j.results if r.group == "perf"] == ["skip"]


@pytest.mark.parametrize("bad", [wrong.skips_last_row, wrong.swaps_two_columns, wrong.row4_notes_bug])
def test_wrong_solutions_fail(bad):
    j = judge(bad.__name__, bad, Precision.FP32, standard_cases(3, perf=False), CPU, 3)
    assert not j.passed and j.failed


def test_reasons_name_the_fault():
    cases = [Case("t", "notes", (17, 19, 23))]
    j = judge("s", wrong.skips_last_row, Precision.FP32, cases, CPU, 0)
    assert "never written" in j.results[0].reason
    j = judge("s", wrong.swaps_two_columns, Precision.FP32, cases, CPU, 0)
    assert "normalised max error" in j.results[0].reason


def test_row4_bug_is_invisible_below_17_columns_and_caught_above():
    # The mistake only shows where a 64-wide tile has more than its first 16 columns.
    small = [Case("t", "notes", (8, 8, 16))]
    assert judge("b", wrong.row4_notes_bug, Precision.FP32, small, CPU, 0).passed
    wide = [Case("t", "notes", (8, 8, 17))]
    assert not judge("b", wrong.row4_notes_bug, Precision.FP32, wide, CPU, 0).passed


def test_an_exception_is_a_failed_case_not_a_crash():
    def boom(a, b, c, m, n, k):
        raise RuntimeError("kernel exploded")

    j = judge("boom", boom, Precision.FP32, [Case("t", "notes", (2, 2, 2))], CPU, 0)
    assert j.results[0].status == "error" and "kernel exploded" in j.results[0].reason
