"""Time the padded-copy pre-pass (pad.cu's pad_copy) copying 1 or 4 columns a thread, beside a plain copy.

Why. bigtile's b-padded launches (`default`'s odd-K classes) copy B into rows of a multiple of 4
floats before every product, one float a thread (PAD_WIDE 1). ncu at 472×6284×974 (experiments/
small-odd, 710310e) read that pass at 20.6–21.7 µs for 2 × 24.5 MB: about 2.3 TB/s, half the H200's
memory speed, where the Aᵀ pass, 16 bytes a thread, moved 2 × 16 MB at 3.4 TB/s at 829×4858×193
(and 2 × 11.9 MB at about 3 TB/s at 472×6284×974). A thread of
PAD_WIDE 4 has four loads in flight and stores one float4 (the padded rows are aligned).

Prediction (written before any run, 2026-12-05): PAD_WIDE 4 1.4–1.8× the speed of PAD_WIDE 1 on
B's copies of more than 4 MB (248×6274, 6284×974, 4046×5118, 8191×8191), within 10 % of torch's
clone of the same bytes; at 4858×193 (3.75 MB) and 197×2068 (1.6 MB) within ±15 % either way, the
launch and the tail of the grid weighing more; C's copy back into rows that are not 16-byte apart
(`PaddedOperands`' last step: 4 scalar stores a thread) no slower than PAD_WIDE 1. Both widths
give the same bytes, checked here.

Usage (repository root, on a GPU): python experiments/tools/time_pad.py [OUT.jsonl] [RxC ...]
A developer's tool: CUDA events, median of 30 after 5 warm-ups; prints GB/s and appends a JSON line
per copy to OUT.jsonl where given.
"""

from __future__ import annotations

import dataclasses
import json
import sys

import torch
from time_prepass import median_ms  # this folder's: CUDA events, median of 30 after 5 warm-ups

from gemmlab import runtime
from gemmlab.cuda import driver as cl
from gemmlab.cuda.pad import PAD_COPY, pitch
from gemmlab.judge.cases import uniform
from gemmlab.measure.device import gpu

#: B's shape (N×K) at shapes of the random records where `default`'s launch pads B, and the largest odd B.
SHAPES = ["248x6274", "6284x974", "4858x193", "4046x5118", "197x2068", "8191x8191"]
WIDTHS = (1, 4)


def copier(width: int):
    kernel = dataclasses.replace(PAD_COPY, defines={"PAD_WIDE": width})
    fn = cl.get_kernel(kernel.compile(), kernel.entry, 0)

    def run(src, dst, rows, cols, ld, dst_rows, dst_cols):
        grid = (-(-dst_cols // (PAD_COPY.block[0] * width)), dst_rows, 1)
        cl.launch(fn, grid, PAD_COPY.block, 0, src.data_ptr(), dst.data_ptr(),
                  *map(cl.i32, (rows, cols, ld, dst_rows, dst_cols)))
    return run


def time_shape(rows: int, cols: int, runs: dict) -> dict:
    """One B's copy into its padded rows and back, at each width, beside torch's clone."""
    src = uniform((rows, cols), 3, torch.device("cuda"), -10, 10)
    wide = pitch(cols)
    line = {"rows": rows, "cols": cols, "clone_ms": median_ms(lambda: src.clone()), "smi": gpu()["nvidia_smi"]}
    # B into its padded copy (TransposedA's pad_b), then that copy back into rows of `cols` floats at
    # an odd offset (PaddedOperands' C: rows not 16 bytes apart, nor the pointer).
    padded = {w: torch.full((rows * wide,), float("nan"), device="cuda") for w in runs}
    back = {w: torch.full((rows * cols + 1,), float("nan"), device="cuda") for w in runs}
    for w, run in runs.items():
        line[f"pad_ms_{w}"] = median_ms(lambda run=run, w=w: run(src, padded[w], rows, cols, cols, rows, wide))
        line[f"back_ms_{w}"] = median_ms(lambda run=run, w=w: run(padded[w], back[w][1:], rows, cols, wide, rows, cols))
    torch.cuda.synchronize()
    want = torch.nn.functional.pad(src, (0, wide - cols))
    line["same_bytes"] = all(torch.equal(padded[w].view(rows, wide).view(torch.int32), want.view(torch.int32))
                             and torch.equal(back[w][1:].view(rows, cols).view(torch.int32), src.view(torch.int32))
                             for w in runs)
    return line


def main() -> None:
    runtime.configure()
    args = sys.argv[1:]
    out_path = args.pop(0) if args and args[0].endswith(".jsonl") else None
    shapes = [tuple(int(x) for x in s.split("x")) for s in (args or SHAPES)]
    runs = {w: copier(w) for w in WIDTHS}
    for rows, cols in shapes:
        line = time_shape(rows, cols, runs)
        moved = 4 * (rows * cols + rows * pitch(cols))
        cloned = 8 * rows * cols  # torch's clone reads and writes B as it is
        print(f"{rows}x{cols}: clone {line['clone_ms'] * 1e3:.1f} us ({cloned / line['clone_ms'] / 1e6:.0f} GB/s); "
              + "; ".join(f"width {w}: pad {line[f'pad_ms_{w}'] * 1e3:.1f} us "
                          f"({moved / line[f'pad_ms_{w}'] / 1e6:.0f} GB/s), back {line[f'back_ms_{w}'] * 1e3:.1f} us"
                          for w in WIDTHS) + f"; same bytes: {line['same_bytes']}", flush=True)
        if out_path:
            with open(out_path, "a") as out:
                out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
