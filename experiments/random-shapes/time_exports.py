"""Time one exported rung built with each grader's flags, beside torch.matmul, on this GPU.

    python experiments/random-shapes/time_exports.py default > exports.json

Each build (export/builds.py's, plus -arch=native) is compiled with nvcc, loaded through ctypes and
called as LeetGPU's harness calls it; at each shape the build's calls and cuBLAS FP32's are timed
interleaved (CUDA events, median of ITERS after 3 warm-ups), and the build's last C is checked
with LeetGPU's test against torch.matmul (1e-4 + 1e-4·|T|, inputs U[-1, 1)). The SM clock and
power are sampled meanwhile. One JSON document on stdout.
"""

from __future__ import annotations

import ctypes
import json
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import torch

from gemmlab import registry
from gemmlab.bench import device_info
from gemmlab.export import export_text
from gemmlab.export.builds import BUILDS, Build, build_library
from gemmlab.judge.cases import uniform
from gemmlab.reference import strict_fp32

ITERS = 20
SHAPES = [(8192, 6144, 4096), (8191, 6143, 4095), (1024, 1024, 1024), (300, 257, 301)]
HERE = [b for b in BUILDS if b.arch != "sm_100a"] + [Build("-arch=native", "native", "the GPU at hand")]


def main(name: str) -> None:
    folder = Path(tempfile.mkdtemp(prefix="time-exports-"))
    source = folder / f"{name}.cu"
    source.write_text(export_text(registry.get(name)))

    def build(b: Build) -> Path:
        lib = folder / f"{name}-{b.flags.removeprefix('-arch=') or 'default'}.so"
        proc = build_library(source, b.flags, lib)
        if proc.returncode:
            raise SystemExit(f"{b.label}: {proc.stderr}")
        return lib

    with ThreadPoolExecutor(max_workers=len(HERE)) as pool:
        libs = list(pool.map(build, HERE))
    rows = []
    with strict_fp32(), device_info.ClockSampler(torch.cuda.current_device()) as sampler:
        for shape in SHAPES:
            m, n, k = shape
            a, b = uniform((m, n), 1, torch.device("cuda")), uniform((n, k), 2, torch.device("cuda"))
            ref = torch.matmul(a, b)
            for build_, lib in zip(HERE, libs, strict=True):
                solve = ctypes.CDLL(str(lib)).solve
                solve.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 3
                c = torch.full((m, k), float("nan"), device="cuda")
                out = torch.empty_like(c)
                calls = {"export": partial(solve, a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k),
                         "cublas": partial(torch.matmul, a, b, out=out)}
                for call in calls.values():
                    for _ in range(3):
                        call()
                times: dict[str, list[float]] = {key: [] for key in calls}
                for _ in range(ITERS):
                    for key, call in calls.items():
                        torch.cuda._sleep(2_000_000)  # queue the call behind a spin: GPU time alone
                        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        s.record()
                        call()
                        e.record()
                        times[key].append((s, e))
                torch.cuda.synchronize()
                ms = {key: statistics.median(s.elapsed_time(e) for s, e in v) for key, v in times.items()}
                outside = int(((c - ref).abs() > 1e-4 + 1e-4 * ref.abs()).sum()) + int(torch.isnan(c).sum())
                rows.append({"build": build_.label, "shape": list(shape), "export_ms": ms["export"],
                             "cublas_ms": ms["cublas"], "ratio_vs_cublas": ms["cublas"] / ms["export"],
                             "outside_leetgpu_check": outside})
                print(f"{build_.label:16s} {m}x{n}x{k}: {ms['export']:.4f} ms, cuBLAS {ms['cublas']:.4f} ms, "
                      f"{ms['cublas'] / ms['export']:.3f}x, {outside} outside", file=sys.stderr)
    json.dump({"date": datetime.now(UTC).isoformat(timespec="seconds"), "rung": name,
               "device": device_info.gpu(), "versions": device_info.versions(), "iters": ITERS,
               "clocks_during_timing": sampler.summary(), "rows": rows}, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "default")
