"""The baseline as a solution: `torch.matmul` in strict FP32, judged and timed on the CPU through
the same child harness as the solution it is compared with (judge.isolate.cpu_baseline)."""
import torch


def solve(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, M: int, N: int, K: int):
    torch.matmul(a, b, out=c)
