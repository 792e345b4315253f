"""Static figures of a strict-FP32 kernel's main loop, from the SASS this machine's NVRTC builds:
instructions, FFMAs, the sum of the instructions' stall fields (the cycles one warp spends
issuing a step, if nothing else waits) and the 2-bank register conflicts per FFMA (banks.py),
for the tune record's candidates of one shape class, beside the time the record measured. Run with the NVRTC the record was timed with (13.0 for
the H200: the cubin digests must match the record's, and the script says where they do not).

Usage: python loop_model.py [CLASS]   (default: large-tiled), from the repository root.
"""
import hashlib
import json
import re
import sys
from pathlib import Path

from gemmlab.cuda import sass
from gemmlab.tune import spaces

sys.path.insert(0, str(Path(__file__).parent))
from banks import conflicts  # noqa: E402

INS = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_.]*)(.*?);\s*/\* (0x[0-9a-f]{16}) \*/")
HI = re.compile(r"^\s*/\* (0x[0-9a-f]{16}) \*/")


def loop_figures(listing: str) -> dict:
    """The longest backward branch's body: instruction count, FFMAs, sum of stall fields."""
    lines = listing.splitlines()
    rows = []
    for i, line in enumerate(lines):
        if (g := INS.match(line)) and (h := HI.match(lines[i + 1])):
            rows.append((int(g.group(1), 16), g.group(3), g.group(4), int(h.group(1), 16)))
    loops = []
    for addr, op, rest, _ in rows:
        t = re.search(r"0x([0-9a-f]+)", rest)
        if op == "BRA" and t and int(t.group(1), 16) < addr:
            loops.append((addr - int(t.group(1), 16), int(t.group(1), 16), addr))
    _, start, end = max(loops)
    body = [r for r in rows if start <= r[0] <= end]
    stalls = sum((hi >> 41) & 0xF for *_, hi in body)
    ffma = sum(op.startswith("FFMA") for _, op, _, _ in body)
    lds4 = sum(op.startswith("LDS") and (hi >> 41) & 0xF >= 4 for _, op, _, hi in body)
    return {"instructions": len(body), "ffma": ffma, "stall_sum": stalls, "lds_stall4": lds4}


def main() -> None:
    cls = sys.argv[1] if len(sys.argv) > 1 else "large-tiled"
    record = json.loads(Path("src/gemmlab/tuned/nvidia-h200.json").read_text())["classes"][cls]
    for cand in record["candidates"]:
        if cand["verdict"] != "timed" or cand["rung"] not in ("bigtile", "splitk"):
            continue
        launch = spaces.space(cand["rung"]).build(cand["launch"], cand["knobs"])
        module = launch.compile("sm_90a")
        digest = hashlib.sha256(module.cubin).hexdigest()[:16]
        listing = sass._dump(module.cubin)
        fig = loop_figures(listing)
        ffma, extra = conflicts(listing, 2)
        print(json.dumps({"rung": cand["rung"], "knobs": cand["knobs"], "ms": round(cand["median_ms"], 4),
                          "same_cubin": digest == cand.get("cubin"), **fig,
                          "stall_per_ffma": round(fig["stall_sum"] / fig["ffma"], 4),
                          "conflicts_per_ffma": round(extra / ffma, 4)}), flush=True)


if __name__ == "__main__":
    main()
