"""`gemmlab tune --install` with no names: everything `default` needs on the GPU at hand, in four stages.

1. **search** the rungs `default`'s classes choose among (`SEARCHED`), one representative shape a
   class (`search.tune`);
2. **sweep**, with that record in force (`GEMMLAB_TUNE_RECORD`, in a child process so that the
   registry builds `default` from it): `DRAWN` shapes drawn at random, then the preludes' designed
   shapes (`preludes.FLOOR_SHAPES`), each timing `default`, the rungs calibration weighs
   (`CALIBRATED`) and cuBLAS;
3. **calibrate** the search record on those sweeps (`calibrate.calibrate`: a rung that beat
   `default` over a class's drawn shapes wins it; a prelude earns its floor);
4. **compare** before installing, where `default` already runs a record here (the GPU's own or a
   borrowed sibling's): `default` under each, on one fresh draw of `DRAWN` shapes; the new record
   is installed only where its geometric mean is at least the incumbent's. On the H100 a record
   tuned there ran behind the H200's it borrowed (experiments/README.md, h100-record).

A cut run resumes from its search record (`--searched FILE`): the search is the longest stage.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ..policy.default import RECORD_ENV
from ..policy.preludes import FLOOR_SHAPES

#: What the search tunes: the rungs whose launches `default`'s classes are chosen among.
SEARCHED = ("bigtile", "splitk", "warptile", "float4", "small")
#: What calibration weighs against `default` on the sweeps: rungs with a space, then the preludes.
CALIBRATED = ("small", "splitk", "tma", "tma-warp", "short", "gemv")
#: Shapes drawn for calibration (bench/randomshapes.py's kinds).
DRAWN = 64


class StageFailed(RuntimeError):
    """A stage's child process failed; the message is one line."""


def sweep_args(seed: int) -> list[list[str]]:
    """The `gemmlab sweep` argument lists stage 2 runs: the random draw, then each prelude's shapes."""
    names = ["default", *CALIBRATED, "torch"]
    runs = [[*names, "--random", str(DRAWN), "--seed", str(seed), "--no-energy"]]
    for rung, shapes in FLOOR_SHAPES.items():
        runs.append([rung, "default", "torch", *[a for s in shapes for a in ("--shape", s)], "--no-energy"])
    return runs


def compare_args(seed: int) -> list[str]:
    """Stage 4's draw: `default` and cuBLAS alone, on shapes neither record was calibrated on."""
    return ["default", "torch", "--random", str(DRAWN), "--seed", str(seed), "--no-energy"]


def geomean_of(sweep_record: dict) -> float | None:
    """`default`'s geometric-mean ratio to cuBLAS in a random sweep's summary (None: not timed or wrong)."""
    return ((sweep_record.get("summary") or {}).get("default") or {}).get("geomean")


def sweep(record_path: Path, args: list[str], out: Path) -> dict:
    """One `gemmlab sweep ARGS` in a child process dispatching `default` by `record_path`; its record
    (a copy kept under `out`)."""
    with tempfile.TemporaryDirectory(prefix="gemmlab-tune-") as tmp:
        env = dict(os.environ, **{RECORD_ENV: str(record_path)})
        done = subprocess.run([sys.executable, "-m", "gemmlab", "sweep", *args, "--out", tmp],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        found = sorted(Path(tmp).glob("*/*.json"))
        if not found:  # exit 1 (a wrong result) still writes its record; anything else is a failure
            tail = " | ".join(done.stdout.strip().splitlines()[-3:])
            raise StageFailed(f"gemmlab sweep {' '.join(args[:3])}… exited {done.returncode}: {tail}")
        record = json.loads(found[0].read_text())
        kept = out / found[0].parent.name / found[0].name
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text(found[0].read_text())
        return record
