"""Does `small` with 8×8 outputs a thread close the gap to cuBLAS at long reductions onto few outputs? (GPU)

The random records' worst strict-FP32 shapes (seeds 2035 and 2036: 385×3845×473, 367×4623×491,
530×8165×85, 1227×150×1523 …) run `small`'s 32×64 tiles of 4×4 outputs a thread, or bigtile's
64×64 split builds after two pre-passes, at 0.58–0.72× cuBLAS FP32. ncu
(experiments/small-split/1-steps-ncu.csv.gz) shows cuBLAS there running SIMT tiles of 64×128 and
256×128 (128 and 256 threads: 64 and 128 outputs a thread), split up to 65 ways. A 4×4 thread
tile reads 8 floats of shared memory for 16 FMAs; 8×8 reads 16 for 64, twice the FMAs a byte.

Prediction (written before any run): at those shapes the 8×8 arms run 1.3–1.6× faster than
`small` as installed, 0.85–1.05× cuBLAS; at short reductions onto small outputs (92×406×54,
512×151×251) they are slower than `small` (fewer blocks, same latency).

Each arm is the `small` kernel (small.cu) with TM×TN 8×8 and the tile, step, stages, chains
and blocks an SM below, its two launches (16-byte copies where SMALL_VEC4 holds, else 4-byte),
split-K by the same policy (`cuda/handoff.parts`). Timed as `gemmlab sweep` times a shape
(bench.run.measure: interleaved, GPU time, each result checked against the float64 product),
beside cuBLAS, `small` and `default`. One JSON line per shape to OUT.jsonl.
Usage (repository root, on a GPU): python experiments/small-tiles/tiles.py OUT.jsonl [MxNxK ...]
"""
import dataclasses
import json
import sys
from concurrent.futures import ThreadPoolExecutor

from gemmlab import launches, registry, runtime
from gemmlab.bench.run import measure
from gemmlab.cuda.compiler import HOPPER_ARCH

SHAPES = ["385x3845x473", "367x4623x491", "530x8165x85", "1227x150x1523", "291x403x2299", "590x3670x493",
          "1072x712x1106", "1392x1096x318", "233x5156x242", "676x2579x319", "88x6292x558", "92x406x54",
          "512x151x251", "2048x2048x2048"]
ARMS = {  # name: the kernel's knobs (small_launch's arguments)
    "t64x128-c2": dict(bm=64, bn=128, bk=8, stages=4, chains=2, min_blocks=2, tm=8, tn=8),
    "t64x128-c1": dict(bm=64, bn=128, bk=8, stages=4, chains=1, min_blocks=2, tm=8, tn=8),
    "t128x64-c2": dict(bm=128, bn=64, bk=8, stages=4, chains=2, min_blocks=2, tm=8, tn=8),
    "t128x128-c2": dict(bm=128, bn=128, bk=8, stages=3, chains=2, min_blocks=1, tm=8, tn=8),
}

runtime.configure()
out_path = sys.argv[1]
shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[2:] or SHAPES)]
small = registry.get("small")
arms = [dataclasses.replace(small, name=name, launches=(launches.small_launch(4, **knobs),
                                                        launches.small_launch(1, **knobs)),
                            chapter=None, step=0, variant_of="small")
        for name, knobs in ARMS.items()]
with ThreadPoolExecutor(8) as pool:  # compile every arm's two kernels up front, side by side
    list(pool.map(lambda launch: launch.kernel.compile(HOPPER_ARCH), [x for a in arms for x in a.launches]))
base = [registry.get("default"), small]
with open(out_path, "a") as out:
    for shape in shapes:
        # Fresh copies: a solver keeps each call's plan for the next call at the same operands.
        rec = measure([dataclasses.replace(a) for a in base + arms], shape, 3, 20, False, 7, energy=())
        rows = {r["name"]: r for r in rec["results"]}
        line = {"shape": shape, "clocks": rec["clocks_during_timing"],
                "results": {name: {"ms": r["median_ms"], "passed": r["passed"], "kernel": r.get("kernel"),
                                   "exact_violations": (r.get("figures") or {}).get("exact_violations")}
                            for name, r in rows.items()}}
        out.write(json.dumps(line) + "\n")
        timed = {n: r["median_ms"] for n, r in rows.items() if r.get("median_ms")}
        ours = [t for n, t in timed.items() if n != "torch"]
        print("x".join(map(str, shape)).ljust(15), " ".join(
            f"{n}={t * 1e3:.1f}{'' if rows[n].get('passed') else '!FAIL'}" for n, t in timed.items()),
            f"| best/cuBLAS {timed['torch'] / min(ours):.2f}" if ours else "| nothing of ours ran", flush=True)
