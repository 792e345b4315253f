"""Split-K for the 3xTF32 wgmma kernel (wgmma_3xtf32.cu's SPLIT) where its tiles are few (GPU).

Why. Issue 28 asks 3xTF32 for at least cuBLAS FP32's speed at every shape with outputs ≥ 512².
`3xtf32` runs wgmma-3xtf32 from 2²⁰ outputs and strict `small` below, and both fall short where
the 128×128 tiles are few (experiments/tensor-dispatch/2-crossover.json.gz, cuBLAS FP32 beside):
512×4096×512 ran 79.3 µs through `small` against 58.5 (wgmma-3xtf32 alone 130.5: 16 tiles for 132
SMs), 724×2048×724 86.7 against 68.8 (wgmma-3xtf32 75.0: 36 tiles). There wgmma-3xtf32 takes about
1 µs a reduction step of 32 a tile, the time of its 24 wgmmas, so a call is as long as its longest
tile's reduction. With SPLIT 1 a unit of the persistent grid is a part of a tile's reduction
(`handoff.parts` for one block an SM, no bound on a part's chain: every step is promoted in IEEE
FP32); the parts' consumers meet in splitk.cuh's tree as a team at a named barrier, and the last
stores the tile.

Arms: `3xtf32` as it ships; `3x-split` (`launches.wgmma_3xtf32_split_launches()` alone, at every
shape); `3xtf32-split` (`3xtf32` with wgmma-3xtf32's launches replaced by their split twins, run
from 2¹⁸ outputs, 512², instead of 2²⁰); `wgmma-3xtf32` as it ships. Timed beside cuBLAS FP32 as
`gemmlab sweep` times a shape (bench.run.measure: interleaved, GPU time, inputs in [-10, 10),
every result checked against the float64 product at the FP32 gate, with its count of elements
outside LeetGPU's tolerance), then two calls of `3x-split` on fixed inputs compared bit for bit.

Prediction (written before any run, 2026-12-05; parts as the host picks them on 132 SMs):
* 512×4096×512 (8 parts of 16 steps): `3x-split` 3–4.5× wgmma-3xtf32, 1.4–2.0× cuBLAS FP32
  (B's split pre-pass, about 10 µs, then stays);
* 724×2048×724 (3 parts) and 1024×2048×1024 (2 parts): 1.5–2.4× wgmma-3xtf32, 1.6–2.5× cuBLAS FP32;
* 1024×8192×1024 (2 parts; B's pre-pass moves 96 MB, about 35 µs): 1.4–1.7× wgmma-3xtf32,
  2.0–2.5× cuBLAS FP32;
* 1448×2048×1448 and 3000×600×700 (144 tiles, a second wave of 12; 4 parts): 1.0–1.5×
  wgmma-3xtf32;
* where the tiles fill the GPU (2048³, 8192×6144×4096) one part: within 1 % of wgmma-3xtf32;
* `3xtf32-split` ≥ 1.0× cuBLAS FP32 at every shape here with outputs ≥ 512² (the issue's bar),
  where `3xtf32` ran 0.74–0.79× at the first two;
* every result within the FP32 gate, no more elements outside LeetGPU's tolerance than the
  unsplit kernel (shorter chains of promoted sums), and the same bits on a second call.

Added the same day, before any run: below the Hopper kernel's floor `3xtf32` runs `small`, and in
the latest random records (seeds 2039, 2040) `default` ran 1.04–1.58× faster than `small` at 5 of
the 7 shapes with outputs in [2¹⁸, 2²⁰) (at 686×5291×518 133.8 µs against 208.8), 0.92× at one.
Two arms take `default`'s launches in place of `small`'s: `3xtf32-default` (the floors as
shipped) and `3xtf32-split-default` (the split twins from 2¹⁸, then `default`). Four shapes of
those records join the list. Prediction: `3xtf32-default` 1.1–1.6× `3xtf32` at 517×4384×925,
686×5291×518 and 472×6284×974, still below cuBLAS FP32 there (0.7–1.0×, as `default` ran);
`3xtf32-split-default` the fastest arm at every shape with outputs ≥ 512² but 6513×1012×87, where
the reduction is short and `default` runs its own tiled kernels.

One JSON line per shape to OUT.jsonl.
Usage (repository root, on a GPU): python experiments/3x-split/three_split.py OUT.jsonl [MxNxK ...]
"""
import dataclasses
import json
import sys
from pathlib import Path

import torch

from gemmlab import launches, registry, runtime
from gemmlab.bench.run import measure
from gemmlab.measure.inputs import result_bits
from gemmlab.policy import tensor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from beside import results_of  # noqa: E402  (experiments/tools: the results of a line, as its drivers write them)

SHAPES = ["512x4096x512", "724x2048x724", "1024x2048x1024", "1024x8192x1024", "1448x2048x1448", "3000x600x700",
          "600x1000x600", "800x300x900", "105x7416x699", "541x57x1338", "2048x2048x2048", "8192x6144x4096",
          "517x4384x925", "686x5291x518", "472x6284x974", "6513x1012x87"]
#: The outputs from which the `3xtf32-split` arm runs the split twins: 512², the issue's bar.
SPLIT_OUTPUTS = 1 << 18


def arm(name: str, of: str, chain: tuple) -> registry.Implementation:
    return dataclasses.replace(registry.get(of), name=name, launches=chain, chapter=None, step=0, variant_of=of)


def main() -> None:
    runtime.configure()
    out_path = sys.argv[1]
    shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[2:] or SHAPES)]
    split = launches.wgmma_3xtf32_split_launches()
    alone = arm("3x-split", "wgmma-3xtf32", split)
    # 3xtf32 with each wgmma-3xtf32 launch replaced by its split twin, from SPLIT_OUTPUTS
    twins = {x.name.removeprefix("split-"): x for x in split}
    chain = tuple(tensor.from_outputs((dataclasses.replace(twins[x.name], when=x.when),), SPLIT_OUTPUTS)[0]
                  if x.source == "wgmma_3xtf32.cu" else x for x in registry.get("3xtf32").launches)
    # The same two chains with `default`'s launches (this GPU's tune record) in place of `small`'s.
    small = launches.RUNGS["small"]
    default = tuple(registry.get("default").launches)
    def below(c):
        return tuple(x for x in c if x not in small) + default
    arms = [registry.get("3xtf32"), arm("3xtf32-default", "3xtf32", below(registry.get("3xtf32").launches)),
            arm("3xtf32-split", "3xtf32", chain), arm("3xtf32-split-default", "3xtf32", below(chain)),
            alone, registry.get("wgmma-3xtf32")]
    with open(out_path, "a") as out:
        for shape in shapes:
            m, n, k = shape
            probe = torch.empty(1, device="cuda")
            chosen = alone.dispatch(probe, probe, probe, m, n, k)
            # Fresh copies: a solver keeps each call's plan for the next call at the same operands.
            rec = measure([dataclasses.replace(a) for a in arms], shape, 3, 10, False, 7, energy=())
            rows = {r["name"]: r for r in rec["results"]}
            # two calls of fresh solvers on fixed inputs (seed 5, [-10, 10)), bit for bit
            twice = [result_bits(dataclasses.replace(alone).solve, shape, 5, torch.device("cuda")) for _ in range(2)]
            repeat = bool(torch.equal(*twice))
            line = {"shape": shape, "clocks": rec["clocks_during_timing"], "parts": chosen.host.parts(chosen, m, n, k),
                    "same_bits_twice": repeat, "results": results_of(rows)}
            out.write(json.dumps(line) + "\n")
            out.flush()
            t = rows["torch"]["median_ms"]
            print("x".join(map(str, shape)).ljust(16), f"parts={line['parts']}", " ".join(
                f"{name}={r['median_ms'] * 1e3:.1f}us({t / r['median_ms']:.2f}){'' if r.get('passed') else '!FAIL'}"
                for name, r in rows.items() if r.get("median_ms")), "repeat:", repeat, flush=True)


if __name__ == "__main__":
    main()
