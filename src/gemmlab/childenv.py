"""The environment of a Python child process that must import this copy of gemmlab (NVRTC's
compiling child, the judge's solution and baseline children): this process's environment, with
the folder gemmlab was found in first on PYTHONPATH."""

from __future__ import annotations

import os
from pathlib import Path

#: The folder holding the gemmlab package.
PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)


def python_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    out = {**os.environ, **(extra or {})}
    out["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_ROOT, out.get("PYTHONPATH", "")) if p)
    return out
