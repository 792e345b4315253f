"""summary.json from the variants driver's runs in this folder (CPU): each build's geometric mean
against cuBLAS FP32 over the shapes of a run, and each shape's ratio for every build.

Usage (repository root): python experiments/small-shaped/summarize.py
"""
import gzip
import json
import math
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS = {"shaped": "1-shaped-seeds42-5.jsonl.gz", "position": "2-position.jsonl.gz"}


def short(name: str) -> str:
    """A build's name as a JSON key that reads in a link: small{"BM":64,"BN":32} is 64x32,
    other knobs after it (64x16-MIN_BLOCKS6); a plain rung keeps its name."""
    if "{" not in name:
        return name
    knobs = json.loads(name[name.index("{"):])
    tile = f"{knobs.pop('BM', 32)}x{knobs.pop('BN', 64)}"
    return "-".join([tile, *(f"{k}{v}" for k, v in knobs.items())])


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


summary = {}
for run, name in RUNS.items():
    rows = [json.loads(line) for line in gzip.decompress((HERE / name).read_bytes()).decode().splitlines() if line.strip()]
    names = [r["name"] for r in rows[0]["rows"] if r["name"] != "torch"]
    builds = [short(n) for n in names]
    ratios = {b: [] for b in builds}
    shapes = []
    for row in rows:
        t = {short(r["name"]): r["median_ms"] for r in row["rows"]}
        per = {b: t["torch"] / t[b] for b in builds}
        for b in builds:
            ratios[b].append(per[b])
        shapes.append({"label": row["label"].split(" (")[0], "cublas_us": t["torch"] * 1e3,
                       "ratio": {b: round(v, 4) for b, v in per.items()}})
    summary[run] = {"shapes": len(rows),
                    "builds": [{"name": b, "geomean": round(geomean(v), 4)} for b, v in ratios.items()],
                    "points": shapes}
(HERE / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
print({run: {b["name"]: b["geomean"] for b in s["builds"]} for run, s in summary.items()})
