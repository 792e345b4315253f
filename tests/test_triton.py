"""Triton implementations are right on the whole shape list, through the interpreter on CPU."""

from __future__ import annotations

import pytest

from gemmlab import registry
from gemmlab.judge.cases import standard_cases
from gemmlab.judge.runner import judge

TRITON = [i for i in registry.IMPLEMENTATIONS if i.family == "triton"]


@pytest.mark.parametrize("impl", TRITON, ids=lambda i: i.name)
def test_triton_correct_on_shape_list(impl, device):
    j = judge(impl.name, impl.solve, impl.precision, standard_cases(7, perf=False), device, 7)
    assert j.passed, [(r.case, r.reason) for r in j.failed]
    assert len(j.results) >= 24
