"""Scratch (not committed): wgmma-swap variants timed exactly as `gemmlab bench` times (its measure())."""
import dataclasses, json, sys
from gemmlab import registry, runtime
from gemmlab.bench.run import measure
runtime.configure()
base = registry.get("wgmma-swap")
impls = [registry.get("torch-tf32")]
for text in sys.argv[1:]:
    defs = json.loads(text)
    impls.append(dataclasses.replace(base, name="swap " + text,
                                     launches=tuple(l.with_defines(defs) for l in base.launches)))
for rep in range(2):
    rec = measure(impls, None, 5, 50, False, 7 + rep)
    for r in rec["results"]:
        print(f"rep {rep} {r['name']:55s} {r['median_ms']:.4f} ms  vs TF32 {r.get('ratio_vs_cublas_tf32') or 0:.3f}  "
              f"{r['passed']} {r['figures']['norm_max']:.3e}", flush=True)
    print(rec["clocks_during_timing"])
