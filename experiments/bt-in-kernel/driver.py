"""Scratch (not committed): BT_IN_KERNEL correctness against the pre-pass build, then timing."""
import dataclasses, json, statistics, sys, time
from functools import partial
import torch
from gemmlab import registry, runtime
from gemmlab.bench.run import time_interleaved
from gemmlab.bench.device_info import ClockSampler
from gemmlab.cuda.dispatch import CudaSolver
from gemmlab.cuda import handoff
from gemmlab.judge.cases import uniform
from gemmlab.reference import error_figures, reference64, strict_fp32

runtime.configure()
impl = registry.get("wgmma-ws")
def solver(defs):
    return CudaSolver(tuple(l.with_defines(defs) for l in impl.launches))
mode = sys.argv[1]
variants = [json.loads(v) for v in sys.argv[2:]] or [{"BT_IN_KERNEL": 2}]
base = solver({})
dev = torch.device("cuda")
if mode == "check":
    shapes = [(300, 200, 500), (1, 1, 1), (33, 31, 65), (129, 257, 255), (17, 8192, 33), (1000, 4096, 70),
              (256, 96, 512), (2048, 2048, 2048), (8191, 6143, 4095), (8192, 6144, 4096)]
    for defs in variants:
        s = solver(defs)
        for seed, (m, n, k) in enumerate(shapes):
            a, b = uniform((m, n), seed, dev, -1, 1), uniform((n, k), seed + 100, dev, -1, 1)
            ref = torch.full((m, k), float("nan"), device=dev); base(a, b, ref, m, n, k)
            for rep in range(2):
                c = torch.full((m, k), float("nan"), device=dev)
                s(a, b, c, m, n, k); torch.cuda.synchronize()
                same = torch.equal(c, ref)
                st = handoff.flags(dev, 1)[:600].abs().sum().item()
                fig = error_figures(c, reference64(a, b))
                print(f"{defs} {m}x{n}x{k} rep{rep}: bitwise_equal_prepass={same} norm_max={fig.norm_max:.2e} "
                      f"unwritten={fig.unwritten} state_left={st}", flush=True)
elif "x" in mode:
    m, n, k = map(int, mode.split("x"))
    a, b = uniform((m, n), 1, dev, -1, 1), uniform((n, k), 2, dev, -1, 1)
    tf = registry.get("torch-tf32")._solve
    solvers = {"torch-tf32": lambda c: tf(a, b, c, m, n, k), "ws": lambda c: base(a, b, c, m, n, k)}
    for defs in variants:
        s = solver(defs); solvers[json.dumps(defs)] = lambda c, s=s: s(a, b, c, m, n, k)
        if defs.get("BT_NO_WAIT") == 2:  # give the product alone a real Bᵀ to read
            c0 = torch.empty(m, k, device=dev); s(a, b, c0, m, n, k); torch.cuda.synchronize()
            ws = next(iter(s._workspace.values()))
            from gemmlab.cuda.pad import pitch
            ld = pitch(n)
            ws[: k * ld * 4].view(torch.float32).view(k, ld)[:, :n] = b.T
            s(a, b, c0, m, n, k); torch.cuda.synchronize()
            print("product-only variant: norm_max", error_figures(c0, reference64(a, b)).norm_max)
    outs = {key: torch.empty(m, k, device=dev) for key in solvers}
    for rnd in range(2):
        with ClockSampler() as cs:
            times, errors = time_interleaved({kk: partial(f, outs[kk]) for kk, f in solvers.items()},
                                             outs, warmup=5, iters=20, gpu=True)
        print(errors, cs.summary())
        t0 = statistics.median(times["torch-tf32"])
        for key in times:
            ms = statistics.median(times[key])
            print(f"round {rnd} {key:30s} {ms:7.4f} ms  vs cuBLAS TF32 {t0/ms:5.3f}", flush=True)

def prepass_variants():
    """Scratch: the pre-pass tile order (TRANSPOSE_GROUP) in the launches, beside the baseline."""
    import dataclasses as dc
    from gemmlab.cuda import hopper as hp, transposed as tr
    m, n, k = 8192, 6144, 4096
    a, b = uniform((m, n), 1, dev, -1, 1), uniform((n, k), 2, dev, -1, 1)
    for base_name, impl_name, mod, attr in (("torch-tf32", "wgmma-ws", hp, "TRANSPOSE"),
                                            ("torch", "default", tr, "TRANSPOSE_FP32")):
        yard = registry.get(base_name)._solve
        solvers = {base_name: lambda c, y=yard: y(a, b, c, m, n, k)}
        orig = getattr(mod, attr)
        for g in (0, 1):
            setattr(mod, attr, dc.replace(orig, defines={"TRANSPOSE_GROUP": g}))
            s = CudaSolver(tuple(registry.get(impl_name).launches))
            c0 = torch.empty(m, k, device=dev); s(a, b, c0, m, n, k)  # plans now, with this order
            solvers[f"{impl_name} G{g}"] = lambda c, s=s: s(a, b, c, m, n, k)
        setattr(mod, attr, orig)
        outs = {key: torch.empty(m, k, device=dev) for key in solvers}
        for rnd in range(2):
            with ClockSampler() as cs:
                times, errors = time_interleaved({kk: partial(f, outs[kk]) for kk, f in solvers.items()},
                                                 outs, warmup=3, iters=20, gpu=True)
            print(errors, cs.summary())
            t0 = statistics.median(times[base_name])
            for key in times:
                ms = statistics.median(times[key])
                print(f"round {rnd} {key:30s} {ms:7.4f} ms  vs {base_name} {t0/ms:5.3f}", flush=True)
        ref = outs[f"{impl_name} G0"]
        print("G1 bitwise equal G0:", torch.equal(outs[f"{impl_name} G1"], ref))

if mode == "prepass":
    prepass_variants()
