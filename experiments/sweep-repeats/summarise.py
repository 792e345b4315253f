"""default's ratio to cuBLAS FP32 at the issue's nine sweep points, from each repeat's sweep JSON.

Usage: python experiments/sweep-repeats/summarise.py [SWEEP.json ...]
(default: every sweep-rep*.json beside this file)
"""

import json
import math
import sys
from pathlib import Path

#: The points issue 10's "must show" names: the squares from 1024³, the performance shape and its odd variants.
POINTS = ("1024³", "2048³", "4096³", "8192³", "perf", "perf M-1", "perf N-1", "perf K-1", "perf odd")


def ratios(path: Path) -> dict[str, float]:
    record = json.loads(path.read_text())
    out = {}
    for point in record["points"]:
        if point["label"] in POINTS:
            row = {r["name"]: r for r in point["results"]}
            out[point["label"]] = row["default"]["ratio_vs_cublas"]
    return out


def main(paths: list[Path]) -> None:
    print("| record | " + " | ".join(POINTS) + " | geomean | min |")
    print("|---|" + "---:|" * (len(POINTS) + 2))
    for path in paths:
        r = ratios(path)
        values = [r[p] for p in POINTS]
        geomean = math.exp(sum(map(math.log, values)) / len(values))
        print(f"| {path.name} | " + " | ".join(f"{v:.3f}" for v in values) + f" | {geomean:.4f} | {min(values):.3f} |")


if __name__ == "__main__":
    here = Path(__file__).parent
    main([Path(p) for p in sys.argv[1:]] or sorted(here.glob("sweep-rep*.json")))
