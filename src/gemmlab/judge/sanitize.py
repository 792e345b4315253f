"""compute-sanitizer over gemmlab's own kernels or a user's file, with its findings parsed.

torch's caching allocator rounds allocations up and hides small overruns, so
every sanitized run sets PYTORCH_NO_CUDA_MEMORY_CACHING=1. Host API errors
(probing calls inside the libraries) are not kernel faults and are not reported.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

TOOLS = ("memcheck", "racecheck", "synccheck")
ENV = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
_SUMMARY = re.compile(r"(?:ERROR SUMMARY: (\d+) error|RACECHECK SUMMARY: (\d+) hazard)")
_KERNEL = re.compile(r"(?:at|in) (?:0x[0-9a-f]+ in )?([A-Za-z_][\w:<>]*)(?:\(|\+0x)")


@dataclass
class Finding:
    tool: str
    errors: int | None  # None: no summary line (the run did not finish)
    kernels: list[str]
    excerpt: str


def executable() -> str:
    default = Path("/usr/local/cuda/bin/compute-sanitizer")
    found = shutil.which("compute-sanitizer") or (str(default) if default.exists() else None)
    if found:
        return found
    raise FileNotFoundError("compute-sanitizer not found (it ships with the CUDA toolkit)")


def wrapper(tool: str) -> list[str]:
    return [executable(), "--tool", tool, "--report-api-errors", "no", "--print-limit", "50"]


def parse(tool: str, text: str) -> Finding:
    counts = [int(a or b) for a, b in _SUMMARY.findall(text)]
    lines = [ln for ln in text.splitlines() if ln.startswith("=========")]
    kernels = sorted({m.group(1) for ln in lines for m in _KERNEL.finditer(ln)
                      if "Invalid" in ln or "hazard" in ln.lower() or "Barrier" in ln or "at " in ln})
    return Finding(tool, sum(counts) if counts else None, kernels, "\n".join(lines[:30]))


def sanitize_check(names: list[str], tool: str, seed: int = 11, timeout: float = 600) -> Finding:
    """Run `gemmlab check NAMES` on the notes' shapes under one sanitizer tool."""
    cmd = wrapper(tool) + [sys.executable, "-m", "gemmlab", "check", *names, "--group", "notes",
                           "--no-perf", "--seed", str(seed)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **ENV}, check=False)
    return parse(tool, proc.stdout + proc.stderr)
