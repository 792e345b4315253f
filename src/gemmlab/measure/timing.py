"""The one timing loop: implementations interleaved call by call, each call timed on its own.

On a GPU every call sits between its own pair of CUDA events, and the calls of
every implementation alternate within each round, so clock and thermal drift fall
on all of them alike. Without a GPU the host clock times each call instead.
bench, the judge's in-process baseline and the tuner all time through here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

#: At small shapes a call's host side (Python, argument checks, the launch itself) can take
#: longer than its kernels: the GPU would then idle between the start event and the kernel,
#: and the host's time be counted as the GPU's. So there, each timed call is queued behind a
#: spin of about a millisecond on the GPU (`torch.cuda._sleep`), long enough for the host to
#: enqueue the start event, the call and the end event before the GPU reaches them.
QUEUE_AHEAD_CYCLES = 2_000_000


def time_interleaved(
    calls: dict[str, Callable[[], None]],
    outputs: dict[str, torch.Tensor],
    warmup: int,
    iters: int,
    gpu: bool,
    before_each: Callable[[], object] | None = None,
    progress: Callable[[str], None] | None = None,
    queue_ahead: bool = False,
) -> tuple[dict[str, list[float]], dict[str, str]]:
    """(milliseconds per call, error per call that failed its warm-up).

    Each call is warmed up; one that raises is dropped, with its error. The
    outputs of the others are poisoned, so what is judged afterwards was
    written by the timed calls. Then every round calls each in turn (each
    round starting one further along the list), on a GPU
    between its own pair of CUDA events, else with the host clock. With
    ``queue_ahead`` (small shapes, `stats.is_small`) each GPU call is queued behind a
    short spin, so that its events time the GPU's work and not the host's.
    """
    import torch

    from ..reference import poison_

    errors: dict[str, str] = {}
    for name, call in calls.items():
        if progress:
            progress(f"warm-up {name}")
        try:
            for _ in range(warmup):
                call()
            if gpu:
                torch.cuda.synchronize()
        except Exception as exc:
            errors[name] = f"{type(exc).__name__}: {exc}"
    live = {name: call for name, call in calls.items() if name not in errors}
    for name in live:
        poison_(outputs[name])
    marks: dict[str, list] = {name: [] for name in live}
    names = list(live)
    for it in range(iters):
        if progress:
            progress(f"timed round {it + 1}/{iters}")
        # Each round starts one further along: every implementation takes every place in the
        # order equally often. On the H200 the call right after cuBLAS's read 1.5–2.4 % slower than
        # the same kernel further on (experiments/small-shaped), a bias a fixed order gives to one.
        shift = it % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            call = live[name]
            if before_each is not None:
                before_each()
            if gpu:
                if queue_ahead:
                    torch.cuda._sleep(QUEUE_AHEAD_CYCLES)
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                call()
                end.record()
                marks[name].append((start, end))
            else:
                t0 = time.perf_counter()
                call()
                marks[name].append((time.perf_counter() - t0) * 1e3)
    if gpu:
        torch.cuda.synchronize()
        return {name: [s.elapsed_time(e) for s, e in m] for name, m in marks.items()}, errors
    return marks, errors
