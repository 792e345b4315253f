"""CuTe DSL: a LeetGPU `.py` whose ``solve`` is a ``@cute.jit`` function on `cute.Tensor`s.

LeetGPU's CuTe DSL format: ``import cutlass, cutlass.cute as cute`` and ``@cute.jit def
solve(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor, M, N, K)`` with A, B and C on the GPU.
`adapt` turns it into a solve on torch tensors: it compiles ``solve`` once with `cute.compile`
(before anything is timed) on tensors whose layouts are dynamic, as torch's are at run time, so
the one compiled function serves every shape; M, N and K are dynamic `Int32`s. A parameter
annotated `cutlass.Constexpr` is compiled per value instead, on the call that first needs it.
Each call then converts the three tensors (DLPack, no copy; 16-byte aligned) and runs the
compiled function on the caller's stream.

A ``solve`` that is a plain Python function (calling ``@cute.jit`` functions itself, as LeetGPU
also runs) is called with the same `cute.Tensor` views; it is called once on a small problem of
the judge's while it loads (`prime`), so that the DSL's JIT compile, cached for the dynamic
layouts every later call has, is done before any judged call.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable

#: The target CuTe DSL compiles for where no GPU says which (it would assume sm_100a).
CPU_ARCH = "sm_90a"
#: The little problem `solve` is compiled on (its layouts are dynamic: any shape runs after).
PRIMING_SHAPE = (16, 16, 16)


class CuteError(RuntimeError):
    """The file is not a CuTe DSL solve (its `solve` is not `@cute.jit`), or it does not compile."""


def is_jit(fn) -> bool:
    """Whether `fn` is a CuTe DSL JIT function (the DSL marks what its decorators return)."""
    return callable(fn) and hasattr(fn, "_dsl_cls")


def static_dims(fn) -> tuple[int, ...]:
    """Which of M, N, K (positions 3–5) are annotated Constexpr: those are compiled per value."""
    import cutlass

    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return ()
    out = []
    for i, p in enumerate(params[3:6]):
        ann = p.annotation
        if ann is cutlass.Constexpr or getattr(ann, "__origin__", None) is cutlass.Constexpr:
            out.append(i)
    return tuple(out)


def _view(t):
    """A row-major torch tensor as a `cute.Tensor` of the layout `solve` was compiled for: dynamic
    shape and row stride, unit stride along the last dimension.

    The leading dimension is named, not deduced: the DSL deduces it from the strides, and a 1×1 C
    (LeetGPU's second example) has stride 1 in both, which it refuses, while a K = 1 operand (3×1,
    strides (1, 1)) it takes as column-major, a layout the compiled function was not built for.
    """
    from cutlass.cute.runtime import from_dlpack

    return from_dlpack(t, assumed_align=16).mark_layout_dynamic(leading_dim=t.dim() - 1)


def compile_solve(fn, device) -> Callable:
    """``fn`` compiled on dynamic layouts for the priming shape; raises CuteError on a compile error."""
    import cutlass.cute as cute
    import torch

    m, n, k = PRIMING_SHAPE
    a, b, c = (torch.zeros(r, s, dtype=torch.float32, device=device) for r, s in ((m, n), (n, k), (m, k)))
    try:
        return cute.compile(fn, _view(a), _view(b), _view(c), m, n, k)
    except Exception as exc:  # the DSL's own message says what in the file is wrong
        raise CuteError(f"cute.compile failed: {type(exc).__name__}: {exc}") from exc


def adapt(fn, device) -> Callable:
    """A solve(a, b, c, M, N, K) on torch tensors that runs `fn` compiled; compiled now."""
    import cutlass.cute as cute

    if not callable(fn):
        raise CuteError("solve is not a function (LeetGPU's format: @cute.jit def solve(A: cute.Tensor, "
                        "B, C, M, N, K))")
    views: dict[tuple, object] = {}

    def view(t):
        # The same buffer at the same shape is the same view (a layout and a pointer, no data).
        key = (t.data_ptr(), tuple(t.shape), tuple(t.stride()))
        v = views.get(key)
        if v is None:
            if t.data_ptr() % 16:
                raise CuteError("CuTe DSL tensors here are 16-byte aligned, and this one is not")
            v = views[key] = _view(t)
        return v

    if not is_jit(fn):
        def plain(a, b, c, m, n, k):
            fn(view(a), view(b), view(c), m, n, k)

        prime(plain, device)
        return plain
    static = static_dims(fn)
    compiled: dict[tuple, Callable] = {}
    if not static:
        compiled[()] = compile_solve(fn, device)

    def solve(a, b, c, m, n, k):
        key = tuple((m, n, k)[i] for i in static)
        run = compiled.get(key)
        if run is None:
            run = compiled[key] = cute.compile(fn, view(a), view(b), view(c), m, n, k)
        run(view(a), view(b), view(c), m, n, k)

    return solve


def prime(solve, device) -> None:
    """One untimed, unjudged call on private buffers of `PRIMING_SHAPE`, for the JIT compile."""
    import torch

    m, n, k = PRIMING_SHAPE
    a, b, c = (torch.zeros(r, s, dtype=torch.float32, device=device) for r, s in ((m, n), (n, k), (m, k)))
    solve(a, b, c, m, n, k)
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def check_compiles(path, fn) -> None:
    """On a machine without a GPU: compile `fn` for CPU_ARCH on host tensors (nothing runs)."""
    import torch

    os.environ.setdefault("CUTE_DSL_ARCH", CPU_ARCH)
    if not is_jit(fn):
        return  # a Python solve compiles what it calls when it runs, which needs a GPU
    if static_dims(fn):
        return  # compiled per shape at run time: nothing to compile without one
    compile_solve(fn, torch.device("cpu"))
