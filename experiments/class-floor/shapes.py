"""The shapes of experiments/class-floor, as `--shape` arguments for `gemmlab sweep` (no GPU).

Drawn log-uniformly (seeded, so the same every run) and kept where `classes.classify` on the H200's
132 SMs puts them in the classes asked about, then the random records' cited shapes of those
classes: 262×3764×1868 (seed 2039's one tiny-aligned shape), 829×4858×193 and 472×6284×974 (seed
2040's worst long reductions, both tiny-odd).
Usage: python experiments/class-floor/shapes.py
"""
import math
import random

from gemmlab.policy.classes import classify, current_key

SMS = 132
CITED = {"tiny-aligned": ["262x3764x1868"], "tiny-odd": ["829x4858x193", "472x6284x974"]}


def draw(key: str, count: int, seed: int, aligned: bool) -> list[str]:
    """`count` shapes of class `key`: M, N, K log-uniform, N and K multiples of 4 where `aligned`."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        m, n, k = (int(math.exp(rng.uniform(math.log(32), math.log(8192)))) for _ in range(3))
        if aligned:
            n, k = 4 * max(n // 4, 1), 4 * max(k // 4, 1)
        if classify(m, n, k, SMS).key == current_key(key):  # the sizes' former names, as written here
            out.append(f"{m}x{n}x{k}")
    return out


def shapes() -> list[str]:
    plan = {"tiny-aligned": (11, 11, True), "tiny-odd": (7, 12, False), "small-odd": (7, 13, False),
            "tiny-odd-n": (4, 14, False)}
    return [s for key, (count, seed, aligned) in plan.items() for s in draw(key, count, seed, aligned) + CITED.get(key, [])]


if __name__ == "__main__":
    print(" ".join(f"--shape {s}" for s in shapes()))
