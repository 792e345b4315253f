"""Why does `default` read slower than the very kernel it runs, timed beside it? (GPU)

In the random records, where `default` ran the same kernel on the same grid as `small` (or `thin`,
`short`, `gemv`, each running small's launch there), its GPU time read 0.15–0.38 µs longer in the
median (seeds 2033–2037, about 100 such points each); in seed 2039 up to 0.7 µs at outputs of a
few thousand (217×118×502: 9.82 against 9.09–9.71 µs; experiments/random-shapes). The plans are
the same (same cubin, grid, scratch size, CUDA graph from the second call), so the difference is
in something that is not the plan. Hypotheses, each an arm here:

1. any second solver of the same kernel reads slower than the first (its own module and graph):
   `small-copy` is a second `small` with its own solver; predicted: within ±0.1 µs of `small`.
2. something in `default`'s entry beyond its launches: a CUDA rung's solve is a CudaSolver of its
   launches and nothing else (registry.Implementation._solve), and its list of 55 is read only
   when a plan is made, so `default-as-small` (default's entry with small's launches) should
   read as `small-copy`; where `default` alone reads slower, its plan differs after all (a grid,
   scratch or module the CPU check at 77638b0 did not see).
3. the order within a round: the rounds rotate (every arm takes every place equally often), so
   none is expected. The order of the warm-ups does not rotate with them: the first arm warmed up
   after torch reads slower at tiny shapes (README, timing); since the first run, each shape
   starts one arm further along.

Each arm is timed as `gemmlab sweep` times a shape (bench.run.measure: interleaved, GPU time,
queue-ahead below 2048³, each result checked against the float64 product), 60 rounds, at shapes
of seed 2039 where `default` ran `small`'s 4-byte launch. One JSON line per shape to OUT.jsonl.
Usage (repository root, on a GPU): python experiments/default-gap/gap.py OUT.jsonl [MxNxK ...]
"""
import dataclasses
import json
import sys

from gemmlab import registry, runtime
from gemmlab.bench.run import measure

SHAPES = ["217x118x502", "14x333x1542", "220x98x460", "21x119x224", "32x155x500", "201x2x406",
          "252x19x181", "56x7648x51", "181x3387x446", "41x1399x3647"]

runtime.configure()
out_path = sys.argv[1]
shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[2:] or SHAPES)]
small, default = registry.get("small"), registry.get("default")


def arms():
    """Fresh copies (a solver keeps each call's plan for the next call at the same operands)."""
    return [dataclasses.replace(default), dataclasses.replace(small),
            dataclasses.replace(small, name="small-copy", chapter=None, step=0, variant_of="small"),
            dataclasses.replace(default, name="default-as-small", launches=small.launches, chapter=None, step=0,
                                variant_of="default")]


with open(out_path, "a") as out:
    for i, shape in enumerate(shapes):
        # Each shape starts one arm further along (as `gemmlab sweep` does): the first arm warmed up
        # after torch reads slower at tiny shapes (README, timing), and the first run (at 3fbacb4)
        # put `default` there at every shape.
        listed = arms()
        rec = measure(listed[i % 4:] + listed[:i % 4], shape, 5, 60, False, 7, energy=())
        rows = {r["name"]: r for r in rec["results"]}
        line = {"shape": shape, "clocks": rec["clocks_during_timing"],
                "results": {n: {"ms": r["median_ms"], "min_ms": r.get("min_ms"), "passed": r["passed"],
                                "kernel": r.get("kernel")} for n, r in rows.items()}}
        out.write(json.dumps(line) + "\n")
        out.flush()
        base = rows["small"]["median_ms"]
        print("x".join(map(str, shape)).ljust(14), " ".join(
            f"{n}={r['median_ms'] * 1e3:.2f}us({(r['median_ms'] - base) * 1e3:+.2f})" for n, r in rows.items()
            if r.get("median_ms")), flush=True)
