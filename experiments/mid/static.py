"""The `mid` kernel's candidates built for sm_90a without a GPU: registers, spills and the
schedule figures ptxas wrote (FFMA register-bank conflicts per FFMA, main-loop instructions and
stall cycles; cuda/sass.schedule), one line of JSON each. A screen before the GPU times them.

Usage (repository root): python experiments/mid/static.py '{"BM": 128}' '{"PSUM": 0}' ...
(each argument: knobs changed on the rung's vec4 launch; none: the rung's own launch).
"""
import json
import sys

from gemmlab import launches
from gemmlab.cuda import sass

base = launches.named("mid", "vec4")
for text in sys.argv[1:] or ["{}"]:
    launch = base.with_defines(json.loads(text))
    built = launch.kernel.compile("sm_90a")
    res = built.resources[launch.entry]
    figures = sass.schedule(built.cubin)[launch.entry]
    print(json.dumps({"knobs": dict(launch.defines), "threads": launch.threads, "regs": res.registers,
                      "spills": res.spills, **figures}), flush=True)
