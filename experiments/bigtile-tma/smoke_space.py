"""Every TMA_COPY candidate of the bigtile and splitk tune spaces, once, on two small shapes
(one split-K, one with a padded B), before a tune: a candidate whose barrier never completes
would otherwise hold the whole tune to its time limit. Exits 1 if any fails the check."""
import dataclasses
import sys

import torch

from gemmlab import registry, runtime
from gemmlab.judge.cases import Case
from gemmlab.judge.runner import run_case
from gemmlab.reference import Precision
from gemmlab.policy.spaces import SPACES

runtime.configure()
dev = torch.device("cuda")
SHAPES = {0: (300, 1000, 512), 1: (257, 333, 259)}  # launch 0 needs K % 4 == 0; launch 1 any shape
bad = 0
for name in ("bigtile", "splitk"):
    space = SPACES[name]
    base = registry.get(name)
    for index in space.launches:
        for knobs in space.candidates(index):
            if not knobs.get("TMA_COPY"):
                continue
            # this launch, on a shape its precondition admits (launch 1, the fallback, after launch 0)
            impl = dataclasses.replace(base, launches=tuple(space.build(i, knobs) for i in range(index, 2)))
            s = SHAPES[index]
            r = run_case(impl.solve, Precision(impl.precision), Case(str(s), "custom", s), 5, dev)
            bad += not r.passed
            print(f"{name}#{index} {knobs} {s}: {'pass' if r.passed else 'FAIL ' + str(r.reason)}", flush=True)
sys.exit(1 if bad else 0)
