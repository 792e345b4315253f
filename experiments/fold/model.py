"""The orders' accuracy on a CPU: one chain, folds into C, split-K's parts (numpy; a minute or two).

E outputs of one reduction of length N, inputs uniform in [-10, 10) (the random records'), each
product exact in float64 and every add rounded to float32, as an FFMA rounds it. Counted: the
elements outside LeetGPU's check |C − ref| ≤ 1e-4 + 1e-4·|ref| against the float64 sum, for
* one chain an output (bigtile unsplit);
* folds of L: chains of L elements, each added in turn to a running sum (bigtile's FOLD, L = 640);
* split-K: as many contiguous parts of equal length, added in pairs (cuda/handoff.py's tree).

Usage: python experiments/fold/model.py OUT.json [N ...]   (E = 40,000 outputs, L = 640)
"""
import json
import sys

import numpy as np

E, L = 40_000, 640


def counts(n: int, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    a = rng.uniform(-10, 10, (n, E)).astype(np.float32)
    b = rng.uniform(-10, 10, (n, E)).astype(np.float32)
    products = a.astype(np.float64) * b.astype(np.float64)  # exact: 24 + 24 bits
    ref = products.sum(0)

    def add(x, y):  # float32 + (float32 or an exact product), rounded once to float32 as an FMA's add
        return (x.astype(np.float64) + y).astype(np.float32)

    def chain(lo: int, hi: int):
        acc = np.zeros(E, np.float32)
        for i in range(lo, hi):
            acc = add(acc, products[i])
        return acc

    def outside(c) -> int:
        return int((np.abs(c.astype(np.float64) - ref) > 1e-4 + 1e-4 * np.abs(ref)).sum())

    folds = -(-n // L)
    running = chain(0, min(n, L))
    for f in range(1, folds):
        running = add(running, chain(f * L, min(n, (f + 1) * L)))
    sums = [chain(n * i // folds, n * (i + 1) // folds) for i in range(folds)]
    while len(sums) > 1:
        sums = [add(sums[i], sums[i + 1]) if i + 1 < len(sums) else sums[i] for i in range(0, len(sums), 2)]
    return {"N": n, "E": E, "chain": L, "folds": folds,
            "outside": {"one chain": outside(chain(0, n)), f"folds of {L}": outside(running),
                        f"{folds} parts in a tree": outside(sums[0])}}


if __name__ == "__main__":
    out = [counts(int(x)) for x in (sys.argv[2:] or ["2734", "4858", "6048", "7564"])]
    for row in out:
        print(json.dumps(row))
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)
