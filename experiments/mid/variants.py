"""Knob variants of the split-K rungs (`mid`, `splitk`, `tma`, `small`) against `default` and cuBLAS
FP32, at random shapes (bench/randomshapes.py) whose work M·N·K lies in a band: by default the micro
and tiny shapes, where `default` runs `small`.

Each shape is timed as `gemmlab sweep` times it (bench.run.measure: cuBLAS interleaved, GPU time,
50 calls below 2048³, each result checked against the float64 product), and one JSON line per
shape goes to stdout's file; the summary at the end gives each variant's geometric-mean ratio to
cuBLAS FP32 and to the fastest of the others, over the shapes.

Usage (repository root, on a GPU):
  python experiments/mid/variants.py OUT.jsonl SEED[,SEED...] [LO:HI] 'RUNG:{"KNOB": value, ...}' ...
A variant changes the knobs of every launch of RUNG ('RUNG:{}' is the rung as it is); LO:HI bounds the
work M·N·K (default 0:2.2e9). `default`, `small` and cuBLAS are always timed.
"""
import dataclasses
import json
import math
import sys

from gemmlab import registry, runtime
from gemmlab.bench import randomshapes
from gemmlab.bench.run import measure
from gemmlab.measure.timing import timed_calls
from gemmlab.policy.classes import MICRO_WORK_PER_SM

#: Shapes whose work M·N·K is at most this many SMs' worth of micro work: micro, tiny and a little more.
SMS_WORTH = 132 * 4

runtime.configure()
out_path, seeds, args = sys.argv[1], [int(s) for s in sys.argv[2].split(",")], sys.argv[3:]
lo, hi = 0.0, float(MICRO_WORK_PER_SM * SMS_WORTH)
if args and ":" in args[0] and not args[0].split(":")[0].isalpha():
    lo, hi = (float(x) for x in args.pop(0).split(":"))
impls = [registry.get("default"), registry.get("small")]
for arg in args:
    rung, text = arg.split(":", 1)
    base, knobs = registry.get(rung), json.loads(text)
    launches = tuple(x.with_defines(knobs) for x in base.launches if x.derive) + tuple(
        x for x in base.launches if not x.derive)  # a fallback without knobs stays as it is
    name = rung if not knobs else rung + json.dumps(knobs, separators=(",", ":"))
    impls.append(dataclasses.replace(base, name=name, launches=launches))
shapes = [(f"{kind} {m}×{n}×{k} (seed {seed})", (m, n, k)) for seed in seeds
          for kind, (m, n, k) in randomshapes.draw(64, seed) if lo <= m * n * k <= hi]
ratios: dict[str, list[float]] = {i.name: [] for i in impls}
best_of: dict[str, list[float]] = {i.name: [] for i in impls}
with open(out_path, "w") as out:
    for label, shape in shapes:
        rec = measure(impls, shape, 2, timed_calls(shape, 10), False, 7, energy=())
        rows = {r["name"]: r for r in rec["results"]}
        out.write(json.dumps({"label": label, "shape": shape, "clocks": rec["clocks_during_timing"],
                              "rows": [{k: r.get(k) for k in ("name", "median_ms", "passed", "kernel", "figures")}
                                       for r in rec["results"]]}) + "\n")
        cublas = rows["torch"]["median_ms"]
        fastest = min(r["median_ms"] for n, r in rows.items() if n != "torch" and r["passed"])
        line = [f"{label:44s} cuBLAS {cublas * 1e3:7.1f} us"]
        for impl in impls:
            r = rows[impl.name]
            if not r["passed"]:
                line.append(f"{impl.name}: FAILED {r.get('reason')}")
                continue
            ratios[impl.name].append(cublas / r["median_ms"])
            best_of[impl.name].append(fastest / r["median_ms"])
            line.append(f"{impl.name[:40]} {cublas / r['median_ms']:.2f}")
        print(" | ".join(line), flush=True)


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


print(f"{len(shapes)} shapes, seeds {seeds}")
for impl in impls:
    print(f"{impl.name:60s} vs cuBLAS geomean {geomean(ratios[impl.name]):.3f} min {min(ratios[impl.name], default=0):.3f}"
          f"  vs fastest geomean {geomean(best_of[impl.name]):.3f}  passed {len(ratios[impl.name])}/{len(shapes)}")
