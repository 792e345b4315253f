"""The schedule figures (gemmlab.cuda.sass.schedule: FFMA bank conflicts, the main loop's
instructions, stall cycles and shared loads stalled 4+ cycles) of the tune record's candidates of
one shape class, beside the time the record measured, as JSON lines. Run it with the NVRTC the
record was timed with (13.0 for the H200; `same_cubin` says whether this machine builds the cubin
the record timed). Usage: python loop_model.py [CLASS] (default many-waves-tiled, large-tiled when this was written; either
name reads), from the repository root.
"""
import hashlib
import json
import sys
from pathlib import Path

from gemmlab.cuda import sass
from gemmlab.policy import spaces
from gemmlab.policy.classes import current_key


def main() -> None:
    cls = current_key(sys.argv[1] if len(sys.argv) > 1 else "many-waves-tiled")
    record = json.loads(Path("src/gemmlab/tuned/nvidia-h200.json").read_text())["classes"][cls]
    for cand in record["candidates"]:
        if cand["verdict"] != "timed" or cand["rung"] not in ("bigtile", "splitk"):
            continue
        space = spaces.space(cand["rung"])
        launch = space.build(cand["launch"], space.knobs_of(cand["knobs"]))
        cubin = launch.compile("sm_90a").cubin
        print(json.dumps({"rung": cand["rung"], "knobs": cand["knobs"], "ms": round(cand["median_ms"], 4),
                          "same_cubin": hashlib.sha256(cubin).hexdigest()[:16] == cand.get("cubin"),
                          **sass.schedule(cubin)[launch.entry]}), flush=True)


if __name__ == "__main__":
    main()
