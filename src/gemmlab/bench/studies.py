"""Controlled comparisons and sweeps built on `bench.run`.

`buffering`: the notes' 2×2 comparison at BK=16 and an 8×4 micro-tile —
single vs double buffer × 64² vs 128² tiles — with each kernel's resources,
so the effect of buffering is told apart from the effect of tile size.

`sweep`: TFLOP/s against shape (squares 256…8192, and the performance shape
with one dimension made odd, which sends the float4 rungs to their fallback).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .. import problem, registry
from .run import run

#: (buffers, tile) → implementation; all BK=16 with an 8×4 micro-tile.
BUFFERING = {
    ("single", 64): "float4-bk16",
    ("single", 128): "float4-128",
    ("double", 64): "double-buffer-64",
    ("double", 128): "double-buffer-128",
}


def buffering(warmup: int = 5, iters: int = 10,
              progress: Callable[[str, int, int], None] | None = None) -> dict:
    record = run(list(BUFFERING.values()), None, warmup, iters, progress=progress)
    record["study"] = "buffering"
    record["design"] = [{"buffers": b, "tile": t, "name": n} for (b, t), n in BUFFERING.items()]
    if torch.cuda.is_available():
        from .inspect import inspect_launches

        rows = inspect_launches([registry.get(n) for n in BUFFERING.values()])
        record["resources"] = [r for r in rows if "fallback" not in r["kernel"]]
    return record


def sweep_shapes() -> list[tuple[str, tuple[int, int, int]]]:
    shapes = [(f"{s}³", (s, s, s)) for s in (256, 512, 1024, 2048, 4096, 8192)]
    m, n, k = problem.PERF_SHAPE
    shapes += [("perf", (m, n, k)), ("perf M-1", (m - 1, n, k)), ("perf N-1", (m, n - 1, k)),
               ("perf K-1", (m, n, k - 1))]
    return shapes


def sweep(names: list[str], warmup: int = 2, iters: int = 5,
          shapes: list[tuple[str, tuple[int, int, int]]] | None = None,
          progress: Callable[[str, int, int], None] | None = None) -> dict:
    points = []
    last = None
    shapes = shapes or sweep_shapes()
    for i, (label, shape) in enumerate(shapes):
        if progress:
            progress(f"sweep {label} {shape}", i, len(shapes))
        last = run(names, shape, warmup, iters)
        points.append({"label": label, "shape": list(shape), "results": last["results"]})
    assert last is not None
    out_names = [r["name"] for r in last["results"]]
    return {"schema": 1, "study": "sweep", "date": last["date"], "device": last["device"],
            "versions": last["versions"], "warmup": warmup, "iters": iters, "names": out_names,
            "points": points}
