"""Results as data: the JSON record `gemmlab bench` writes, its schema check, and file names."""

from __future__ import annotations

import json
from pathlib import Path

from .. import jsonfile
from ..measure.device import slug

REQUIRED_TOP = ("schema", "date", "platform", "device", "versions", "shape", "warmup", "iters",
                "baseline", "peaks_tflops", "results")
REQUIRED_ROW = ("name", "precision", "passed")
TIMED_ROW = ("median_ms", "mean_ms", "min_ms", "max_ms", "tflops", "ratio_vs_cublas")


class SchemaError(ValueError):
    pass


def validate(record: dict) -> dict:
    """Raise SchemaError naming the first missing or ill-typed field."""
    for key in REQUIRED_TOP:
        if key not in record:
            raise SchemaError(f"missing top-level field {key!r}")
    if record["schema"] != 1:
        raise SchemaError(f"unknown schema {record['schema']!r}")
    if not isinstance(record["device"], dict) or "name" not in record["device"]:
        raise SchemaError("device must be an object with a name")
    shape = record["shape"]
    if not (isinstance(shape, list) and len(shape) == 3 and all(isinstance(x, int) for x in shape)):
        raise SchemaError("shape must be [M, N, K]")
    if not isinstance(record["results"], list):
        raise SchemaError("results must be a list")
    for i, row in enumerate(record["results"]):
        if not isinstance(row, dict):
            raise SchemaError(f"results[{i}] must be an object")
        for key in REQUIRED_ROW:
            if key not in row:
                raise SchemaError(f"results[{i}] lacks {key!r}")
        if "median_ms" in row:
            for key in TIMED_ROW:
                if key not in row:
                    raise SchemaError(f"results[{i}] ({row['name']}) lacks {key!r}")
            if not row["min_ms"] <= row["median_ms"] <= row["max_ms"]:
                raise SchemaError(f"results[{i}] ({row['name']}): median outside [min, max]")
    return record


SWEEP_TOP = ("schema", "study", "date", "device", "names", "points")
#: The committed record of the latest H200 benchmark, by its path in the repository: what
#: `gemmlab report` reads by default (`gemmlab.committed` finds it).
LATEST = "results/h200-latest.json"


def kind(record: dict) -> str:
    """'sweep', 'buffering' or 'bench'; SchemaError where the record is none of them."""
    if not isinstance(record, dict):
        raise SchemaError("a record is a JSON object")
    if record.get("study") == "sweep":
        for key in SWEEP_TOP:
            if key not in record:
                raise SchemaError(f"missing top-level field {key!r}")
        if not isinstance(record["points"], list) or not isinstance(record["names"], list):
            raise SchemaError("a sweep's names and points must be lists")
        return "sweep"
    validate(record)
    return "buffering" if record.get("study") == "buffering" else "bench"


#: What a CPU record's figures are worth, in the terminal and in its report.
CPU_NOTE = ("CPU figures, indicative only: CPU timings vary widely between identical runs; "
            "compare implementations on a GPU.")


def baseline_label(record: dict) -> str:
    """What the ratios are against: cuBLAS on a GPU, torch's own CPU matmul on a CPU."""
    return "CPU torch" if record.get("platform") == "cpu" else "cuBLAS"


def kernel_label(record: dict, row: dict) -> str:
    """The CUDA kernel a row ran, or how a Triton rung ran on a CPU (its interpreter)."""
    if row.get("kernel"):
        return row["kernel"]
    if record.get("platform") == "cpu" and row.get("family") == "triton":
        return "Triton interpreter"
    return "-"


def _write(record: dict, root: Path, name: str, compact: bool = False) -> Path:
    text = json.dumps(record, separators=(",", ":")) if compact else json.dumps(record, indent=1)
    return jsonfile.write(root / slug(record["device"]["name"]) / name, text, keep_existing=True)


def save(record: dict, root: Path) -> Path:
    validate(record)
    stamp = record["date"].replace(":", "").replace("+0000", "Z").replace("+00:00", "Z")
    return _write(record, root, f"{stamp}.json")


def save_sweep(record: dict, root: Path) -> Path:
    """Write a sweep record as ROOT/DEVICE/sweep-DATE.json, after checking it is one."""
    if kind(record) != "sweep":
        raise SchemaError("not a sweep record")
    prefix = "random" if record.get("random") else "sweep"
    # Every call's times at every shape: compact, as the committed sweeps are, so that a fresh one
    # keeps the tracked tree within its bound (tests/test_experiments.py).
    return _write(record, root, f"{prefix}-{record['date'].replace(':', '')}.json", compact=True)


def load(path: Path) -> dict:
    return validate(jsonfile.read(path))


def step_of(row: dict) -> str:
    """A row's step ("3.2"), the one numbering: its own, or, in a record made before rows carried
    one, the step its name has now; a baseline's name, and "–" for a name no longer registered."""
    if row.get("step"):
        return row["step"]
    from .. import registry

    impl = registry.REGISTRY.get(row["name"])
    return impl.step_label if impl else "–"


def in_reading_order(rows: list[dict]) -> list[dict]:
    """A record's rows as the ladder is read, chapter by chapter and step by step."""
    from .. import registry

    return sorted(rows, key=lambda r: registry.reading_place(r["name"]))


CSV_COLUMNS = ("step", "name", "family", "precision", "kernel", "median_ms", "mean_ms", "min_ms",
               "max_ms", "tflops", "ratio_vs_cublas", "fraction_of_peak", "passed", "reason")


def write_csv(record: dict, path: Path) -> None:
    import csv

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        w.writeheader()
        for row in in_reading_order(record["results"]):
            w.writerow(row | {"step": step_of(row)})
