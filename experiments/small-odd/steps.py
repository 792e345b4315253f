"""Each kernel of one `default` call, and of torch.matmul, three times per shape, for ncu to time
one by one (ncu --metrics gpu__time_duration.sum --clock-control none python steps.py [MxNxK ...]).
Shapes: those given, else the small and medium ones this folder's README reports."""
import sys

import torch

from gemmlab import registry, runtime
from gemmlab.judge.cases import uniform

runtime.configure()
torch.backends.cuda.matmul.allow_tf32 = False
dev = torch.device("cuda")
impl = registry.get("default")
SHAPES = [tuple(int(x) for x in arg.split("x")) for arg in sys.argv[1:]] or [
    (1024, 1024, 1024), (1023, 1023, 1023), (2048, 2048, 2048), (2047, 2047, 2047)]
for m, n, k in SHAPES:
    a, b = uniform((m, n), 1, dev, -1, 1), uniform((n, k), 2, dev, -1, 1)
    c = torch.empty(m, k, device=dev)
    for _ in range(3):
        torch.cuda.nvtx.range_push(f"default {m}x{n}x{k}")
        impl.solve(a, b, c, m, n, k)
        torch.cuda.nvtx.range_pop()
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
