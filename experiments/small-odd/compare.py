"""Each kernel's time (ncu gpu__time_duration) in ncu-steps-before.csv and ncu-steps-after.csv,
side by side: `default`'s pre-passes and bigtile kernel, and cuBLAS's kernel, per call of steps.py.

Usage: python compare.py [BEFORE.csv AFTER.csv]
"""
import csv
import sys
from pathlib import Path


def kernels(path: Path) -> list[tuple[str, str, float]]:
    rows = csv.DictReader(line for line in path.open() if line.startswith('"'))
    return [(r["Kernel Name"][:28], r["Grid Size"], float(r["Metric Value"].replace(",", "")) / 1000)
            for r in rows if not r["Kernel Name"].startswith("void at::")]  # torch's input fills


here = Path(__file__).parent
before, after = (Path(p) for p in sys.argv[1:3]) if len(sys.argv) == 3 else (
    here / "ncu-steps-before.csv", here / "ncu-steps-after.csv")
print("| kernel | grid | before µs | after µs |\n|---|---|---:|---:|")
for (name, grid, t0), (name1, _, t1) in zip(kernels(before), kernels(after), strict=True):
    assert name == name1, (name, name1)
    print(f"| {name} | {grid} | {t0:.1f} | {t1:.1f} |")
