"""torch.matmul (cuBLAS FP32, TF32 off) three times at the performance shape, for ncu."""
import torch

from gemmlab import problem
from gemmlab.judge.cases import uniform
from gemmlab.reference import strict_fp32

m, n, k = problem.PERF_SHAPE
dev = torch.device("cuda")
a, b, c = uniform((m, n), 1, dev), uniform((n, k), 2, dev), torch.empty(m, k, device=dev)
with strict_fp32():
    for _ in range(3):
        torch.matmul(a, b, out=c)
torch.cuda.synchronize()
