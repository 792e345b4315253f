"""The schedule figures (gemmlab.cuda.sass.schedule) of knob variants of a rung's launch 0,
compiled for sm_90a with this machine's NVRTC (use the GPU's: 13.0 reproduces the H200's
cubins), fewest FFMA bank conflicts first. J_OUTER 4-8 and FMA_SWAP need orders.patch applied.

Usage: python search.py 'bigtile:{"J_OUTER": 2}' 'splitk:{"BK": 16, "FETCH_BA": 1}' ...  (from the repository root)
"""
import json
import sys

from gemmlab import registry
from gemmlab.cuda import sass

rows = []
for arg in sys.argv[1:]:
    rung, text = arg.split(":", 1)
    launch = registry.get(rung).launches[0].with_defines(json.loads(text))
    module = launch.compile("sm_90a")
    row = {"variant": arg, "registers": module.resources[launch.entry].registers,
           **sass.schedule(module.cubin)[launch.entry]}
    rows.append(row)
    print(json.dumps(row), flush=True)
print("fewest conflicts first:")
for r in sorted(rows, key=lambda r: r["FFMA bank conflicts"]):
    print(f"{r['FFMA bank conflicts']:.4f} stall cycles {r['loop stall cycles']} LDS 4+ {r['loop LDS stalled 4+']}"
          f"  regs {r['registers']}  {r['variant']}")
