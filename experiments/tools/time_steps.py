"""Time each kernel of one call of a CUDA rung separately (pre-passes and main kernel).

Usage: python experiments/tools/time_steps.py NAME [M N K]   (default: the performance shape)
A developer's tool: CUDA events around every step, median of 20 calls; writes nothing.
"""

from __future__ import annotations

import statistics
import sys

import torch

from gemmlab import problem, registry, runtime
from gemmlab.cuda import driver as cl
from gemmlab.cuda.dispatch import Call
from gemmlab.judge.cases import uniform


def main() -> None:
    runtime.configure()  # before CUDA initialises: keep ptxas reports
    name = sys.argv[1]
    m, n, k = map(int, sys.argv[2:5]) if len(sys.argv) > 4 else problem.PERF_SHAPE
    impl = registry.get(name)
    dev = torch.device("cuda")
    a, b = uniform((m, n), 1, dev, -10, 10), uniform((n, k), 2, dev, -10, 10)
    c = torch.empty(m, k, device=dev)
    solver = impl._solve
    launch = solver.select(a, b, c, m, n, k)
    workspace = solver.workspace(launch.workspace_bytes(m, n, k), dev)
    runs = launch.kernel_calls(Call(a, b, c, m, n, k), workspace)
    times: dict[str, list[float]] = {s.kernel.entry: [] for s in runs}
    for it in range(25):
        for run in runs:
            kernel = solver.load(run.kernel)
            grid = solver._resident_grid(kernel, run) if launch.persistent and run.kernel == launch.kernel else run.grid
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            cl.launch(kernel, grid, run.kernel.block, run.kernel.smem, *run.args, cluster=run.kernel.cluster)
            end.record()
            end.synchronize()
            if it >= 5:
                times[run.kernel.entry].append(start.elapsed_time(end))
    print(f"{name} {m}x{n}x{k}: {impl.launch_label(launch)}")
    for entry, ts in times.items():
        print(f"  {entry:20s} {statistics.median(ts):.4f} ms")


if __name__ == "__main__":
    main()
