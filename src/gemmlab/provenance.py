"""This copy of gemmlab: the folder it was found in, the tree it came from (the one place that asks
git), and the environment a Python child needs to import this same copy (NVRTC's compiling child,
the judge's solution and baseline children)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .committed import PACKAGE_DIR

#: The folder holding the gemmlab package.
PACKAGE_ROOT = str(PACKAGE_DIR.parent)


def gemmlab_commit() -> str:
    """$GEMMLAB_COMMIT where set (a copy of the tree on a GPU machine, whose own git state may be
    stale), else the checkout's commit (marked -dirty with local edits), else ""."""
    if os.environ.get("GEMMLAB_COMMIT"):
        return os.environ["GEMMLAB_COMMIT"]
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=12"],
                             cwd=Path(__file__).parent, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def python_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment (and `extra`), with PACKAGE_ROOT first on PYTHONPATH."""
    out = {**os.environ, **(extra or {})}
    out["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_ROOT, out.get("PYTHONPATH", "")) if p)
    return out
