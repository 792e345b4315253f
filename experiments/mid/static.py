"""The `mid` kernel (20_mid.cu, beside this file) built for sm_90a without a GPU: registers, spills
and the schedule figures ptxas wrote (FFMA register-bank conflicts per FFMA, main-loop
instructions and stall cycles; cuda/sass.schedule), one line of JSON each. A screen before the
GPU times them.

Usage (repository root): python experiments/mid/static.py '{"BM": 128}' '{"PSUM": 0}' ...
(each argument: macros changed from the rung's own, 64×64, BK 16, 4 stages, PSUM 1, VEC 4, 4 blocks).
"""
import json
import sys
from pathlib import Path

from gemmlab.cuda import sass
from gemmlab.cuda.compiler import compile_source

SOURCE = Path(__file__).resolve().parent / "20_mid.cu"
OWN = {"BM": 64, "BN": 64, "BK": 16, "STAGES": 4, "PSUM": 1, "VEC": 4, "MIN_BLOCKS": 4}
for text in sys.argv[1:] or ["{}"]:
    defines = OWN | json.loads(text)
    built = compile_source(str(SOURCE), "sm_90a", defines)
    res = built.resources["mid"]
    figures = sass.schedule(built.cubin)["mid"]
    print(json.dumps({"knobs": defines, "threads": (defines["BM"] // 8) * (defines["BN"] // 8),
                      "regs": res.registers, "spills": res.spills, **figures}), flush=True)
