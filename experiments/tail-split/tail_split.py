"""The last wave's tiles split into more parts (bigtile's SPLIT 2, a tail split) beside `default` (GPU).

Why. Issue 27 asks for no shape with outputs of at least 256² below 0.90× cuBLAS FP32. Seed 2041's
worst was 1348×248×6274 (0.746×, `results/h200-random.json`), seed 2034's 2426×197×2068 (0.683×):
short reductions onto millions of outputs, where no strict rung came near cuBLAS. There `default`
runs tma-warp's build: 64×64 tiles of one warp, 8 blocks an SM, 1056 slots on 132 SMs. 2178 tiles
are two waves and 66 tiles: a third wave of 66 lone warps on 66 of the 132 SMs, which the split model
(`handoff.modeled_time`) counts as long as a full wave. `handoff.parts` splits every tile of such a
grid in two (modeled 51 steps of a block against 54 unsplit), so each of the 2178 tiles pays a
second pipeline fill and a slot of sums through L2, and the fifth wave is still 12 % full.

SPLIT 2 (bigtile.cu) runs a line of blocks whose tiles need not all have as many parts:
`handoff.tail_plan` keeps the tiles of whole waves in the parts the accuracy floor asks (one
here), or in SPLIT 1's where those model faster, and splits the tiles left over into the parts that make their wave shortest (4 parts of 64
at 1348×248×6274: 2 × 18 + 8 = 44 modeled steps against 51). It is chosen only where it models
at least `handoff.MARGIN` faster than SPLIT 1's plan; elsewhere the line runs SPLIT 1's plan, in
SPLIT 1's block order. Over the 1152 shapes of the 64-shape random records (seeds 1 to 2041), 288 run
a bigtile launch with the Aᵀ host in `default` and 13 get a tail split (the listing below).

Arms: `default` as it ships, and `default-tail`: every split bigtile launch of `default` (SPLIT 1,
the Aᵀ host) replaced by its `twins.tail_twin` (same kernel knobs, SPLIT 2, same precondition).
Each timed beside cuBLAS as `gemmlab sweep` times a shape (bench.run.measure: interleaved in
balanced rounds, GPU time, every result checked against the float64 product, inputs in [-10,
10)); then two calls of `default-tail` on fixed inputs compared bit for bit (experiments/tools/beside.py).

Prediction (written before any run, 2026-12-05, at the commit that adds this file; the model's
speed-ups of the product alone, the pre-passes unchanged):
* the four short reductions onto many outputs, 2426×197×2068 (1.25), 1095×251×3889 (1.19),
  3082×243×4267 (1.16) and 1348×248×6274 (1.16): `default-tail` 10–20 % faster than `default`,
  1348×248×6274 from about 0.75× cuBLAS FP32 to 0.83–0.88×;
* the nine long reductions with a tail split (model 1.05–1.09: 3601×5248×2344, 4320×2074×2239,
  4518×2140×6616, 4019×3964×3416, 2303×3345×2292, 2056×2425×3291, 2354×2856×2313, 3476×4118×2096,
  3674×2267×3245): 0–5 % faster; the model counts a tail wave as long as a full one, and where a
  wave of long parts ends ragged the real tail is shorter;
* controls where the plan is SPLIT 1's (829×4858×193: 18 parts; 472×6284×974: 16; 3218×4046×5118:
  7) within ±2 % (the same plan and block order in another build of the kernel: the build
  lottery, which `gemmlab inspect`'s schedule puts within 1 % of instructions and stalls), and
  2048³ (an unsplit winner, not turned) within the runs' spread;
* every result within the strict gate, the same bits on a second call; elements outside
  LeetGPU's tolerance against the float64 product within ±10 % of `default`'s.

With --rungs (after the arms above): `tma` (128×128 tiles, BK 16), `splitk` (128×128, BK 8) and
`tma-warp` (64×64), each beside its rung turned, at the four short reductions: whether the tail
split changes which tile pays there (the medium-odd class is `tma-warp`'s by calibration). No
prediction beyond the arms': each turned rung 5–20 % faster than itself where its plan splits a tail.

One JSON line per shape to OUT.jsonl.
Usage (repository root, on a GPU): python experiments/tail-split/tail_split.py OUT.jsonl [--rungs] [MxNxK ...]
"""
import dataclasses
import sys
from pathlib import Path

from gemmlab.policy import twins
from gemmlab import launches, registry, runtime

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from beside import split_of, time_beside  # noqa: E402  (experiments/tools: the driver shared with fold)

TAILS = ["2426x197x2068", "1095x251x3889", "3082x243x4267", "1348x248x6274", "3601x5248x2344", "4320x2074x2239",
         "4518x2140x6616", "4019x3964x3416", "2303x3345x2292", "2056x2425x3291", "2354x2856x2313", "3476x4118x2096",
         "3674x2267x3245"]
CONTROLS = ["829x4858x193", "472x6284x974", "3218x4046x5118", "2048x2048x2048"]
#: With --rungs: the rungs whose every launch splits (SPLIT 1), each beside its tail twins.
RUNGS = ["tma", "splitk", "tma-warp"]


def split_bigtile(launch) -> bool:
    """A bigtile launch that splits with the Aᵀ host (SPLIT 1): the ones the tail twin turns."""
    return launch.source == "bigtile.cu" and launch.defines.get("SPLIT") == 1 and launch.host is not None


def tailing(impl):
    """`impl` with each split bigtile launch on a line of blocks (twins.tail_twin)."""
    turned = tuple(twins.tail_twin(x) if split_bigtile(x) else x for x in impl.launches)
    return dataclasses.replace(impl, name=f"{impl.name}-tail", launches=turned, chapter=None, step=0,
                               variant_of=impl.name)


def main() -> None:
    runtime.configure()
    args = sys.argv[2:]
    rungs = bool(args) and args[0] == "--rungs"
    shapes = [tuple(int(x) for x in s.split("x")) for s in (args[rungs:] or (TAILS[:4] if rungs else TAILS + CONTROLS))]
    if rungs:  # which tile the tail split favours: the splitting rungs and their twins, beside default's
        arms = [registry.get("default")] + [x for name in RUNGS for x in (registry.get(name), tailing(registry.get(name)))]
    else:
        arms = [registry.get("default"), tailing(registry.get("default"))]
    time_beside(arms, shapes, sys.argv[1], split_of)


if __name__ == "__main__":
    main()
