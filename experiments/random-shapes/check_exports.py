"""Judge one exported rung, built with each grader's flags, on every standard case of `gemmlab check`.

    python experiments/random-shapes/check_exports.py default > check-exports.json

The cases are the check's (the examples, the notes' shapes, LeetGPU's public odd shapes, edges,
random ones, U[-10, 10) ones and the 8192×6144×4096 product with inputs in [-1, 1)), judged by
the judge's own `run_case`: C poisoned, the float64 reference, and LeetGPU's own check against
torch.matmul (1e-4 + 1e-4·|T|, `leetgpu_violations`). One JSON document on stdout.
"""

from __future__ import annotations

import ctypes
import json
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import torch

from gemmlab import registry
from gemmlab.bench import device_info
from gemmlab.export import export_text
from gemmlab.export.builds import BUILDS, Build, build_library
from gemmlab.judge.cases import standard_cases
from gemmlab.judge.runner import judge

HERE = [b for b in BUILDS if b.arch != "sm_100a"] + [Build("-arch=native", "native", "the GPU at hand")]


def main(name: str, seed: int = 2026) -> None:
    impl = registry.get(name)
    folder = Path(tempfile.mkdtemp(prefix="check-exports-"))
    source = folder / f"{name}.cu"
    source.write_text(export_text(impl))

    def build(b: Build) -> Path:
        lib = folder / f"{name}-{b.flags.removeprefix('-arch=') or 'default'}.so"
        proc = build_library(source, b.flags, lib)
        if proc.returncode:
            raise SystemExit(f"{b.label}: {proc.stderr}")
        return lib

    with ThreadPoolExecutor(max_workers=len(HERE)) as pool:
        libs = list(pool.map(build, HERE))
    builds = []
    for b, lib in zip(HERE, libs, strict=True):
        raw = ctypes.CDLL(str(lib)).solve
        raw.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 3

        def solve(a, bb, c, m, n, k, raw=raw):
            raw(a.data_ptr(), bb.data_ptr(), c.data_ptr(), m, n, k)

        j = judge(f"{name} ({b.label})", solve, impl.precision, standard_cases(seed), torch.device("cuda"), seed)
        cases = [r.to_dict() for r in j.results]
        outside = sum((r.figures.leetgpu_violations if r.figures else 0) for r in j.results)
        builds.append({"build": b.label, "passed": j.passed, "cases": len(cases),
                       "failed": [r.case for r in j.failed], "leetgpu_violations": outside, "results": cases})
        print(f"{b.label:14s} {'pass' if j.passed else 'FAIL'}: {len(cases)} cases, "
              f"{outside} elements outside LeetGPU's check", file=sys.stderr)
    json.dump({"date": datetime.now(UTC).isoformat(timespec="seconds"), "rung": name, "seed": seed,
               "device": device_info.gpu(), "versions": device_info.versions(), "builds": builds},
              sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "default")
