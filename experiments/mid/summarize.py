"""summary.json from the variant runs' JSON lines (variants.py): per run and implementation, the
geometric mean of cuBLAS FP32's time over its own at the shapes, overall and per shape class of
`default` (policy/classes.py, 132 SMs), and the shapes. The notes quote figures from it.

Usage (repository root, no GPU): python experiments/mid/summarize.py
"""
import gzip
import json
import math
from pathlib import Path

from gemmlab.policy.classes import classify

HERE = Path(__file__).resolve().parent
RUNS = {"mid": "1-mid-variants.jsonl.gz", "split": "2-split-variants.jsonl.gz"}
SMS = 132


def geomean(values):
    return round(math.exp(sum(map(math.log, values)) / len(values)), 3)


out = {}
for run, name in RUNS.items():
    points = [json.loads(line) for line in gzip.decompress((HERE / name).read_bytes()).decode().splitlines()]
    names = [r["name"] for r in points[0]["rows"] if r["name"] != "torch"]
    ratios = {n: {} for n in names}
    for p in points:
        rows = {r["name"]: r for r in p["rows"]}
        for n in names:
            assert rows[n]["passed"], (p["label"], n)
            ratios[n][p["label"]] = (rows["torch"]["median_ms"] / rows[n]["median_ms"], classify(*p["shape"], SMS).key)
    out[run] = {
        "file": name, "shapes": len(points),
        "implementations": [{
            "name": n, "geomean": geomean([r for r, _ in ratios[n].values()]),
            "by_class": {c: geomean([r for r, k in ratios[n].values() if k == c])
                         for c in sorted({k for _, k in ratios[n].values()})},
            "ratios": {label: round(r, 3) for label, (r, _) in ratios[n].items()},
        } for n in names],
    }
(HERE / "summary.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
for run, data in out.items():
    for impl in data["implementations"]:
        print(f"{run:6s} {impl['name']:55s} {impl['geomean']:.3f} {impl['by_class']}")
