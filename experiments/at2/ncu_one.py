"""Run bigtile's launch 0 with the knobs given (JSON) three times at the performance shape, for ncu:
ncu -k bigtile --launch-skip 2 --launch-count 1 --section ... python3 ncu_one.py '{"A_T": 2}'"""
import dataclasses
import json
import sys

import torch

from gemmlab import problem, registry, runtime
from gemmlab.cuda.dispatch import CudaSolver
from gemmlab.judge.cases import uniform

runtime.configure()
launch = dataclasses.replace(registry.get("bigtile").launches[0].with_defines(json.loads(sys.argv[1])), when=None)
solve = CudaSolver((launch,))
m, n, k = problem.PERF_SHAPE
dev = torch.device("cuda")
a, b, c = uniform((m, n), 1, dev), uniform((n, k), 2, dev), torch.empty(m, k, device=dev)
for _ in range(3):
    solve(a, b, c, m, n, k)
torch.cuda.synchronize()
print(launch.kernel.label)
