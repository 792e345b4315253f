"""The two rules of the tensor dispatchers that the last records put in doubt (GPU; a few minutes).

Why. Issue 28 asks `tf32` for ≥ 0.85× cuBLAS TF32 and `3xtf32` for ≥ 1.0× cuBLAS FP32 at every
shape with outputs ≥ 512². At 710310e two rules set where the Hopper kernels run:

1. The width floor (`When.min_cols`, 953d465): neither Hopper kernel nor its split twin runs
   where C has fewer columns (K) than its blocks side by side (256 for wgmma-swap's clusters, 128
   for wgmma-3xtf32). experiments/tensor-dispatch/6-width-floor-710310e.json.gz: it paid at K = 54
   and 100 (wgmma-swap 0.23× and 0.26× cuBLAS TF32 where mma-split ran 0.91× and 0.75×) and cost
   at 8192×1024×200, where wgmma-swap ran 0.935× and `tf32`, sent to mma-split, 0.514×. There C
   fills 200 of a cluster's 256 columns; at 54 and 100 it fills 21 % and 39 %.
2. The twins' parts: one wave (`handoff.OneWave`) with no least part. In seed 2043's tensor draw
   (experiments/tensor-dispatch/7-random-64-seed2043.json.gz) the one shape from 512² below the bars
   was 934×949×282: `tf32` 0.811× through 8 parts of about 119, `3xtf32` 0.721× through 5 parts of
   about 190. In experiments/3x-split parts of 150 trailed `small` (0.71–0.90× against 1.07–1.15×)
   and parts of 200 led it by 6 %; in experiments/swap-split parts of 256 trailed mma-split by 7 %
   (512×4096×512) and parts of 292 led it by 32 % (724×2048×724).

Arms (`launches.tf32_launches` and `x3_launches`, each a whole dispatcher):
* `tf32`, `3xtf32`: as shipped;
* `tf32-w34`, `3xtf32-w34`: the width floor at three quarters of the blocks side by side (192, 96);
* `tf32-part`, `3xtf32-part`: as shipped, and the twins only where a part is at least PART_TF32
  (256) or PART_3X (200) elements of the reduction long;
* the kernels alone for reference: mma-split, wgmma-swap, small, wgmma-3xtf32; cuBLAS TF32 and FP32.
Timed as `gemmlab sweep` times a shape (bench.run.measure: interleaved in balanced rounds, GPU
time, inputs in [-10, 10), every result judged at its precision's gate).

Prediction (written before any run, 2026-12-05, at the commit that adds this file):
* 8192×1024×200, 4096×2048×224, 6000×1500×208 (C 78–88 % of a cluster wide, many row tiles):
  `tf32-w34` within 5 % of wgmma-swap alone, 1.5–1.9× `tf32`;
* 2048×4096×192 (16 blocks; `tf32-w34` runs the twin in 8 parts of 512): `tf32-w34` 1.1–1.4×
  `tf32` (mma-split, 0.63× cuBLAS TF32 in the width record);
* 5501×4101×54: every arm as shipped (C below three quarters of a block for both kernels);
  3000×2000×100: `tf32-w34` as shipped (39 % of a cluster);
* 3000×2000×100, 8192×2048×100 and 4000×3000×112 (3xTF32 tiles 78–88 % full; the twin in 2–5
  parts of 400–1024): `3xtf32-w34` 1.3–2× `3xtf32` (`small`, 0.85× cuBLAS FP32 at 3000×2000×100
  in the width record);
* 934×949×282: `tf32-part` (mma-split) 0.8–1.0× cuBLAS TF32, against 0.81× as shipped;
  `3xtf32-part` (`small`) 0.85–1.05× cuBLAS FP32, against 0.72× — a coin toss either way, which is
  why it is measured;
* 724×2048×724, 512×4096×512, 1024×2048×1024 (parts of 256–512 for tf32, 512–1024 for 3xtf32,
  `handoff.OneWave` on 132 SMs): the `-part` arms as shipped, within the runs' spread;
* every result within its gate.

One JSON line per shape to OUT.jsonl.
Usage (repository root, on a GPU): python experiments/width-parts/width_parts.py OUT.jsonl [MxNxK ...]
"""
import dataclasses
import json
import sys

import torch

from gemmlab import launches, registry, runtime
from gemmlab.bench.run import measure
from gemmlab.cuda import hopper

SHAPES = ["8192x1024x200", "4096x2048x224", "6000x1500x208", "2048x4096x192", "3000x2000x100", "5501x4101x54",
          "8192x2048x100", "4000x3000x112", "934x949x282", "724x2048x724", "512x4096x512", "1024x2048x1024"]
PART_TF32, PART_3X = 256, 200


@dataclasses.dataclass(frozen=True)
class LeastPart:
    """A twin's precondition: each of its parts at least `length` elements of the reduction."""

    wave: object  # handoff.OneWave
    length: int

    def __call__(self, a, b, c, m, n, k) -> bool:
        from gemmlab.cuda import driver as cl

        parts = self.wave.parts(m, n, k, cl.sm_count(torch.cuda.current_device()))
        return -(-n // parts) >= self.length

    def __str__(self) -> str:
        return f"parts of at least {self.length}"


def arm(name: str, of: str, chain: tuple) -> registry.Implementation:
    return dataclasses.replace(registry.get(of), name=name, launches=chain, chapter=None, step=0, variant_of=of)


def arms() -> list[registry.Implementation]:
    def least(length):
        return lambda x: LeastPart(hopper.one_wave(x), length)
    return [registry.get("tf32"), arm("tf32-w34", "tf32", launches.tf32_launches(min_cols=192)),
            arm("tf32-part", "tf32", launches.tf32_launches(split_also=least(PART_TF32))),
            registry.get("3xtf32"), arm("3xtf32-w34", "3xtf32", launches.x3_launches(min_cols=96)),
            arm("3xtf32-part", "3xtf32", launches.x3_launches(split_also=least(PART_3X))),
            registry.get("mma-split"), registry.get("wgmma-swap"), registry.get("small"),
            registry.get("wgmma-3xtf32"), registry.get("torch-tf32")]


def main() -> None:
    runtime.configure()
    out_path = sys.argv[1]
    shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[2:] or SHAPES)]
    with open(out_path, "a") as out:
        for shape in shapes:
            # Fresh copies: a solver keeps each call's plan for the next call at the same operands.
            rec = measure([dataclasses.replace(a) for a in arms()], shape, 3, 10, False, 7, energy=())
            rows = {r["name"]: r for r in rec["results"]}
            line = {"shape": shape, "clocks": rec["clocks_during_timing"], "commit": rec["versions"].get("gemmlab_commit"),
                    "results": {name: {"ms": r.get("median_ms"), "passed": r["passed"], "kernel": r.get("kernel"),
                                       "ratio_vs_cublas": r.get("ratio_vs_cublas"),
                                       "ratio_vs_cublas_tf32": r.get("ratio_vs_cublas_tf32")}
                                for name, r in rows.items()}}
            out.write(json.dumps(line) + "\n")
            out.flush()
            print("x".join(map(str, shape)).ljust(16), " ".join(
                f"{name}={r['median_ms'] * 1e3:.1f}us{'' if r.get('passed') else '!FAIL'}"
                for name, r in rows.items() if r.get("median_ms")), flush=True)


if __name__ == "__main__":
    main()
