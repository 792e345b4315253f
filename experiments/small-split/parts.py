"""Why `small` trails cuBLAS FP32 where the output is small and the reduction long (GPU).

The seed-2033 random sweep (experiments/random-shapes/summary.json.gz#13-random-64-seed2033) found `default`
(which runs `small` there) 10-40 % behind cuBLAS at shapes such as 233×5156×242 and 165×3061×570:
a few dozen 32×64 tiles, each reduction split across grid z by `cuda/handoff.parts`. Is the
policy's part count wrong, or is a part itself slow? Here each shape is timed with the parts
forced to P (within the policy's own limits: a part keeps SPLIT_MIN_N of N), for `small` as
installed and for the same kernel at MIN_BLOCKS 4 (the tune space's new value) and 6, beside cuBLAS, as
`gemmlab sweep` times a shape (bench.run.measure: interleaved, GPU time, every result checked
against the float64 product). P = 0 is the policy's own choice.

One JSON line per (shape, arm, P) goes to OUT.jsonl.
Usage (repository root, on a GPU): python experiments/small-split/parts.py OUT.jsonl [MxNxK ...]
"""
import dataclasses
import json
import sys

from gemmlab import registry, runtime
from gemmlab.bench.run import measure
from gemmlab.cuda import handoff
from gemmlab.policy.spaces import SPACES

SHAPES = ["233x5156x242", "165x3061x570", "338x5856x883", "262x7309x476", "42x1150x7694",
          "76x1783x2273", "33x7873x737"]
PARTS = (0, 1, 2, 4, 8, 12, 16, 24, 32, 48, 64)

runtime.configure()
out_path = sys.argv[1]
shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[2:] or SHAPES)]
policy = handoff.parts
small = registry.get("small")
space = SPACES["small"]


def arm(min_blocks: int) -> registry.Implementation:
    """small's launches rebuilt with MIN_BLOCKS changed (its other knobs as they are)."""
    built = tuple(space.build(launch.name, space.current(launch.name) | {"MIN_BLOCKS": min_blocks})
                  if launch.name in space.launches else launch for launch in small.launches)
    return dataclasses.replace(small, name=f"small-mb{min_blocks}", launches=built, chapter=None, step=0,
                               variant_of="small")


arms = [small, arm(4), arm(6)]
with open(out_path, "a") as out:
    for shape in shapes:
        for forced in PARTS:
            def fixed(tiles, k_tiles, slots, depth, least=1, forced=forced):
                limit = max(1, min(handoff.MAX_PARTS, k_tiles // handoff.min_k_tiles(depth),
                                   handoff.COUNTERS // max(tiles, 1)))
                return policy(tiles, k_tiles, slots, depth, least) if forced == 0 else max(least, min(forced, limit))
            handoff.parts = fixed
            # Fresh copies: a solver keeps each call's plan (its grid) for the next call at the same
            # operands, so one that ran with another P would run that P again.
            rec = measure([dataclasses.replace(a) for a in arms], shape, 3, 20, False, 7, energy=())
            rows = {r["name"]: r for r in rec["results"]}
            for a in arms:
                r = rows[a.name]
                line = {"shape": shape, "arm": a.name, "P": forced, "ms": r["median_ms"],
                        "cublas_ms": rows["torch"]["median_ms"], "passed": r["passed"],
                        "clocks": rec["clocks_during_timing"], "kernel": r.get("kernel")}
                out.write(json.dumps(line) + "\n")
                print(f"{'x'.join(map(str, shape)):14s} {a.name:9s} P={forced:2d} {r['median_ms'] * 1e3:7.1f} us"
                      f"  cuBLAS {rows['torch']['median_ms'] * 1e3:6.1f} us  {'ok' if r['passed'] else 'FAIL'}",
                      flush=True)
