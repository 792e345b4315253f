"""Split-K for bigtile (its SPLIT knob, the `splitk` rung): how many parts, and the scratch.

With fewer 128×128 tiles than the GPU holds blocks at once (1024³: 64 tiles for
264 slots on an H200), most SMs would idle. Then each tile's reduction is split
into P contiguous parts run at once (grid z); parts before the last save their
sums to a slot of the workspace and raise a flag; the last part adds them in a
fixed order and stores. Splitting reorders the reduction, so it is only done
where the reduction is short (N ≤ SPLIT_MAX_N): there the FP32 sums cannot
drift anywhere near LeetGPU's tolerance against `torch.matmul`. The flags live
apart from the workspace (which other launches overwrite), in one zeroed buffer
per device and stream, made once: each raised flag is lowered by the block that
waited on it, so the buffer is zero again after every call.

The last part waits for the others (it spins on their flags). That relies on the
parts of lower z, which never wait, being dispatched before it, as CUDA dispatches
a grid's blocks, and on all parts being resident at once (tiles × parts ≤ the
GPU's slots, by this policy). A counter with which the last part to *finish* sums
all parts, in a fixed order and without waiting, would drop that reliance; it was
not made because any edit to the kernel rebuilds the SPLIT cubin that `default`
runs at the large shapes, which then needs re-measuring (16_bigtile.md).
"""

from __future__ import annotations

import torch

#: The longest reduction that is split; longer ones keep one block per tile.
SPLIT_MAX_N = 2048
#: The shortest reduction a part keeps, in elements of N: 16 steps of BK 8, what the splitk
#: rung was measured with. In steps, as was first written, a BK 16 launch (`default`'s at the
#: small shapes) kept 256 and split 256³ not at all and 512³ in 2, where BK 8 split them in 2
#: and 4 and ran 1.8× faster (the H200 sweep of 2026-11-30).
SPLIT_MIN_N = 128
#: Flags per buffer: at least the parts of any split grid (264 on an H200).
FLAGS = 4096


def min_steps(step: int) -> int:
    """The fewest reduction steps of `step` (BK) elements a part keeps: SPLIT_MIN_N's worth."""
    return max(1, -(-SPLIT_MIN_N // step))


def parts(tiles: int, steps: int, n: int, slots: int, step: int) -> int:
    """How many parts each tile's `steps` reduction steps of `step` elements are split into, for
    `slots` resident blocks: enough to fill them, none shorter than SPLIT_MIN_N; 1 where N is long."""
    if n > SPLIT_MAX_N or tiles < 1 or tiles >= slots:
        return 1
    return max(1, min(slots // tiles, steps // min_steps(step)))


def slot_bytes(threads: int) -> int:
    """One block's 128 accumulators per thread, as 16_bigtile.cu saves them."""
    return threads * 128 * 4


_flags: dict[tuple[int, int], torch.Tensor] = {}


def flags(device: torch.device, count: int) -> torch.Tensor:
    """The zeroed flags of torch's current stream on `device`, for `count` parts."""
    if count > FLAGS:
        raise ValueError(f"{count} split-K parts need more than the {FLAGS} hand-off flags")
    index = torch.cuda.current_device() if device.index is None else device.index
    key = (index, torch.cuda.current_stream(index).cuda_stream)
    buf = _flags.get(key)
    if buf is None:
        buf = _flags[key] = torch.zeros(FLAGS, dtype=torch.int32, device=torch.device("cuda", index))
    return buf
