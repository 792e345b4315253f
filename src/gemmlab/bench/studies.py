"""Controlled comparisons and sweeps built on `bench.run`.

`buffering`: single vs double buffer × 64² vs 128² tiles. Its four arms are the study's own
launches, alike in all else (`CONTROLS`): the rungs keep their tuned fast paths, which would
confound the comparison. `sweep`: TFLOP/s against shape (squares 256…8192, and the performance
shape with a dimension made odd, which sends the float4 rungs to their fallback).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from .. import launches, problem, registry
from ..cuda.needs import Needs
from ..measure.timing import timed_calls
from ..reference import Precision
from .run import measure, run

#: The reduction step every arm shares.
STEP = 16
#: What every arm holds equal, for the design table's heading.
CONTROLS = f"BK={STEP}, 8×4 per thread, bounds-checked, full unroll, MIN_BLOCKS=1"


def _arm(buffers: str, tile: int) -> registry.Implementation:
    """One arm: the float4 kernel (one shared buffer) or the double-buffer kernel, bounds-checked."""
    if buffers == "single":
        launch = launches.float4_launch(tile, STEP, unroll=STEP, min_blocks=1)
        source = "float4"
    else:
        launch = launches.double_buffer_launch(tile)
        source = "double-buffer-64"
    of = registry.REGISTRY[source]  # an arm is outside the registry: no chapter, no step of its own
    return registry.Implementation(
        f"{buffers}-{tile}", registry.Family.CUDA, of.old_number, Precision.FP32, Needs.ANY,
        f"buffering study: {buffers} buffer, {tile}×{tile} tile ({CONTROLS})",
        of.doc, of.sources, launches=(launch, launches.TILING2D), variant_of=source,
    )


#: (buffers, tile) → the arm that measures it.
BUFFERING = {(b, t): _arm(b, t) for b in ("single", "double") for t in (64, 128)}


def buffering(progress: Callable[[str, int, int], None] | None = None) -> dict:
    record = measure(list(BUFFERING.values()), None, 5, 10, progress=progress)
    record["study"] = "buffering"
    record["controls"] = CONTROLS
    record["design"] = [{"buffers": b, "tile": t, "name": arm.name} for (b, t), arm in BUFFERING.items()]
    record["resources"] = resources()
    return record


def resources(arch: str | None = None) -> list[dict]:
    """Registers, shared memory, spills (and occupancy on a GPU) of each arm's own kernel."""
    from .inspect import inspect_launches

    rows = inspect_launches(list(BUFFERING.values()), arch)
    return [r for r in rows if "fallback" not in r["kernel"]]


#: What `gemmlab sweep` times when no names are given.
SWEEP_DEFAULT = ["tiling-2d", "float4", "double-buffer-128", "cp-async", "triton", "warptile", "bigtile", "splitk", "tma", "default",
                 "triton-presplit", "torch", "torch-tf32", "mma-tf32", "wgmma-ws", "wgmma-3xtf32"]


def sweep_shapes() -> list[tuple[str, tuple[int, int, int]]]:
    shapes = [(f"{s}³", (s, s, s)) for s in (256, 512, 1024, 2048, 4096, 8192)]
    m, n, k = problem.PERF_SHAPE
    shapes += [("perf", (m, n, k)), ("perf M-1", (m - 1, n, k)), ("perf N-1", (m, n - 1, k)),
               ("perf K-1", (m, n, k - 1)), ("perf odd", (m - 1, n - 1, k - 1))]
    return shapes


def _rotated(names: list[str] | None, i: int) -> list[str] | None:
    """The names of shape `i`, starting `i` places along, so that each implementation takes the
    first warm-up in turn (experiments/README.md#small-shaped); the baselines stay in front, so
    that every ratio's denominator is timed alike."""
    if not names:
        return names
    front = [x for x in names if x in (registry.BASELINE, registry.TF32_BASELINE)]
    rest = [x for x in names if x not in front]
    shift = i % len(rest) if rest else 0
    return front + rest[shift:] + rest[:shift]


def sweep(names: list[str], warmup: int = 2, iters: int = 10,
          shapes: list[tuple[str, tuple[int, int, int]]] | None = None,
          progress: Callable[[str, int, int], None] | None = None,
          energy: Collection[str] | None = None) -> dict:
    """Each shape timed as `run` times it, with one energy block per implementation in `energy`
    (None: all; empty: none)."""
    points = []
    last = None
    shapes = shapes or sweep_shapes()
    for i, (label, shape) in enumerate(shapes):
        if progress:
            progress(f"sweep {label} {shape}", i, len(shapes))
        calls = timed_calls(shape, iters)
        last = run(_rotated(names, i), shape, warmup, calls, energy=energy, energy_rounds=1)
        # Each point keeps the clock and power it was timed at: small shapes run at the full clock,
        # long tensor-core ones under the power cap (LADDER.md §6).
        points.append({"label": label, "shape": list(shape), "iters": calls, "results": last["results"],
                       "clocks_during_timing": last["clocks_during_timing"]})
    assert last is not None
    out_names = [r["name"] for r in points[0]["results"]]  # the first point's order: the names as given
    return {"schema": 1, "study": "sweep", "date": last["date"], "device": last["device"],
            "versions": last["versions"], "warmup": warmup, "iters": iters, "names": out_names,
            **({"tune_record": last["tune_record"]} if "tune_record" in last else {}),
            "points": points}


#: What `gemmlab sweep --random` times when no names are given: every strict-FP32 CUDA rung that
#: can be the fastest somewhere (the ladder's first rungs, many times slower, cannot), and cuBLAS.
RANDOM_DEFAULT = ["float4", "float4-bk16", "double-buffer-64", "cp-async", "warptile", "bigtile", "splitk",
                  "tma", "tma-warp", "small", "default", "torch"]
#: Whose host overhead the random sweep measures, and where: shapes of 1024² outputs and more, fixed
#: (at a random large shape the clock's own drift between calls is larger than the overhead).
OVERHEAD_NAMES = ("default", "torch")
OVERHEAD_SHAPES = ((1024, 1024, 1024), (2048, 1024, 2048), (2048, 2048, 2048))
OVERHEAD_ITERS = 100


def random_sweep(names: list[str], n: int, seed: int, warmup: int = 2, iters: int = 10,
                 progress: Callable[[str, int, int], None] | None = None,
                 energy: Collection[str] | None = OVERHEAD_NAMES) -> dict:
    """The sweep over `randomshapes.draw(n, seed)`, with each point's kind, the host overhead of
    `OVERHEAD_NAMES` at `OVERHEAD_SHAPES`, and the summary (`summary.summarize`). Energy is read
    for `energy` (by default the pair compared, not all eleven: a block is half a second)."""
    from . import randomshapes, summary
    from .run import host_overhead

    drawn = randomshapes.draw(n, seed)
    labelled = [(f"{kind} {m}×{nn}×{k}", (m, nn, k)) for kind, (m, nn, k) in drawn]
    record = sweep(names, warmup, iters, labelled, progress, energy)
    record["random"] = {"n": n, "seed": seed, "kinds": [dict(vars(k)) for k in randomshapes.KINDS]}
    for point, (kind, _) in zip(record["points"], drawn, strict=True):
        point["kind"] = kind
    record["host_overhead"] = [
        {"shape": list(shape), **{name: host_overhead(registry.get(name), shape, OVERHEAD_ITERS)
                                  for name in OVERHEAD_NAMES if name in record["names"]}}
        for shape in OVERHEAD_SHAPES]
    record["summary"] = summary.summarize(record)
    return record
