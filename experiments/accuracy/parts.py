"""What forcing split-K parts costs `default` at large shapes, and what it buys in accuracy (GPU).

`orders.py` (CPU) says one FFMA chain an output leaves about 1.35× cuBLAS FP32's count outside
LeetGPU's tolerance against the float64 product, 4 contiguous parts about cuBLAS's, 8 parts fewer.
Here `default` runs with `cuda/handoff.parts` raised to at least P in this process (so its split
twin runs wherever one stands before the winner; its classes' other split launches split too),
timed beside cuBLAS FP32 as `gemmlab sweep` times a shape (bench.run.measure: interleaved, GPU
time, inputs in [-10, 10), every result checked against the float64 product).

One JSON line per (P, shape) goes to OUT.jsonl: time, ratio, clock, and both counts (against the
float64 product, `exact_violations`; against torch.matmul, `leetgpu_violations`).

Usage (repository root, on a GPU): python experiments/accuracy/parts.py OUT.jsonl P [MxNxK ...]
(P = 1 is `default` as it is.)
"""
import json
import sys

from gemmlab import registry, runtime
from gemmlab.bench.run import measure
from gemmlab.cuda import handoff

SHAPES = ["8192x6144x4096", "5075x4958x7592", "3761x7609x7146", "3228x4929x2937", "2048x2048x2048"]

runtime.configure()
out_path, forced = sys.argv[1], int(sys.argv[2])
shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[3:] or SHAPES)]
policy = handoff.parts


def at_least(tiles: int, k_tiles: int, slots: int, depth: int, least: int = 1) -> int:
    # Never past what the policy itself allows: a part keeps SPLIT_MIN_N of the reduction. `least`:
    # the policy's own floor for accuracy (handoff.fewest, which the hosts pass since 17c08f6).
    limit = max(1, min(handoff.MAX_PARTS, k_tiles // handoff.min_k_tiles(depth), handoff.COUNTERS // max(tiles, 1)))
    return max(policy(tiles, k_tiles, slots, depth, least), min(forced, limit))


if forced > 1:
    handoff.parts = at_least
with open(out_path, "a") as out:
    for shape in shapes:
        rec = measure([registry.get("default")], shape, 3, 10, False, 7, energy=())
        rows = {r["name"]: r for r in rec["results"]}
        ours, cublas = rows["default"], rows["torch"]
        line = {"P": forced, "shape": shape, "clocks": rec["clocks_during_timing"],
                "default_ms": ours["median_ms"], "cublas_ms": cublas["median_ms"],
                "ratio": cublas["median_ms"] / ours["median_ms"], "passed": ours["passed"],
                "kernel": ours.get("kernel"),
                "exact_default": ours["figures"]["exact_violations"],
                "exact_cublas": cublas["figures"]["exact_violations"],
                "vs_torch_default": ours["figures"]["leetgpu_violations"], "numel": ours["figures"]["numel"]}
        out.write(json.dumps(line) + "\n")
        print(f"P={forced} {'x'.join(map(str, shape)):16s} {line['ratio']:.3f}x  {ours['median_ms']:.3f} ms"
              f"  exact {line['exact_default']} vs cuBLAS {line['exact_cublas']}  vs torch {line['vs_torch_default']}"
              f"  {str(line['kernel'])[:60]}", flush=True)
