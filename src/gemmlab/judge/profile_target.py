"""What Nsight Compute runs for `gemmlab judge --profile`: one side's call at the performance shape.

``python -m gemmlab.judge.profile_target --which solution|cublas --file F --framework X [--library L]``

The inputs are LeetGPU's timing inputs (U[-10, 10)) at 8192×6144×4096. One call
first, outside the profiled range (Triton's JIT, cuBLAS's handle, a solution's
own set-up), then the profiled call between cudaProfilerStart and Stop: ncu runs
with ``--profile-from-start off``, so it sees that call's kernels and no others.
"""

from __future__ import annotations

import argparse

from .. import problem, runtime

runtime.configure()

import torch  # noqa: E402

from ..reference import strict_fp32  # noqa: E402
from .cases import WIDE_HIGH, WIDE_LOW, uniform  # noqa: E402
from .userfile import load, load_library  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(prog="gemmlab.judge.profile_target")
    ap.add_argument("--which", choices=("solution", "cublas"), required=True)
    ap.add_argument("--file")
    ap.add_argument("--framework")
    ap.add_argument("--library")
    args = ap.parse_args()
    m, n, k = problem.PERF_SHAPE
    device = torch.device("cuda")
    a = uniform((m, n), 1, device, WIDE_LOW, WIDE_HIGH)
    b = uniform((n, k), 2, device, WIDE_LOW, WIDE_HIGH)
    c = torch.empty((m, k), dtype=torch.float32, device=device)
    if args.which == "solution":
        solve = load_library(args.library) if args.library else load(args.file, args.framework)[1]

        def call():
            solve(a, b, c, m, n, k)
    else:
        def call():
            with strict_fp32():
                torch.matmul(a, b, out=c)
    call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


if __name__ == "__main__":
    main()
