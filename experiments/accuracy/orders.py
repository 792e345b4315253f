"""How the order of a strict-FP32 reduction moves LeetGPU's count (CPU, numpy; about a minute).

E outputs of one reduction of length N, inputs uniform in [-10, 10) (the random records'), each
product exact in float64 and every add rounded to float32 (an FMA's rounding), summed in the
orders a kernel can take: one chain (bigtile: one FFMA chain an output), P contiguous parts added
in pairs (split-K), and sums of S products before each add to the accumulator (per-step sums).
Printed: elements outside LeetGPU's check |C − ref| ≤ 1e-4 + 1e-4·|ref| against the float64 sum.

Usage: python experiments/accuracy/orders.py [N] [E]   (defaults 4958 30000, one record's N)
"""
import json
import sys

import numpy as np

N = int(sys.argv[1]) if len(sys.argv) > 1 else 4958
E = int(sys.argv[2]) if len(sys.argv) > 2 else 30000
rng = np.random.default_rng(1)
a = rng.uniform(-10, 10, (N, E)).astype(np.float32)
b = rng.uniform(-10, 10, (N, E)).astype(np.float32)
products = a.astype(np.float64) * b.astype(np.float64)
ref = products.sum(0)


def f32(x):
    return x.astype(np.float32)


def chain(lo: int, hi: int):
    acc = np.zeros(E, np.float32)
    for i in range(lo, hi):
        acc = f32(acc.astype(np.float64) + products[i])
    return acc


def outside(c) -> int:
    return int((np.abs(c.astype(np.float64) - ref) > 1e-4 + 1e-4 * np.abs(ref)).sum())


counts = {"one chain": outside(chain(0, N))}
for parts in (2, 4, 8):
    sums = [chain(N * i // parts, N * (i + 1) // parts) for i in range(parts)]
    while len(sums) > 1:
        sums = [f32(sums[i].astype(np.float64) + sums[i + 1]) if i + 1 < len(sums) else sums[i]
                for i in range(0, len(sums), 2)]
    counts[f"{parts} parts"] = outside(sums[0])
for size in (2, 4, 16):
    acc = np.zeros(E, np.float32)
    for s in range(0, N, size):
        t = f32(products[s])
        for i in range(s + 1, min(s + size, N)):
            t = f32(t.astype(np.float64) + products[i])
        acc = f32(acc.astype(np.float64) + t)
    counts[f"sums of {size}"] = outside(acc)
print(json.dumps({"N": N, "E": E, "outside": counts}))
