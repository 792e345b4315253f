"""Does working out the copy addresses once a block (tile_copy.cuh's HOIST) pay? (GPU)

`small`'s copy_step derives each piece's row, column, bounds and 64-bit address from scratch at
every reduction step. With 4-byte copies (VEC 1: twelve a thread a step at 32×64 tiles, the
launch every odd micro shape runs) the main loop came to 569 instructions for 256 FFMAs, 391 with
16-byte copies (sm_90a SASS, 2026-12-04). HOIST 1 keeps one offset, the rows left and a column
test per tile and thread, and adds n0 (A) or n0·K (B) a step: 429 and 373 instructions, 117 → 99
registers for VEC 1; the same bytes land in the same places, so results are bit for bit the same.
`mma-split` (mma_split.cu, the TF32 rung for few tiles) copies its tiles the same way: its
4-byte loop fell from 407 instructions for 16 HMMAs to 269.

Prediction (written before any run): where the loop is bound by issue (long reductions onto
outputs of a few thousand to a few hundred thousand: seed 2039's worst shapes, 0.63–0.85×
cuBLAS FP32), the VEC 1 builds run 1.15–1.30× faster (25 % fewer instructions, 22 % fewer
static stall cycles); the VEC 4 builds 0–5 %; short reductions (a few steps a part) within noise.

Arms: the rungs RUNGS names (default: `default` and `small`) as they shipped before 2026-12-04
(`-before`: every launch of small.cu and mma_split.cu with HOIST 0, `small`'s width twins
left out), each hoisted (`-hoist`: HOIST 1, no width twins), and each as it ships now (HOIST 1
and, for `small`'s 4-byte launches, `launches.width_twins`); with `small` among them, also
experiments/small-tiles' best arm (64×128 tiles, 8×8 outputs a thread, one chain) with HOIST 1
(`small-8x8-hoist`: its 4-byte loop 809 → 668 instructions; it ran 1.16–1.33× `small` at long
reductions without it), and `small-widths-hoist`: the 32×64 tile alone, each operand's copies as
wide as its rows allow (tile_copy.cuh's VEC_A, VEC_B: 8 bytes where N or K is even, 16 where a
multiple of 4), hoisted; its loops run 373–409 instructions where `any` runs 429, predicted
5–10 % past `small-hoist` where N or K is even and the other is not a multiple of 4.

The first run (`1-small-hoist.jsonl.gz`, at 9f4f4be, before the flip) named its arms `default`,
`small` (HOIST 0: as then shipped) and `-hoist`, and built the latter by `Launch.with_defines`,
which re-derives each precondition: `small`'s narrow twins lost theirs, so its `small-hoist` and
`default-hoist` ran 64×32 tiles wherever they held, not the 32×64 of `small`. The arms now
replace the define and keep each launch's precondition.

With `mma-split` among RUNGS, also `mma-split-widths`: its 4-byte launch preceded by its width
twins (`launches.width_twins`, as `small` ships them). Its hoisted 4-byte loop runs 269
instructions; with the twins 217–247 (sm_90a, 2026-12-04): a larger share of a shorter loop than
`small`'s (429 → 373–409, which ran 0–5 % faster). Prediction (written before any run): 3–10 %
past `mma-split` where N or K is even and the other not a multiple of 4.

Each arm is timed beside cuBLAS as `gemmlab sweep` times a shape (bench.run.measure:
interleaved, GPU time, each result checked against the float64 product). One JSON line per
shape to OUT.jsonl, with the results' bits compared between each rung's arms (`same_bits`: the
`-hoist` arm against `-before`; since the second run, also the shipped arm, "RUNG shipped").
Usage (repository root, on a GPU): python experiments/small-hoist/hoist.py OUT.jsonl [MxNxK ...]
"""
import dataclasses
import json
import os
import sys
from pathlib import Path

import torch

from gemmlab import launches, registry, runtime
from gemmlab.bench.run import measure
from gemmlab.measure.inputs import result_bits

# Seed 2039's shapes where `default` ran `small` (experiments/random-shapes/summary.json.gz#19-random-64-seed2039),
# its worst first, then two with 16-byte copies and two short reductions.
SHAPES = ["460x8027x70", "41x1399x3647", "1072x3978x37", "181x3387x446", "820x4870x46", "14x333x1542",
          "220x98x460", "358x2665x237", "198x2083x73", "44x4458x707", "262x3764x1868", "217x118x502",
          "1024x1024x1024", "2048x32x2048"]


RUNGS = os.environ.get("RUNGS", "default small").split()
COPIERS = launches.COPIERS  # the kernels whose tiles tile_copy.cuh copies


def armed(impl, suffix, hoist, twins):
    """`impl` with HOIST `hoist` in every launch of those kernels (the define replaced, each
    precondition kept), without `small`'s width twins unless `twins`."""
    turned = tuple(dataclasses.replace(x, defines=dict(x.defines) | {"HOIST": hoist}) if x.source in COPIERS else x
                   for x in impl.launches if twins or "VEC_A" not in x.defines)  # a width twin sets VEC_A
    return dataclasses.replace(impl, name=f"{impl.name}{suffix}", launches=turned, chapter=None, step=0,
                               variant_of=impl.name)


def bits(impl, shape):
    """C from one call on fixed inputs (seed 5, [-10, 10)), as raw int32 bits."""
    return result_bits(impl.solve, shape, 5, torch.device("cuda"))


if "afresh" not in (Path(__file__).parents[2] / "src/gemmlab/kernels/cuda/tile_copy.cuh").read_text():
    # The -before arms build HOIST 0, which left the kernel: without the patch they would time the hoisted copy.
    sys.exit("HOIST 0 left tile_copy.cuh: first `git apply experiments/small-hoist/afresh.patch`")
runtime.configure()
out_path = sys.argv[1]
shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[2:] or SHAPES)]
base = [registry.get(n) for n in RUNGS]
before = {x.name: armed(x, "-before", 0, False) for x in base}
hoisted = {x.name: armed(x, "-hoist", 1, False) for x in base}
arms = [*before.values(), *hoisted.values(), *base]
if "small" in RUNGS:
    small = registry.get("small")
    # experiments/small-tiles' t64x128-c1, hoisted
    wide = dict(bm=64, bn=128, bk=8, stages=4, chains=1, min_blocks=2, tm=8, tn=8)
    arms.append(dataclasses.replace(small, name="small-8x8-hoist", chapter=None, step=0, variant_of="small",
                                    launches=(launches.small_launch(4, **wide), launches.small_launch(1, **wide))))
    # each operand's copies as wide as its rows allow, hoisted: the shortest loop first
    arms.append(dataclasses.replace(small, name="small-widths-hoist", chapter=None, step=0, variant_of="small",
                                    launches=tuple(launches.small_launch(1, widths=w)
                                                   for w in launches.COPY_WIDTHS)))
if "mma-split" in RUNGS:
    # mma-split with small's width twins before its 4-byte launch (launches.width_twins)
    mma = registry.get("mma-split")
    four = next(x for x in mma.launches if x.name == "any")
    arms.append(dataclasses.replace(mma, name="mma-split-widths", chapter=None, step=0, variant_of="mma-split",
                                    launches=tuple(x for x in mma.launches if x is not four)
                                    + launches.width_twins(four) + (four,)))
with open(out_path, "a") as out:
    for shape in shapes:
        # Fresh copies: a solver keeps each call's plan for the next call at the same operands.
        rec = measure([dataclasses.replace(a) for a in arms], shape, 3, 30, False, 7, energy=())
        rows = {r["name"]: r for r in rec["results"]}
        same = {}
        for x in base:  # the hoisted arm and the shipped one (width twins and all) against before
            old = bits(dataclasses.replace(before[x.name]), shape)
            same[x.name] = bool(torch.equal(old, bits(dataclasses.replace(hoisted[x.name]), shape)))
            same[f"{x.name} shipped"] = bool(torch.equal(old, bits(dataclasses.replace(x), shape)))
        line = {"shape": shape, "clocks": rec["clocks_during_timing"], "same_bits": same,
                "results": {name: {"ms": r["median_ms"], "passed": r["passed"], "kernel": r.get("kernel"),
                                   "exact_violations": (r.get("figures") or {}).get("exact_violations")}
                            for name, r in rows.items()}}
        out.write(json.dumps(line) + "\n")
        out.flush()
        t = rows["torch"]["median_ms"]
        print("x".join(map(str, shape)).ljust(15), " ".join(
            f"{n}={r['median_ms'] * 1e3:.1f}us({t / r['median_ms']:.2f}){'' if r.get('passed') else '!FAIL'}"
            for n, r in rows.items() if r.get("median_ms")), "same bits:", same, flush=True)
