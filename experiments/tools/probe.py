"""Run one implementation once at one shape and say where it is wrong (a debugging aid).

Usage: python experiments/tools/probe.py NAME M N K
Prints the error figures and, if any element is off, which rows and columns
(modulo the rung's tile) hold the wrong elements: a wrong fragment map or
swizzle shows as a pattern there.
"""

from __future__ import annotations

import sys

import torch

from gemmlab import registry, runtime
from gemmlab.judge.cases import uniform
from gemmlab.reference import GATES, error_figures, poison_, reference64


def main() -> None:
    runtime.configure()  # before CUDA initialises: keep ptxas reports
    name, (m, n, k) = sys.argv[1], map(int, sys.argv[2:5])
    impl = registry.get(name)
    dev = torch.device("cuda")
    a, b = uniform((m, n), 1, dev), uniform((n, k), 2, dev)
    c = poison_(torch.empty(m, k, device=dev))
    launch = impl.dispatch(a, b, c, m, n, k)
    print(f"{name} {m}x{n}x{k}: {impl.launch_label(launch) if launch else '-'}")
    impl.solve(a, b, c, m, n, k)
    torch.cuda.synchronize()
    ref = reference64(a, b)
    fig = error_figures(c, ref)
    print(fig)
    bad = ~((c.double() - ref).abs() <= 10 * GATES[impl.precision] * ref.abs().max())
    if bad.any():
        rows, cols = bad.nonzero(as_tuple=True)
        tr, tc = (impl.tile or (128, 128, 0))[:2]
        print(f"{int(bad.sum())} bad; rows mod {tr}: {torch.bincount(rows % tr).nonzero().flatten().tolist()[:40]}")
        print(f"cols mod {tc}: {torch.bincount(cols % tc).nonzero().flatten().tolist()[:64]}")
        print("first bad:", [(int(r), int(q)) for r, q in zip(rows[:8], cols[:8], strict=True)])
        print("values:", c[rows[:4], cols[:4]].tolist(), "ref:", ref[rows[:4], cols[:4]].tolist())


if __name__ == "__main__":
    main()
