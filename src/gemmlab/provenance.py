"""Which tree a record or an exported file came from: the one place that asks git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


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
