"""Where a Python `solve` spends its host time: each layer of `default`'s call timed on the host
alone, with the GPU kept busy ahead of it (a long spin first), so that no launch waits on the GPU.

Layers: problem.validate; the registry's `solve` (validate, the device check, then the solver);
`CudaSolver.__call__` (the plan's key and lookup, then each prepared launch); the prepared launches
alone (`Prepared.run`, one cuLaunchKernelEx each); and `torch.matmul(out=)` beside them.

Usage (repository root, on a GPU): python experiments/host-overhead/breakdown.py [MxNxK ...]
"""
import sys
import time

import torch

from gemmlab import problem, registry, runtime

runtime.configure()
REPS = 200


def host_us(fn) -> float:
    """Median over 5 rounds of the host time per call of `fn`, REPS calls queued behind a spin."""
    rounds = []
    for _ in range(5):
        torch.cuda.synchronize()
        torch.cuda._sleep(2_000_000_000 // 1000 * 50)  # ~50 ms of spin: the queue never drains
        start = time.perf_counter()
        for _ in range(REPS):
            fn()
        rounds.append((time.perf_counter() - start) / REPS * 1e6)
        torch.cuda.synchronize()
    return sorted(rounds)[2]


impl = registry.get("default")
shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[1:]] or [
    (1024, 1024, 1024), (2048, 1024, 2048), (2048, 2048, 2048)]
for m, n, k in shapes:
    a = torch.randn(m, n, device="cuda")
    b = torch.randn(n, k, device="cuda")
    c = torch.empty(m, k, device="cuda")
    impl.solve(a, b, c, m, n, k)
    torch.cuda.synchronize()
    solver = impl._solve
    plan = next(iter(p for key, p in solver._plans.items() if key[:6] == (a.data_ptr(), b.data_ptr(),
                                                                         c.data_ptr(), m, n, k)))
    figures = {
        "validate": host_us(lambda: problem.validate(a, b, c, m, n, k)),
        "registry solve": host_us(lambda: impl.solve(a, b, c, m, n, k)),
        "CudaSolver call": host_us(lambda: solver(a, b, c, m, n, k)),
        "prepared runs": host_us(lambda: [p.run() for p in plan]),
        "one prepared run": host_us(lambda: plan[-1].run()),
        "torch.matmul": host_us(lambda: torch.matmul(a, b, out=c)),
    }
    # The plan again, prepared for a side stream (its launches name the stream they were prepared
    # on), then captured: what a graph replay of a cached plan would cost instead of its launches.
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        captured = solver._plan(a, b, c, m, n, k)
    side.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        for p in captured:
            p.run()
    figures["graph replay"] = host_us(graph.replay)
    want = c.clone()
    impl.solve(a, b, want, m, n, k)
    c.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    figures["graph bitwise equal"] = float(torch.equal(c, want))
    print(f"{m}x{n}x{k}: {len(plan)} launches; " + ", ".join(f"{k2} {v:.1f} us" for k2, v in figures.items()),
          flush=True)
