"""Chains bounded by folding the sums into a running sum (bigtile's FOLD) in place of more split-K parts (GPU).

Why. Issue 27 asks `default` to leave no more elements outside LeetGPU's tolerance against the
float64 product than cuBLAS FP32, at every shape of the random record (inputs in [-10, 10)).
Where N or K is not a multiple of 4, `cuda/handoff.py` bounds each FFMA chain at 640 elements by
splitting the reduction into parts (`fewest`): at seed 2040 that split 14 of 64 shapes into more
parts than time alone would (4–13 where time chose 1–5), and split-K costs a refilled pipeline
per part and a round trip of each part's sums through scratch (2–4 % at three large odd shapes,
experiments/accuracy/2-parts.jsonl; 16 % at the performance shape with 4 parts). Where N and K
are multiples of 4 nothing is bounded, and at 3 of 9 such large shapes of the random records
cuBLAS left 12–24 % fewer elements outside than `default`'s one chain (2317×6048×7564: 69,620
against 77,824 at seed 2040).

FOLD f: every f steps a thread adds its sums into a running sum and starts again from zero: its
own elements of C where the tile is whole, its part's own slot of split-K's scratch where the tile
is split; before the tile is stored (or handed to the tree) the running sum is added to the last
chain. A CPU model of the orders (`model.py`, `1-model.json`, 40,000 outputs a reduction) puts
folds of 640 level with split-K's parts: at N = 6048, 88 elements outside against 85 for 10 parts
in a tree and 171 for one chain (cuBLAS left 0.89 of our one chain's count at 2317×6048×7564); at
N = 4858, 100 against 99 and 159.

Arms: `default` as it ships, and `default-fold`: every bigtile launch of `default` outside the
tiled classes (where one chain gives cuBLAS's own bits, and LeetGPU's timed case is) replaced by
its `launches.fold_twin` (FOLD = 640 / BK; `handoff.chain_bound`: time alone sets the parts,
with no accuracy floor, since every part bounds its own chains). Each timed beside cuBLAS as
`gemmlab sweep` times a shape (bench.run.measure: interleaved, GPU time, every result checked
against the float64 product, inputs in [-10, 10)); then two calls of `default-fold` on fixed
inputs compared bit for bit (experiments/tools/beside.py).

Parts (on 132 SMs, `default` → `default-fold`): 822×707×3854 5 → 1, 3218×4046×5118 7 → 1,
2932×6611×4197 11 → 1, 5426×3303×2962 6 → 1, 3280×6498×7226 11 → 1, 4192×6096×4053 10 → 1,
1821×7463×1781 13 → 5, 3870×7319×2354 12 → 4, 472×6284×974 16 → 8; 829×4858×193 18 and the six
aligned shapes 1–3 as before (time's own).

Prediction (written before any run, 2026-12-04):
* odd shapes whose parts fall (the nine above): `default-fold` 2–6 % faster than `default` (up
  to 10 % at 822×707×3854, split 5 ways for a reduction of 707), with counts against the float64
  product within ±15 % of `default`'s, below cuBLAS's;
* aligned, untiled large shapes (2317×6048×7564, 4019×3964×3416, 7841×4904×3932, where cuBLAS
  was the more exact; 2707×8060×5860, 4518×2140×6616, 3823×3936×2496, where it gave our bits):
  counts 30–50 % below `default`'s, so below cuBLAS's at all six, for 0–1.5 % of the time;
* 829×4858×193 (the same 18 parts of 270, each under one fold): within noise of `default`;
* every result bit for bit the same on a second call.

One JSON line per shape to OUT.jsonl.
Usage (repository root, on a GPU): python experiments/fold/fold.py OUT.jsonl [MxNxK ...]
"""
import dataclasses
import sys
from pathlib import Path

from gemmlab import launches, registry, runtime
from gemmlab.policy.classes import InClass

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from beside import time_beside  # noqa: E402  (experiments/tools: the driver shared with tail-split)

SHAPES = ["822x707x3854", "3218x4046x5118", "2932x6611x4197", "5426x3303x2962", "3280x6498x7226",
          "4192x6096x4053", "2317x6048x7564", "4019x3964x3416", "7841x4904x3932", "2707x8060x5860",
          "4518x2140x6616", "3823x3936x2496", "1821x7463x1781", "3870x7319x2354", "472x6284x974", "829x4858x193"]


def tiled(launch) -> bool:
    """The launch runs in a tiled class (its precondition names one)."""
    parts = getattr(launch.when, "parts", (launch.when,))
    return any(isinstance(p, InClass) and p.cls.layout == "tiled" for p in parts)


def folding(impl):
    """`impl` with each bigtile launch outside the tiled classes folding (launches.fold_twin)."""
    turned = tuple(launches.fold_twin(x) if x.source == "bigtile.cu" and not tiled(x) else x
                   for x in impl.launches)
    return dataclasses.replace(impl, name=f"{impl.name}-fold", launches=turned, chapter=None, step=0,
                               variant_of=impl.name)



def describe(arm, launch, m, n, k) -> dict:
    """The launch's split-K parts at the shape, and how often it folds."""
    parts = launch.host.parts(launch, m, n, k) if getattr(launch.host, "split", False) else 1
    return {"parts": parts, "fold": launch.defines.get("FOLD", 0)}


def main() -> None:
    runtime.configure()
    shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[2:] or SHAPES)]
    base = registry.get("default")
    time_beside([base, folding(base)], shapes, sys.argv[1], describe)


if __name__ == "__main__":
    main()
