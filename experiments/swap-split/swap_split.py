"""Split-K for the swapped TF32 wgmma kernel (wgmma_swap.cu's SPLIT) where its tiles are few (GPU).

Why. Issue 28 asks `tf32` for no shape with outputs ≥ 512² below 0.85× cuBLAS TF32, with split-K
or stream-K where the tiles are few. `wgmma-swap` walks 256×128 tiles on a persistent grid of
one block an SM, in clusters of two: 1024×8192×1024 is 16 units of work for 66 clusters, and
ran 155.4 µs against cuBLAS TF32's 71.6 (0.46×; experiments/tensor-dispatch/2-crossover.json.gz,
where 1024×2048×1024 ran 0.56× and 724×2048×724 0.44× through `tf32`). `mma-split` (64×64 tiles,
split-K) was no faster there (200.6 µs). With SPLIT 1 a unit is a part of a tile's reduction
(`handoff.parts` for the clusters resident at once, no bound on a part's chain); the parts'
consumers meet in splitk.cuh's tree as a team at a named barrier, and the last stores the tile.

Arms: `tf32` as it ships; `swap-split` (`launches.wgmma_swap_split_launches()` alone, at every
shape); `tf32-split` (`tf32` with wgmma-swap's launches replaced by their split twins under the
same preconditions); `wgmma-swap` as it ships. Timed beside cuBLAS TF32 and FP32 as
`gemmlab sweep` times a shape (bench.run.measure: interleaved, GPU time, inputs in [-10, 10),
every result checked against the float64 product at the TF32 gate), then two calls of
`swap-split` on fixed inputs compared bit for bit.

Prediction (written before any run, 2026-12-04):
* 1024×8192×1024 (4 parts of 64 steps): `swap-split` 2.8–3.4× `wgmma-swap`, 1.3–1.6× cuBLAS TF32;
* 1024×2048×1024 (4 parts), 724×2048×724 and 512×4096×512 (7 and 16 parts of 8–16 steps):
  0.9–1.3× cuBLAS TF32, where `tf32` ran 0.44–0.68×;
* 105×7416×699 and 550×3002×118 (3 units; 22 parts and 1 unit, steps too few to split): the
  first 3–5× `wgmma-swap` (0.18× cuBLAS TF32 in the seed-5 draw), still behind `mma-split`'s
  64×64 tiles at the second;
* where the tiles fill the GPU (2048³, 8192×6144×4096) one part: `swap-split` within 1 % of
  `wgmma-swap` (the same schedule; the kernel's loop only counts its steps another way);
* bits the same on a second call everywhere.

Added 2026-12-05, before any run: two arms. `tf32-split-512`: `tf32-split` with the split twins
run from 2¹⁸ outputs (512², the issue's bar) instead of 2¹⁹, where `tf32` now runs `mma-split`
(512×4096×512: 35.4 µs against cuBLAS TF32's 24.1, 0.68×). `mma-split` as it ships. Prediction:
`tf32-split-512` at 512×4096×512 within 10 % of `swap-split` and ≥ 0.9× cuBLAS TF32; at
541×57×1338 (two reduction steps, both operands padded: `tf32` ran wgmma-swap in 20.6 µs against
cuBLAS TF32's 10.0) `mma-split` 1.5–2.5× faster than `tf32`.

One JSON line per shape to OUT.jsonl.
Usage (repository root, on a GPU): python experiments/swap-split/swap_split.py OUT.jsonl [MxNxK ...]
"""
import dataclasses
import json
import sys

import torch

from gemmlab import launches, registry, runtime
from gemmlab.bench.run import measure
from gemmlab.measure.inputs import result_bits
from gemmlab.policy import tensor

#: The outputs from which the `tf32-split-512` arm runs the split twins: 512², the issue's bar.
SPLIT_OUTPUTS = 1 << 18
SHAPES = ["1024x8192x1024", "1024x2048x1024", "724x2048x724", "512x4096x512", "1448x2048x1448", "105x7416x699",
          "550x3002x118", "126x3136x525", "3000x600x700", "541x57x1338", "2048x2048x2048", "8192x6144x4096"]


def arm(name: str, of: str, chain: tuple) -> registry.Implementation:
    return dataclasses.replace(registry.get(of), name=name, launches=chain, chapter=None, step=0, variant_of=of)



def main() -> None:
    runtime.configure()
    out_path = sys.argv[1]
    shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[2:] or SHAPES)]
    split = launches.wgmma_swap_split_launches()
    swap = arm("swap-split", "wgmma-swap", split)
    # tf32 with each wgmma-swap launch replaced by its split twin, under the same precondition
    twins = {x.name.removeprefix("split-"): x for x in split}
    tf32 = registry.get("tf32")
    in_tf32 = tuple(dataclasses.replace(twins[x.name], when=x.when) if x.source == "wgmma_swap.cu" else x
                    for x in tf32.launches)
    low = tuple(tensor.from_outputs((x,), SPLIT_OUTPUTS)[0] if x.source == "wgmma_swap.cu" else x
                for x in in_tf32)
    arms = [tf32, swap, arm("tf32-split", "tf32", in_tf32), arm("tf32-split-512", "tf32", low),
            registry.get("wgmma-swap"), registry.get("mma-split"), registry.get("torch-tf32")]
    with open(out_path, "a") as out:
        for shape in shapes:
            m, n, k = shape
            probe = torch.empty(1, device="cuda")
            chosen = swap.dispatch(probe, probe, probe, m, n, k)
            # Fresh copies: a solver keeps each call's plan for the next call at the same operands.
            rec = measure([dataclasses.replace(a) for a in arms], shape, 3, 10, False, 7, energy=())
            rows = {r["name"]: r for r in rec["results"]}
            # two calls of fresh solvers on fixed inputs (seed 5, [-10, 10)), bit for bit
            twice = [result_bits(dataclasses.replace(swap).solve, shape, 5, torch.device("cuda")) for _ in range(2)]
            repeat = bool(torch.equal(*twice))
            line = {"shape": shape, "clocks": rec["clocks_during_timing"], "parts": chosen.host.parts(chosen, m, n, k),
                    "same_bits_twice": repeat,
                    "results": {name: {"ms": r["median_ms"], "passed": r["passed"], "kernel": r.get("kernel"),
                                       "ratio_vs_cublas_tf32": r.get("ratio_vs_cublas_tf32")}
                                for name, r in rows.items()}}
            out.write(json.dumps(line) + "\n")
            out.flush()
            t = rows["torch-tf32"]["median_ms"]
            print("x".join(map(str, shape)).ljust(16), f"parts={line['parts']}", " ".join(
                f"{name}={r['median_ms'] * 1e3:.1f}us({t / r['median_ms']:.2f}){'' if r.get('passed') else '!FAIL'}"
                for name, r in rows.items() if r.get("median_ms")), "repeat:", repeat, flush=True)


if __name__ == "__main__":
    main()
