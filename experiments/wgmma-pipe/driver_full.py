"""Knob variants of a rung timed inside the whole ladder, as `gemmlab bench` runs it (every
implementation interleaved call by call, 5 warm-ups, 20 timed rounds, seed 7 then 8), so that
they see the bench's conditions: tensor-core calls between long FP32 ones, near 1980 MHz.

Usage: python driver_full.py NAME '{"STREAMK": 1}' ...
"""
import dataclasses
import json
import sys

from gemmlab import registry, runtime
from gemmlab.bench.run import measure

runtime.configure()
base = registry.get(sys.argv[1])
variants = [dataclasses.replace(base, name=text, launches=tuple(x.with_defines(json.loads(text)) for x in base.launches))
            for text in sys.argv[2:]]
for rep in range(2):
    rec = measure(list(registry.IMPLEMENTATIONS) + variants, None, 5, 20, False, 7 + rep)
    for r in rec["results"]:
        if r.get("ratio_vs_cublas_tf32") is not None or r["name"] == "torch":
            print(f"rep {rep} {r['name']:30s} {r['median_ms']:.4f} ms  vs TF32 {r.get('ratio_vs_cublas_tf32') or 0:.3f}"
                  f"  {r['passed']}", flush=True)
    print(rec["clocks_during_timing"], flush=True)
