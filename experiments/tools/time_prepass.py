"""Time the wgmma rungs' Bᵀ pre-pass (transpose_tf32) under each tile order, beside a plain copy.

Usage: python experiments/tools/time_prepass.py [N K] [GROUP...]   (default: the performance shape's B; 0 8 16 1)
A developer's tool: CUDA events, median of 30 after 5 warm-ups; prints GB/s; writes nothing.
The copy (torch's clone of B) moves the same bytes with no transpose: the speed to aim at.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys

import torch

from gemmlab import problem, runtime
from gemmlab.cuda import driver as cl
from gemmlab.cuda import hopper
from gemmlab.judge.cases import uniform


def median_ms(fn, iters: int = 30) -> float:
    for _ in range(5):
        fn()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main() -> None:
    runtime.configure()
    args = [int(x) for x in sys.argv[1:]]
    n, k = args[:2] if len(args) >= 2 else problem.PERF_SHAPE[1:]
    groups = args[2:] or [0, 8, 16, 1]
    b = uniform((n, k), 2, torch.device("cuda"), -10, 10)
    ld = hopper.pitch(n)
    bt = torch.empty(k * ld, device="cuda")
    moved = 2 * n * k * 4
    ms = median_ms(lambda: b.clone())
    print(f"copy of B ({n}x{k}): {ms:.4f} ms, {moved / ms / 1e6:.0f} GB/s")
    tt = hopper.TRANSPOSE_TILE
    grid = (-(-k // tt), -(-ld // tt), 1)
    for g in groups:
        kern = dataclasses.replace(hopper.TRANSPOSE, defines={"TRANSPOSE_GROUP": g})
        fn = cl.get_kernel(kern.compile(), kern.entry, 0)
        ms = median_ms(lambda fn=fn: cl.launch(fn, grid, hopper.TRANSPOSE.block, 0, b.data_ptr(), bt.data_ptr(),
                                               cl.i32(n), cl.i32(k), cl.i32(ld)))
        ref = b.T.contiguous()
        got = bt.view(k, ld)[:, :n]
        ok = torch.equal(got.view(torch.int32) & ~0x1FFF, got.view(torch.int32)) and \
            (got - ref).abs().max().item() <= ref.abs().max().item() * 2**-10
        print(f"transpose GROUP={g}: {ms:.4f} ms, {moved / ms / 1e6:.0f} GB/s, {'ok' if ok else 'WRONG'}")


if __name__ == "__main__":
    main()
