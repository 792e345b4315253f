"""Which step of a first `solve` invalidates a caller's graph capture (GPU; seconds).

A call made for the first time inside the caller's capture (torch's default, global mode) plans
there: validate, select, scratch, split-K counters, module load, prepare. Each step is run here
inside one capture on a side stream, and the capture's status printed after it; the first step
after which it is not "active" is the one that broke it.

Usage: python experiments/capture/first_call.py [RUNG]   (default small)
"""
import sys

import torch
from cuda.bindings import runtime as rt

from gemmlab import problem, registry
from gemmlab.cuda.dispatch import Call

name = sys.argv[1] if len(sys.argv) > 1 else "small"
impl = registry.get(name)
solver = impl._solve
m, n, k = (4, 3000, 300) if name == "thin" else (200, 3000, 200)
a = torch.randn(m, n, device="cuda")
b = torch.randn(n, k, device="cuda")
c = torch.empty(m, k, device="cuda")
impl.can_run_on(a.device)
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())


def status(what: str) -> None:
    err, st = rt.cudaStreamIsCapturing(side.cuda_stream)
    print(f"{what:28s} {err.name} {st.name}", flush=True)


with torch.cuda.stream(side):
    graph = torch.cuda.CUDAGraph()
    graph.capture_begin()
    status("capture_begin")
    try:
        problem.validate(a, b, c, m, n, k)
        status("validate")
        spec = solver.select(a, b, c, m, n, k)
        status(f"select ({spec.name})")
        ws = solver.workspace(spec.workspace_bytes(m, n, k), a.device)
        status("workspace")
        runs = spec.kernel_calls(Call(a, b, c, m, n, k), ws)
        status("kernel calls (counters)")
        for run in runs:
            kernel = solver.load(run.kernel)
            status(f"load {run.kernel.entry}")
    except Exception as e:  # noqa: BLE001 - what broke is the finding
        print("raised:", type(e).__name__, str(e)[:300])
    finally:
        try:
            graph.capture_end()
        except Exception as e:  # noqa: BLE001
            print("capture_end:", type(e).__name__, str(e)[:200])
