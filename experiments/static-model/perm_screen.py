"""Schedule figures of fragment-load orders through fetch-order-scratch.patch's FETCH_ORDER knob
(apply the patch first; NVRTC 13.0 reproduces the H200's builds): FETCH_BA's two orders, then
COUNT random others drawn with SEED. One JSON line per order.

Usage: python perm_screen.py SEED COUNT   (from the repository root)
"""
import hashlib
import itertools
import json
import random
import sys

from gemmlab import registry
from gemmlab.cuda import sass

NAMES = "B0 B1 B2 B3 A0 A1".split()
base = registry.get("splitk").launches[0]
known = [(0, 1, 2, 3, 4, 5), (4, 5, 0, 1, 2, 3)]  # B then A (FETCH_BA's order), A then B
rest = [p for p in itertools.permutations(range(6)) if p not in known]
random.Random(int(sys.argv[1])).shuffle(rest)
for order in known + rest[:int(sys.argv[2])]:
    knobs = {"BK": 16, "STAGES": 3, "FETCH_ORDER": 1, **{f"FETCH_O{i}": v for i, v in enumerate(order)}}
    launch = base.with_defines(knobs)
    module = launch.compile("sm_90a")
    res = module.resources[launch.entry]
    print(json.dumps({"order": "".join(NAMES[o] for o in order), "regs": res.registers, "spills": res.spills,
                      "digest": hashlib.sha256(module.cubin).hexdigest()[:12],
                      **sass.schedule(module.cubin)[launch.entry]}), flush=True)
