"""Run TMA_COPY variants of splitk / bigtile on a few small shapes (edges, split-K, padded B),
for compute-sanitizer: python sanitize_variant.py 'splitk:{"TMA_COPY":1}' ...
Exits 1 if any case fails the check (the sanitizer reports its own findings)."""
import dataclasses
import json
import sys

import torch

from gemmlab import registry, runtime
from gemmlab.judge.cases import Case
from gemmlab.judge.runner import run_case
from gemmlab.reference import Precision

runtime.configure()
dev = torch.device("cuda")
SHAPES = ((1, 1, 1), (33, 17, 65), (129, 257, 131), (300, 1000, 200), (256, 512, 384), (77, 4100, 63))
bad = 0
for arg in sys.argv[1:]:
    rung, text = arg.split(":", 1)
    base = registry.get(rung)
    knobs = json.loads(text)
    impl = dataclasses.replace(base, name=arg, launches=tuple(x.with_defines(knobs) for x in base.launches))
    for i, s in enumerate(SHAPES):
        r = run_case(impl.solve, Precision(impl.precision), Case(f"{s}", "custom", s), 11 + i, dev)
        bad += not r.passed
        print(f"{arg} {s} {'pass' if r.passed else 'FAIL ' + str(r.reason)}", flush=True)
sys.exit(1 if bad else 0)
