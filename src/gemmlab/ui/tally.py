"""The closing line of check, bench, sweep and study, and the exit code it implies.

`4 passed, 0 failed, 14 not run (CUDA kernels need a CUDA GPU)`: any failure
exits 1; nothing run at all exits 3; otherwise 0.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..exits import Exit


@dataclass
class Tally:
    passed: int = 0
    failed: int = 0
    not_run: Counter = field(default_factory=Counter)  # reason → how many

    def add(self, passed: bool) -> None:
        if passed:
            self.passed += 1
        else:
            self.failed += 1

    def skip(self, reason: str) -> None:
        self.not_run[reason] += 1

    def line(self) -> str:
        skipped = sum(self.not_run.values())
        text = f"{self.passed} passed, {self.failed} failed, {skipped} not run"
        if len(self.not_run) == 1:
            text += f" ({next(iter(self.not_run))})"
        elif self.not_run:
            text += " (" + "; ".join(f"{n}: {why}" for why, n in self.not_run.most_common()) + ")"
        return text

    def exit_code(self) -> Exit:
        if self.failed:
            return Exit.FAILED
        if not self.passed:
            return Exit.CANNOT_RUN
        return Exit.PASSED

    def to_dict(self) -> dict:
        return {"passed": self.passed, "failed": self.failed,
                "not_run": sum(self.not_run.values()), "not_run_reasons": dict(self.not_run),
                "line": self.line()}
