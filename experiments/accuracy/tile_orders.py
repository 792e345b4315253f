"""Summation orders of a strict-FP32 tile, emulated on the CPU: how many elements each leaves
outside LeetGPU's tolerance against the float64 product (the figure issue 27 compares with cuBLAS).

    python experiments/accuracy/tile_orders.py MxNxK [MxNxK ...] [--seeds 3] [--parts P] [--out F.json]

Every FMA is emulated exactly as the GPU rounds it (the float64 product of two float32s is
exact; the sum is rounded once to float32; double rounding through float64 changes a result in
about one case in 2^29, none that moves a count). Orders, for steps of BK = 16 elements of N:

* ``chains``: `small` as it is: step t's 16 FMAs go to accumulator chain t % CHAINS (2), the
  chains added in pairs at the end;
* ``blocked``: each step's 16 FMAs summed from zero in a fresh register, then added to one
  running sum (`small` since this experiment, CHAINS = 2: the same registers as 2 chains, one FADD
  more per 16 FMAs);
* ``blocked3``: the same with three running sums in rotation, added in pairs (CHAINS = 4);
* ``one``: a single chain, for scale.

Each order runs over the split-K parts `handoff.parts` gives the shape on an H200 (132 SMs ×
`small`'s 3 blocks, 32×64 tiles), or --parts, and the parts meet in splitk.cuh's tree of fan-in 8.
Inputs in U[-10, 10), as LeetGPU's timing cases; a float64 reference. The GPU's figures for the
same shapes are in the random-shape records (`exact_violations`, ours and cuBLAS's).
"""

from __future__ import annotations

import argparse
import json
import statistics
from datetime import UTC, datetime

import numpy as np

from gemmlab.cuda import handoff
from gemmlab.reference import LEETGPU_ATOL, LEETGPU_RTOL

BK, FAN, SMS, BLOCKS, TILE = 16, 8, 132, 3, (32, 64)


def fma(a, b, c):
    """fmaf on float32 arrays: the exact product plus c, rounded once."""
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)


def part_sum(a, b, lo, hi, order):
    """One part's sum over N's elements [lo, hi), in steps of BK from lo, in `order`."""
    m, k = a.shape[0], b.shape[1]
    zero = np.zeros((m, k), np.float32)
    chains = [zero.copy(), zero.copy()]
    runs = [zero.copy(), zero.copy(), zero.copy()]
    acc = zero.copy()
    for t, s in enumerate(range(lo, hi, BK)):
        e = min(s + BK, hi)
        if order in ("blocked", "blocked3"):
            tmp = zero.copy()
            for n in range(s, e):
                tmp = fma(a[:, n:n + 1], b[n:n + 1, :], tmp)
            if order == "blocked":
                acc = (acc + tmp).astype(np.float32)
            else:
                runs[t % 3] = (runs[t % 3] + tmp).astype(np.float32)
        elif order == "chains":
            c = chains[t % 2]
            for n in range(s, e):
                c = fma(a[:, n:n + 1], b[n:n + 1, :], c)
            chains[t % 2] = c
        else:
            for n in range(s, e):
                acc = fma(a[:, n:n + 1], b[n:n + 1, :], acc)
    if order == "chains":
        return (chains[0] + chains[1]).astype(np.float32)
    if order == "blocked3":
        return ((runs[0] + runs[1]).astype(np.float32) + runs[2]).astype(np.float32)
    return acc


def tree(sums):
    """splitk.cuh's combine: levels of fan-in FAN, each node's children added in child order."""
    while len(sums) > 1:
        nxt = []
        for lo in range(0, len(sums), FAN):
            acc = sums[lo]
            for s in sums[lo + 1:lo + FAN]:
                acc = (acc + s).astype(np.float32)
            nxt.append(acc)
        sums = nxt
    return sums[0]


def violations(c, exact):
    return int((np.abs(c.astype(np.float64) - exact) > LEETGPU_ATOL + LEETGPU_RTOL * np.abs(exact)).sum())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("shapes", nargs="+")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--parts", type=int, default=0, help="split-K parts (0: handoff.parts at the shape)")
    ap.add_argument("--orders", default="chains,blocked,blocked3,one")
    ap.add_argument("--out", help="also write the record here: each shape's counts and their means")
    args = ap.parse_args()
    orders = args.orders.split(",")
    points = []
    for text in args.shapes:
        m, n, k = (int(x) for x in text.split("x"))
        k_tiles = -(-n // BK)
        tiles = -(-m // TILE[0]) * -(-k // TILE[1])
        p = args.parts or handoff.parts(tiles, k_tiles, SMS * BLOCKS, BK, handoff.fewest(n, k))
        rows = []
        for seed in range(args.seeds):
            rng = np.random.default_rng(seed)
            a = rng.uniform(-10, 10, (m, n)).astype(np.float32)
            b = rng.uniform(-10, 10, (n, k)).astype(np.float32)
            exact = a.astype(np.float64) @ b.astype(np.float64)
            row = {"shape": [m, n, k], "parts": p, "seed": seed}
            for order in orders:
                bounds = [(k_tiles * i // p) * BK for i in range(p + 1)]
                sums = [part_sum(a, b, bounds[i], min(bounds[i + 1], n), order) for i in range(p)]
                row[order] = violations(tree(sums), exact)
            print(json.dumps(row), flush=True)
            rows.append(row)
        points.append({"label": text, "shape": [m, n, k], "parts": p, "seeds": args.seeds,
                       "counts": {o: [r[o] for r in rows] for o in orders},
                       "mean": {o: statistics.fmean(r[o] for r in rows) for o in orders}})
    if args.out:
        record = {"kind": "emulated summation orders (CPU)", "date": datetime.now(UTC).isoformat(timespec="seconds"),
                  "inputs": "U[-10, 10), numpy default_rng(seed)", "tolerance": [LEETGPU_ATOL, LEETGPU_RTOL],
                  "tile": list(TILE), "bk": BK, "fan": FAN, "slots": SMS * BLOCKS, "points": points}
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
