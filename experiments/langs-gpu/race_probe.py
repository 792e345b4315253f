"""Why a second-stream fixture is accepted or rejected: one call, watched from outside.

    python experiments/langs-gpu/race_probe.py FILE [FILE ...]   (on a GPU; one JSON line per file)

For each solution file, loaded as the judge loads it (`userfile.load`) and primed once, a call at
256³ with C poisoned: how long solve took to return on the host, whether C was complete when read
on the caller's stream right after the return (the judge's snapshot), and whether it was complete
after a device-wide synchronisation. A solve that returns after the spin (about 20 ms) waited for
its own work (its framework synchronised); one that returns at once with C complete on the caller's
stream put its work where that stream waits for it (a blocking stream, ordered with the legacy
default stream); only one that returns at once with C incomplete races, which the judge must reject.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

from gemmlab.judge.userfile import load


def probe(path: Path) -> dict:
    framework, solve = load(path)
    m = n = k = 256
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(5)
    a = torch.rand((m, n), device=dev, generator=g) - 0.5
    b = torch.rand((n, k), device=dev, generator=g) - 0.5
    want = (a.double() @ b.double()).float()
    out = {"file": path.name, "framework": framework,
           "caller_stream": hex(torch.cuda.current_stream().cuda_stream)}
    c = torch.empty((m, k), device=dev)
    solve(a, b, c, m, n, k)  # the prime: compiles, loads
    torch.cuda.synchronize()
    c.fill_(float("nan"))
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    solve(a, b, c, m, n, k)
    out["return_ms"] = round(1e3 * (time.perf_counter() - t0), 3)
    snapshot = c.clone()  # on the caller's stream, as the judge's snapshot
    snap_ms = 1e3 * (time.perf_counter() - t0)
    torch.cuda.synchronize()
    out["snapshot_ms"] = round(snap_ms, 3)
    close = dict(rtol=1e-3, atol=1e-3)
    out["complete_at_return"] = bool(torch.allclose(snapshot, want, **close))
    out["complete_after_sync"] = bool(torch.allclose(c, want, **close))
    out["verdict"] = ("its framework waited for its work" if out["return_ms"] > 10 else
                      "ordered with the caller's stream" if out["complete_at_return"] else "a race")
    return out


if __name__ == "__main__":
    for name in sys.argv[1:]:
        try:
            print(json.dumps(probe(Path(name))), flush=True)
        except Exception as exc:  # one file's failure is a line, not the end of the probe
            print(json.dumps({"file": name, "error": f"{type(exc).__name__}: {exc}"}), flush=True)
