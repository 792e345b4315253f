"""bigtile's split-K in 256×128 tiles (WARPS_M 4, one block an SM) at long reductions onto few outputs (GPU).

Why. Across the random records the most frequent shapes below 0.9× cuBLAS FP32 are long
reductions (N of 500–8000) onto a few thousand to a few hundred thousand outputs: 0.62–0.92× at
seeds 2030–2041, every strict rung within a few per cent of `default` ("a kernel is missing there",
experiments/random-shapes). There `default` runs tma-warp's 64×64 one-warp tiles split into 7–28
parts. ncu at two of them (experiments/small-odd, 710310e) showed cuBLAS running a 256×128-tile
SIMT kernel split 18 ways (126 blocks) whose product was 16–30 % faster than ours. bigtile builds
that tile already (WARPS_M 4, WARPS_N 2: eight warps of 64×64, one block an SM; it won classes of
the bigtile rung's tune record), but no split rung uses it. Per reduction step a 256×128 block
loads 6,144 floats into shared memory for 524,288 FMAs, a 64×64 one 2,048 for 65,536: 2.7 times
less copied (and read from L2) per FMA, with the same eight warps an SM and the same thread tile.

Arms: `default` and `tma-warp` as they ship; `splitk-256` and `tma-256`: the `splitk` (cp.async,
BK 8) and `tma` (TMA, BK 16) rungs with WARPS_M 4 and MIN_BLOCKS 1 (both compile for sm_90a in
254 registers without spills). Each timed beside cuBLAS as `gemmlab sweep` times a shape
(experiments/tools/beside.py: interleaved in balanced rounds, GPU time, every result checked
against the float64 product, inputs in [-10, 10)), then two calls of `tma-256` compared bit for bit.

Parts on 132 SMs (`handoff.parts`; 64×64 → 256×128 tiles): 829×4858×193 52 tiles in 18 → 8 in 16;
472×6284×974 128 in 16 → 16 in 16; 151×5626×742 36 in 26 → 6 in 21; 367×4623×491 48 in 20 → 8 in
15; 307×6656×431 35 in 28 → 8 in 16; 389×6804×587 70 in 15 → 10 in 13; 649×2060×809 143 in 7 → 21
in 6; 703×8056×678 121 in 16 → 18 in 14; 1024³ (128×128 in `default`: 64 in 4) 32 in 4; 2048³ one
part each.

Prediction (written before any run, 2026-12-05): at the eight long reductions, `tma-256` 5–20 %
faster than `tma-warp` at six or more (the product's copies, not its FMAs, are where cuBLAS's
kernel leads), its tree of 128 KB slots costing some of it; `splitk-256` (BK 8, cp.async) within
±5 % of `tma-256`; at 1024³ the 256×128 arms within ±10 % of `default`, at 2048³ 0–10 % behind it
(128 tiles, one wave on 132 SMs, against 256 tiles of 128×128 two an SM); every result within the
strict gate and the same bits on a second call.

One JSON line per shape to OUT.jsonl.
Usage (repository root, on a GPU): python experiments/wide-split/wide_split.py OUT.jsonl [MxNxK ...]
"""
import dataclasses
import sys
from pathlib import Path

from gemmlab import registry, runtime

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from beside import split_of, time_beside  # noqa: E402  (experiments/tools: the driver shared with fold, tail-split)

SHAPES = ["829x4858x193", "472x6284x974", "151x5626x742", "367x4623x491", "307x6656x431", "389x6804x587",
          "649x2060x809", "703x8056x678", "1024x1024x1024", "2048x2048x2048"]
WIDE = {"WARPS_M": 4, "MIN_BLOCKS": 1}


def wide(name: str):
    """The rung with every launch in 256×128 tiles, one block an SM."""
    base = registry.get(name)
    return dataclasses.replace(base, name=f"{name}-256", launches=tuple(x.with_defines(WIDE) for x in base.launches),
                               chapter=None, step=0, variant_of=name)


def parts_of(arm, launch, m, n, k) -> dict:
    """The launch's tile and split-K parts at the shape."""
    return {"tile": list(launch.tile), **split_of(arm, launch, m, n, k)}


def main() -> None:
    runtime.configure()
    shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[2:] or SHAPES)]
    arms = [registry.get("default"), registry.get("tma-warp"), wide("splitk"), wide("tma")]
    time_beside(arms, shapes, sys.argv[1], parts_of)


if __name__ == "__main__":
    main()
