"""The next tune's bigtile and splitk candidates at one shape, built side by side
(tune.search.precompile) with this machine's NVRTC, and each one's registers, spills and schedule
figures (gemmlab.cuda.sass.schedule), as JSON lines: what `gemmlab tune` will time, seen from
the SASS before any GPU time (run with NVRTC 13.0 to see the H200's builds).

Usage: python next_tune.py [M N K]   (default: the performance shape), from the repository root.
"""
import json
import sys
import time

from gemmlab import problem
from gemmlab.cuda import sass
from gemmlab.tune import search

shape = tuple(int(x) for x in sys.argv[1:4]) if len(sys.argv) > 3 else problem.PERF_SHAPE
cands, _ = search.plan(["bigtile", "splitk"], shape)
t0 = time.perf_counter()
built = search.precompile(cands, "sm_90a")
print(json.dumps({"kernels": built, "seconds_side_by_side": round(time.perf_counter() - t0, 1)}), flush=True)
for cand in cands:
    if cand.verdict:
        continue
    module = cand.built.kernel.compile("sm_90a")
    res = module.resources[cand.built.kernel.entry]
    print(json.dumps({"rung": cand.rung, "launch": cand.launch, "knobs": cand.knobs, "registers": res.registers,
                      "spills": res.spills, **sass.schedule(module.cubin)[cand.built.kernel.entry]}), flush=True)
