"""Compile the strict-FP32 launches of `default`, `splitk` and `bigtile` once, in this process,
into the cache named by $GEMMLAB_CACHE, and print for each its cubin digest and ptxas's
register line (run it in fresh processes with empty caches to see whether builds agree)."""
import hashlib

from gemmlab import registry
from gemmlab.cuda.compiler import nvrtc_version

print("nvrtc", nvrtc_version())
seen = set()
for name in ("default", "splitk", "bigtile"):
    for launch in registry.get(name).launches:
        if launch.kernel.label in seen:
            continue
        seen.add(launch.kernel.label)
        m = launch.compile("sm_90a")
        regs = next((x.split(":", 1)[1].strip() for x in m.log.splitlines() if "Used" in x), "?")
        print(hashlib.sha256(m.cubin).hexdigest()[:12], regs, launch.kernel.label, flush=True)
