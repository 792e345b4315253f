"""TileLang: a `.py` whose ``solve(a, b, c, M, N, K)`` runs TileLang kernels on torch tensors.

LeetGPU has no TileLang format yet (users ask for one); the one a competitor expects is its
PyTorch and Triton format: ``solve`` on GPU tensors, writing C. TileLang compiles a kernel
(through nvcc) the first time it is called, which takes seconds: the judge calls ``solve`` once
on a small problem of its own while the solution loads (`prime`), so that compile is neither in
a judged case's budget nor in a timed call. A kernel written for dynamic shapes (`T.dynamic`)
compiles once for every shape; one specialised per shape compiles again at each new shape.
"""

from __future__ import annotations

#: The problem `prime` calls solve on: small, and odd in every side, so a kernel that would
#: only compile for one shape class is at least compiled for the general one.
PRIMING_SHAPE = (67, 45, 53)


def prime(solve, device) -> None:
    """One untimed, unjudged call on private buffers, so TileLang's JIT compile happens now."""
    import torch

    m, n, k = PRIMING_SHAPE
    gen = torch.Generator(device="cpu").manual_seed(0)
    a = torch.rand(m, n, generator=gen).to(device)
    b = torch.rand(n, k, generator=gen).to(device)
    c = torch.empty(m, k, device=device)
    solve(a, b, c, m, n, k)
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def lowered_source(jit_fn, arch: str = "sm_90a") -> str:
    """The CUDA that TileLang generates for a `@tilelang.jit` function (one taking no arguments),
    with its own pass configuration, for `arch`: lowering needs no GPU and no nvcc."""
    import tilelang
    from tilelang import tvm

    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    with tvm.transform.PassContext(opt_level=3, config=dict(jit_fn.pass_configs or {})), target:
        return tilelang.lower(jit_fn.get_tir(), target=target).kernel_source
