"""Offline search of bigtile's FMA orders by the bank-conflict model: compile each variant for
sm_90a with this machine's NVRTC (use the GPU's version: 13.0 for the H200, whose cubins it
reproduces digest for digest), and print its loop figures (loop_model.loop_figures) and the
2-bank conflicts per FFMA (banks.conflicts), best first.

Usage: python search.py 'bigtile:{"J_OUTER": 2}' 'splitk:{"BK": 16, "STAGES": 3}' ...
(launch 0 of the rung with those knobs), from the repository root.
"""
import json
import sys

from gemmlab import registry
from gemmlab.cuda import sass

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from banks import conflicts  # noqa: E402
from loop_model import loop_figures  # noqa: E402

rows = []
for arg in sys.argv[1:]:
    rung, text = arg.split(":", 1)
    launch = registry.get(rung).launches[0].with_defines(json.loads(text))
    module = launch.compile("sm_90a")
    listing = sass._dump(module.cubin)
    fig = loop_figures(listing)
    ffma, c2 = conflicts(listing, 2)
    row = {"variant": arg, "registers": module.resources[launch.entry].registers, **fig,
           "conflicts_per_ffma": round(c2 / ffma, 4)}
    rows.append(row)
    print(json.dumps(row), flush=True)
print("best first:")
for r in sorted(rows, key=lambda r: r["conflicts_per_ffma"]):
    print(f"{r['conflicts_per_ffma']:.4f} regs {r['registers']} ins/ffma {r['instructions'] / r['ffma']:.4f}  {r['variant']}")
