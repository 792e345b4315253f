"""Run the split-K twins no rung runs yet, once each at a few shapes, and check them (a GPU aid).

The twins (`launches.wgmma_swap_split_launches`, `launches.wgmma_3xtf32_split_launches`, and
bigtile's tail split, `twins.tail_twin` of `tma-warp`'s and `splitk`'s launches) are not
registry rungs, so `gemmlab check` and the sanitizer steps of scripts/gpu_session.sh, which walk
the rungs, never reach them. This script runs them as variants of their rungs: each shape once on
fresh inputs in [-10, 10), judged against the float64 product at the rung's gate, every element
written, the split-K counters back at zero. Shapes are small enough for compute-sanitizer's
racecheck, and each splits on an H200 but the last, one unit (the unsplit path of the same build);
the tail split's first two split only the last wave's tiles (1056 whole of 1089 and 1122 tiles of
64×64; 264 of 289 of 128×128), the third every tile alike.
Exit status 1 if any result fails.

Usage (repository root, on a GPU): python experiments/tools/twins.py [swap-split|3x-split|tail-tma-warp|tail-splitk ...]
Under a sanitizer: $(python -m gemmlab.cuda.tools sanitizer racecheck) python experiments/tools/twins.py
"""

from __future__ import annotations

import dataclasses
import sys

import torch

from gemmlab import launches, registry, runtime
from gemmlab.cuda import handoff
from gemmlab.judge.cases import uniform
from gemmlab.policy import twins
from gemmlab.reference import error_figures, poison_, references, unwritten, verdict

SHAPES = [(256, 2048, 256), (300, 1025, 301), (130, 3000, 260), (64, 64, 64)]
TAIL_SHAPES = [(2112, 256, 2112), (2113, 200, 2111), (300, 1025, 301), (64, 64, 64)]


def _tails(rung: str):
    return lambda: tuple(twins.tail_twin(x) for x in launches.RUNGS[rung])


#: Each twin set: the rung it is a variant of, its launches, and the shapes it runs at.
TWINS = {
    "swap-split": ("wgmma-swap", launches.wgmma_swap_split_launches, SHAPES),
    "3x-split": ("wgmma-3xtf32", launches.wgmma_3xtf32_split_launches, SHAPES),
    "tail-tma-warp": ("tma-warp", _tails("tma-warp"), TAIL_SHAPES),
    "tail-splitk": ("splitk", _tails("splitk"), TAIL_SHAPES),
}


def main() -> int:
    names = sys.argv[1:] or list(TWINS)
    unknown = [x for x in names if x not in TWINS]
    if unknown:
        print(f"unknown twins {unknown}; known: {', '.join(TWINS)}", file=sys.stderr)
        return 2
    runtime.configure()  # before CUDA initialises
    dev = torch.device("cuda")
    failed = 0
    for name in names:
        rung, make, shapes = TWINS[name]
        impl = dataclasses.replace(registry.get(rung), name=name, launches=make())
        for m, n, k in shapes:
            a, b = uniform((m, n), 51, dev) * 10, uniform((n, k), 52, dev) * 10
            c = poison_(torch.empty(m, k, device=dev))
            launch = impl.dispatch(a, b, c, m, n, k)
            tail = getattr(launch.host, "tail", False)
            parts = launch.host.plan(launch, m, n, k) if tail else launch.host.parts(launch, m, n, k)
            impl.solve(a, b, c, m, n, k)
            torch.cuda.synchronize()
            ref64, _, floor = references(a, b)
            ok, why = verdict(error_figures(c, ref64, floor=floor), impl.precision)
            holes, counters = unwritten(c), int(handoff.counters(dev, 0).abs().sum())
            good = ok and holes == 0 and counters == 0
            failed += not good
            print(f"{name} {m}x{n}x{k} ({launch.name}, {parts}{'' if tail else ' parts'}): {'ok' if good else 'FAILED'} "
                  f"({why}; unwritten {holes}; counters {counters})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
