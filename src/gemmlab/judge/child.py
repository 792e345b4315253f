"""The solution's process: ``python -m gemmlab.judge.child --file F --framework X --channel
@NAME``, which the confine step connects and hands over as ``fd:N``.

This process runs the user's code, so it decides nothing. It maps the
judge's buffers, loads the solution, and on each request calls ``solve`` on
views of the buffers the judge names, snapshots C on the caller's stream as
soon as ``solve`` returns, waits for the device, and answers with how long
the call took and whether C's tensor object is still the one it was given.
The judge made the inputs, keeps their pristine copies, reads what was
written, and times the call from outside.

Between a request's arrival and the answer, nothing runs that the solution's
Python could have replaced, except ``solve`` itself: every helper is a
C-level callable bound before the import (struct's decoder, torch's C methods
with torch-function and dispatch modes switched off, the CUDA driver's
functions, a memoryview of the mapping) and held only in the locals of a
serving loop that is already running when it imports the solution, never in a
module global or a Python function whose code could be swapped. The snapshot goes through the harness's own view of the bytes, not
the tensor object the solution was given. A solution that rewrites a running
frame's locals (Python 3.13+), or the channel itself, can still change what
this process reports: the judge's own clock and its own reads of the buffers
bound that (timing.py, guards.py).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time

from .. import runtime

runtime.configure()

import torch  # noqa: E402

from .arena import open_in_child  # noqa: E402
from .protocol import MAX_TEXT, MAX_WORD, OP_EXIT, REQUEST  # noqa: E402
from .tracebacks import format_user_error, user_frames  # noqa: E402
from .userfile import load, load_library  # noqa: E402

#: What `c_object` reports: C's tensor object unchanged, its storage replaced, or changed in place.
C_SAME, C_STORAGE, C_CHANGED = 0, 1, 2


def _cuda_helpers(arena: torch.Tensor) -> tuple:
    """The GPU's helpers, every one a CUDA driver function (C, from cuda.bindings), bound now."""
    from cuda.bindings import driver as cu

    torch.cuda.synchronize()  # the runtime has made its primary context current on this thread
    ctx = cu.cuCtxGetCurrent()[1]
    stream = cu.CUstream(torch.cuda.current_stream().cuda_stream)
    flags = cu.CUevent_flags.CU_EVENT_DEFAULT
    window = (getattr(cu.CUstreamAttrID, "CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW", None)
              or getattr(cu.CUstreamAttrID, "CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW", None))
    return (ctx, stream, cu.cuEventCreate(flags)[1], cu.cuEventCreate(flags)[1], cu.cuCtxSetCurrent,
            cu.cuEventRecord, cu.cuEventElapsedTime, cu.cuCtxSynchronize, cu.cuMemcpyDtoDAsync,
            cu.CUdeviceptr, arena.data_ptr(), cu.cuCtxResetPersistingL2Cache, cu.cuCtxGetLimit,
            cu.CUlimit.CU_LIMIT_PERSISTING_L2_CACHE_SIZE, cu.cuStreamGetAttribute, window,
            cu.cuGetErrorName, cu.cuGetErrorString)


def _cuda_error(helpers: tuple, err) -> str:
    """A CUDA driver error as the user reads it (an illegal address, say)."""
    name, text = helpers[-2](err)[1], helpers[-1](err)[1]
    decode = lambda raw: raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)  # noqa: E731
    return f"CUDA error: {decode(text)} ({decode(name)})"


def _json_str(text: str) -> bytes:
    """A JSON string literal of `text` (ASCII, every control character escaped)."""
    return json.dumps(text, ensure_ascii=True).encode("ascii")


def _bound() -> tuple:
    """The C-level callables every serving loop uses, bound now (before the solution exists)."""
    T = torch._C.TensorBase
    # Constants too: a module global the solution rebinds to an object with its own __eq__ would
    # run its code on the next comparison.
    return (time.perf_counter, os._exit, int.__index__, tuple, float, min, REQUEST.unpack,
            torch._C.DisableTorchFunction, torch._C._DisableTorchDispatch, T.narrow, T.view, T.copy_,
            T.data_ptr, T.size, T.stride, T.storage_offset,
            (REQUEST.size, OP_EXIT, MAX_WORD, C_SAME, C_STORAGE, C_CHANGED))


def _load(args, frames, send, exit_now):
    """Import the solution (from inside a serving loop's running frame); answer ready or its error."""
    try:
        solve = load_library(args.library) if args.library else load(args.file, args.framework)[1]
    except BaseException as exc:
        send(b'{"kind":"load_error","message":%s}' % _json_str(format_user_error(exc, frames, MAX_TEXT)))
        exit_now(0)
    send(b'{"kind":"ready"}')
    return solve


def _leave(exit_now) -> None:
    for out in (sys.stdout, sys.stderr):
        try:
            out.flush()
        except BaseException:
            pass
    # Not sys.exit: a thread the solution left running must not hold the process.
    exit_now(0)


def _raised(exc: BaseException, seq: int, frames) -> bytes:
    return b'{"kind":"raised","seq":%d,"error":%s}' % (seq, _json_str(format_user_error(exc, frames, MAX_TEXT)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", required=True)
    ap.add_argument("--framework", required=True)
    ap.add_argument("--library", default=None)
    ap.add_argument("--staged", action="store_true")
    ap.add_argument("--channel", required=True)
    args = ap.parse_args()
    bound = _bound()
    sock = socket.socket(fileno=int(args.channel.removeprefix("fd:")))  # the confine step connected it
    sock.set_inheritable(False)
    sock.send(b'{"kind":"started"}')
    packet, fds, _, _ = socket.recv_fds(sock, 1 << 22, 4)
    if not packet:
        os._exit(0)
    arena, mapped = open_in_child(json.loads(packet)["arena"], fds)
    frames = user_frames(args.file)
    # Each loop loads the solution itself: its frame is running before any solution code exists,
    # so its code cannot be swapped; every call it makes between a request and its answer is C.
    if args.staged:
        _serve_staged(args, sock, arena, frames, bound, runtime.default_device())
    elif arena.device.type == "cuda":
        _serve_cuda(args, sock, arena, frames, bound, _cuda_helpers(arena))
    else:
        _serve_cpu(args, sock, arena, memoryview(mapped), frames, bound)


def _serve_cpu(args, sock, arena, own, frames, bound) -> None:
    """The CPU: the snapshot goes through `own`, a memoryview of the mapping (no torch)."""
    (clock, exit_now, _, tuple_, float_, _, unpack, no_torch_function, no_dispatch, narrow, view, _,
     data_ptr, size_of, stride_of, offset_of, consts) = bound
    size, op_exit, _, c_same, c_storage, c_changed = consts
    send, recv, kept = sock.send, sock.recv, []  # every view stays referenced: see _serve_cuda
    solve = _load(args, frames, send, exit_now)
    while True:
        packet = recv(size)
        if not packet:  # the judge is gone: nothing left to do
            exit_now(0)
        op, seq, null, m, n, k, off_a, off_b, off_c, off_s = unpack(packet)
        if op == op_exit:
            _leave(exit_now)
        try:
            with no_torch_function(), no_dispatch():
                a, b, c = (view(narrow(arena, 0, off_a, m * n), m, n), view(narrow(arena, 0, off_b, n * k), n, k),
                           view(narrow(arena, 0, off_c, m * k), m, k))
                kept.append((a, b, c))
                before = (data_ptr(c), tuple_(size_of(c)), tuple_(stride_of(c)), offset_of(c))
            t0 = clock()
            if not null:
                solve(a, b, c, m, n, k)
            ms = (clock() - t0) * 1e3
            own[4 * off_s:4 * (off_s + m * k)] = own[4 * off_c:4 * (off_c + m * k)]  # the snapshot
            with no_torch_function(), no_dispatch():
                after = (data_ptr(c), tuple_(size_of(c)), tuple_(stride_of(c)), offset_of(c))
            # set_() to other memory moves data_ptr; t_(), a reshape or an offset change do not.
            c_object = c_same if after == before else c_storage if after[0] != before[0] else c_changed
            send(b'{"kind":"returned","seq":%d,"ms":%a,"c_object":%d,"l2_persisting":0,"l2_window":0}'
                 % (seq, float_(ms), c_object))
        except BaseException as exc:  # SystemExit from a solution is still just its failure
            send(_raised(exc, seq, frames))


def _serve_cuda(args, sock, arena, frames, bound, helpers) -> None:
    """A GPU: CUDA events, the snapshot and the waits are CUDA driver calls on the caller's stream."""
    (clock, exit_now, as_int, tuple_, float_, min_, unpack, no_torch_function, no_dispatch, narrow, view, _,
     data_ptr, size_of, stride_of, offset_of, consts) = bound
    size, op_exit, max_word, c_same, c_storage, c_changed = consts
    (ctx, stream, ev_start, ev_end, set_ctx, record, elapsed, sync, dev_copy, dev_ptr, base, reset_l2,
     get_limit, l2_limit, get_attr, window, _, _) = helpers
    # Dropping a view handed to solve could run a finaliser the solution put on torch.Tensor,
    # between calls: every one stays referenced.
    send, recv, kept = sock.send, sock.recv, []
    solve = _load(args, frames, send, exit_now)
    while True:
        packet = recv(size)
        if not packet:
            exit_now(0)
        op, seq, null, m, n, k, off_a, off_b, off_c, off_s = unpack(packet)
        if op == op_exit:
            _leave(exit_now)
        try:
            with no_torch_function(), no_dispatch():
                a, b, c = (view(narrow(arena, 0, off_a, m * n), m, n), view(narrow(arena, 0, off_b, n * k), n, k),
                           view(narrow(arena, 0, off_c, m * k), m, k))
                kept.append((a, b, c))
                before = (data_ptr(c), tuple_(size_of(c)), tuple_(stride_of(c)), offset_of(c))
            errors = [sync()[0]]
            reset_l2()  # no line starts the call pinned in L2 (an error: a GPU without persistence)
            errors.append(record(ev_start, stream)[0])
            t0 = clock()
            if not null:
                solve(a, b, c, m, n, k)
            host_ms = (clock() - t0) * 1e3
            errors.append(set_ctx(ctx)[0])  # a solution may have left another context current
            errors.append(record(ev_end, stream)[0])
            # The snapshot: what C held, on the caller's stream, when solve returned.
            errors.append(dev_copy(dev_ptr(base + 4 * off_s), dev_ptr(base + 4 * off_c), 4 * m * k, stream)[0])
            errors.append(sync()[0])
            err, ms = elapsed(ev_start, ev_end)
            errors.append(err)
            with no_torch_function(), no_dispatch():
                after = (data_ptr(c), tuple_(size_of(c)), tuple_(stride_of(c)), offset_of(c))
            c_object = c_same if after == before else c_storage if after[0] != before[0] else c_changed
            failed = [e for e in errors if as_int(e) != 0]
            if failed:
                raise RuntimeError(_cuda_error(helpers, failed[0]))
            err, limit = get_limit(l2_limit)  # after the call: a report, not a timing
            persisting = as_int(limit) if as_int(err) == 0 else 0
            err, value = get_attr(stream, window) if window is not None else (1, None)
            in_window = as_int(value.accessPolicyWindow.num_bytes) if as_int(err) == 0 else 0
            if not 0.0 <= ms < 1e9:
                raise RuntimeError(f"CUDA events gave an impossible time ({ms!r} ms; host clock {host_ms:.3f})")
            send(b'{"kind":"returned","seq":%d,"ms":%a,"c_object":%d,"l2_persisting":%d,"l2_window":%d}'
                 % (seq, float_(ms), c_object, min_(persisting, max_word), min_(in_window, max_word)))
        except BaseException as exc:
            send(_raised(exc, seq, frames))


def _serve_staged(args, sock, arena, frames, bound, device) -> None:
    """Under a wrapper tool (compute-sanitizer: a diagnosis, not a timing): the judge shares host
    memory only, and the solution gets private buffers of exactly its sizes, copied through torch."""
    clock, exit_now, unpack, copy = bound[0], bound[1], bound[6], bound[11]
    size, op_exit = bound[-1][:2]
    send, recv, kept = sock.send, sock.recv, []
    solve = _load(args, frames, send, exit_now)
    while True:
        packet = recv(size)
        if not packet:
            exit_now(0)
        op, seq, null, m, n, k, off_a, off_b, off_c, off_s = unpack(packet)
        if op == op_exit:
            _leave(exit_now)
        dims = ((off_a, m, n), (off_b, n, k), (off_c, m, k))
        try:
            shared = [arena.narrow(0, off, r * c).view(r, c) for off, r, c in dims]
            private = [copy(torch.empty((r, c), dtype=torch.float32, device=device), t)
                       for t, (_, r, c) in zip(shared, dims, strict=True)]
            kept.append(private)
            t0 = clock()
            if not null:
                solve(*private, m, n, k)
            ms = (clock() - t0) * 1e3
            copy(arena.narrow(0, off_s, m * k).view(m, k), private[2])
            for t, p in zip(shared, private, strict=True):
                copy(t, p)
            if device.type == "cuda":
                torch.cuda.synchronize()
            send(b'{"kind":"returned","seq":%d,"ms":%a,"c_object":0,"l2_persisting":0,"l2_window":0}' % (seq, ms))
        except BaseException as exc:
            send(_raised(exc, seq, frames))


if __name__ == "__main__":
    main()
