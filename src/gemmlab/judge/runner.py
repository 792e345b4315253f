"""Run a solve over cases and judge each result against the float64 reference.

For every case: fresh inputs, C poisoned, one call, then the error figures of
`gemmlab.reference` and the verdict of the implementation's precision class.
An exception is a failed case with its message, never a crash of the judge.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import torch

from ..reference import (
    ErrorFigures,
    Precision,
    error_figures,
    poison_,
    references,
    verdict,
)
from .cases import Case, make_inputs

Solve = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, int, int, int], None]


@dataclass
class CaseResult:
    case: str
    group: str
    shape: tuple[int, int, int]
    seed: int
    status: str  # pass | fail | error | skip
    reason: str = ""
    figures: ErrorFigures | None = None
    seconds: float | None = None

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def to_dict(self) -> dict:
        return {
            "case": self.case, "group": self.group, "shape": list(self.shape), "seed": self.seed,
            "status": self.status, "reason": self.reason, "seconds": self.seconds,
            "figures": self.figures.to_dict() if self.figures else None,
        }


@dataclass
class Judgement:
    name: str
    precision: Precision
    device: str
    results: list[CaseResult] = field(default_factory=list)

    @property
    def failed(self) -> list[CaseResult]:
        return [r for r in self.results if r.status in ("fail", "error")]

    @property
    def passed(self) -> bool:
        return not self.failed and any(r.passed for r in self.results)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _bits_equal(x: torch.Tensor, y: torch.Tensor) -> bool:
    return torch.equal(x.view(torch.int32), y.view(torch.int32))


def assess(
    base: CaseResult,
    case: Case,
    precision: Precision,
    a: torch.Tensor,
    b: torch.Tensor,
    c: torch.Tensor,
    a_after: torch.Tensor | None = None,
    b_after: torch.Tensor | None = None,
    c_later: torch.Tensor | None = None,
) -> CaseResult:
    """The verdict of one call. Shared by `gemmlab check` and by the judge's trusted side.

    ``a`` and ``b`` are the pristine inputs (the reference is computed from
    them, never from what the call left behind); ``c`` is what C held when
    solve returned, on the caller's stream. ``a_after`` / ``b_after`` are the
    input buffers after the call: any changed bit is its own verdict, whatever
    C holds. ``c_later`` is C after a full device synchronisation: if it
    differs from ``c``, work was still landing after solve returned.
    """
    fig = error_figures(c, *references(a, b))
    ok, reason = verdict(fig, precision)
    if ok and case.example is not None:
        expected = torch.tensor(case.example.c, dtype=torch.float64, device=c.device)
        if not torch.equal(c.double(), expected):
            ok, reason = False, "differs from the published answer"
    if c_later is not None and not _bits_equal(c, c_later):
        late = "C changed after solve returned (work on a stream not ordered with the caller's)"
        ok, reason = False, late if ok else f"{late}; when it returned: {reason}"
    for name, before, after in (("B", b, b_after), ("A", a, a_after)):
        if after is not None and not _bits_equal(before, after):
            ok, reason = False, f"modified its input {name}"
    base.status, base.reason, base.figures = ("pass" if ok else "fail"), reason, fig
    return base


def run_case(solve: Solve, precision: Precision, case: Case, seed: int, device: torch.device) -> CaseResult:
    """One call in this process (trusted implementations: `gemmlab check`)."""
    m, n, k = case.shape
    base = CaseResult(case.name, case.group, case.shape, seed, "error")
    try:
        a0, b0 = make_inputs(case, seed, device)
        a, b = a0.clone(), b0.clone()
        c = poison_(torch.empty((m, k), dtype=torch.float32, device=device))
        sync(device)
        t0 = time.perf_counter()
        solve(a, b, c, m, n, k)
        # Read C back on the caller's stream before any device-wide wait: work a
        # solution left on another, unordered stream is not in this snapshot.
        snapshot = c.clone()
        sync(device)
        base.seconds = time.perf_counter() - t0
    except Exception as exc:  # the judge reports, it does not crash
        base.reason = f"{type(exc).__name__}: {exc}"
        return base
    return assess(base, case, precision, a0, b0, snapshot, a_after=a, b_after=b, c_later=c)


def judge(
    name: str,
    solve: Solve,
    precision: Precision,
    cases: Iterable[Case],
    device: torch.device,
    seed: int,
    on_result: Callable[[CaseResult], None] | None = None,
) -> Judgement:
    """Every case in order; case i draws its inputs from seed + 2·i."""
    out = Judgement(name, precision, str(device))
    for i, case in enumerate(cases):
        if case.gpu_only and device.type != "cuda":
            r = CaseResult(case.name, case.group, case.shape, seed + 2 * i, "skip", "needs a GPU")
        else:
            r = run_case(solve, precision, case, seed + 2 * i, device)
        out.results.append(r)
        if on_result:
            on_result(r)
    return out
