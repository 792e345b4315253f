"""Time `default`'s variants beside it, shape by shape, one JSON line each (a GPU aid).

The driver of the experiments that turn some of `default`'s launches into twins (experiments/fold,
experiments/tail-split): each shape timed as `gemmlab sweep` times one (bench.run.measure:
interleaved in balanced rounds beside cuBLAS, GPU time, every result checked against the float64
product, inputs in [-10, 10)), then two calls of fresh solvers of the last arm on fixed inputs
(seed 5) compared bit for bit. `describe(arm, launch, m, n, k)` adds what each arm's launch does at
the shape (its split-K parts, say) under "splits".
"""

from __future__ import annotations

import dataclasses
import json

import torch

from gemmlab.bench.run import measure
from gemmlab.measure.inputs import result_bits


def results_of(rows: dict) -> dict:
    """A JSON line's results: each arm's median, verdict, kernel, ratio to cuBLAS FP32 and count of
    elements outside LeetGPU's tolerance against the float64 product (experiments/3x-split's too)."""
    return {name: {"ms": r["median_ms"], "passed": r["passed"], "kernel": r.get("kernel"),
                   "ratio_vs_cublas": r.get("ratio_vs_cublas"),
                   "exact_violations": (r.get("figures") or {}).get("exact_violations")}
            for name, r in rows.items()}


def split_of(arm, launch, m: int, n: int, k: int) -> dict:
    """A `describe` for `time_beside`: what the launch's host splits at the shape, bigtile's SPLIT 2
    plan or the parts every tile gets (a host with a split flag splits only where it is set;
    `small`'s SplitGrid always may; a launch without a host, never)."""
    host = launch.host
    if getattr(host, "tail", False):
        return {"plan": dataclasses.asdict(host.plan(launch, m, n, k))}
    return {"parts": host.parts(launch, m, n, k) if getattr(host, "split", hasattr(host, "parts")) else 1}


def time_beside(arms: list, shapes: list[tuple[int, int, int]], out_path: str, describe) -> None:
    with open(out_path, "a") as out:
        for shape in shapes:
            m, n, k = shape
            probe = torch.empty(1, device="cuda")
            chosen = {x.name: x.dispatch(probe, probe, probe, m, n, k) for x in arms}
            splits = {x.name: describe(x, chosen[x.name], m, n, k) for x in arms}
            # Fresh copies: a solver keeps each call's plan for the next call at the same operands.
            rec = measure([dataclasses.replace(a) for a in arms], shape, 3, 10, False, 7, energy=())
            rows = {r["name"]: r for r in rec["results"]}
            twice = [result_bits(dataclasses.replace(arms[-1]).solve, shape, 5, torch.device("cuda")) for _ in range(2)]
            repeat = bool(torch.equal(*twice))
            line = {"shape": shape, "clocks": rec["clocks_during_timing"], "commit": rec["versions"].get("gemmlab_commit"),
                    "splits": splits, "launch": {name: x.name for name, x in chosen.items()},
                    "same_bits_twice": repeat, "results": results_of(rows)}
            out.write(json.dumps(line) + "\n")
            out.flush()
            t = rows["torch"]["median_ms"]
            print("x".join(map(str, shape)).ljust(16), splits, " ".join(
                f"{name}={r['median_ms'] * 1e3:.1f}us({t / r['median_ms']:.3f},"
                f"{(r.get('figures') or {}).get('exact_violations')}){'' if r.get('passed') else '!FAIL'}"
                for name, r in rows.items() if r.get("median_ms")), "repeat:", repeat, flush=True)
