"""Scratch for kernels whose blocks hand work to each other (17_streamk.cu).

A block that passes on a tile's partial sums writes them into its slot of the
call's workspace and raises its flag; the block that takes them waits for the
flag and lowers it again. So the flags must be zero when a call starts and are
zero again when it ends. They live apart from the workspace (which other
launches overwrite with their own pre-pass outputs), in one zeroed buffer per
device and stream, made once: calls on one stream run one after another, so
they never share a flag at the same time.
"""

from __future__ import annotations

import torch

#: Flags per buffer: at least the blocks of any grid that uses them (264 on an H200).
FLAGS = 4096

_flags: dict[tuple[int, int], torch.Tensor] = {}


def flags(device: torch.device, blocks: int) -> torch.Tensor:
    """The zeroed flags of torch's current stream on `device`, for a grid of `blocks`."""
    if blocks > FLAGS:
        raise ValueError(f"a grid of {blocks} blocks needs more than the {FLAGS} hand-off flags")
    key = (device.index or 0, torch.cuda.current_stream(device).cuda_stream)
    buf = _flags.get(key)
    if buf is None:
        buf = _flags[key] = torch.zeros(FLAGS, dtype=torch.int32, device=device)
    return buf


def slot_bytes(threads: int) -> int:
    """One block's 128 accumulators per thread, as 17_streamk.cu saves them."""
    return threads * 128 * 4
