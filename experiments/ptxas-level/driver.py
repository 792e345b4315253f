"""`default`'s strict-FP32 launches built with ptxas's --register-usage-level (0..10, default 5;
levels 0-3, 4-5 and 6-10 give three different codes of bigtile here) and timed beside cuBLAS FP32
as `gemmlab bench` times (its measure(), 20 calls, seeds 7 and 8), at the performance shape, then
2048³ and 4096³. Each variant carries a REGLEVEL entry among its macros, which the wrapped
compile_source turns into the ptxas option (and out of the macros).

Usage: python driver.py LEVEL...
"""
import dataclasses
import sys

from gemmlab import registry, runtime
from gemmlab.bench.run import measure
from gemmlab.cuda import compiler, rung

runtime.configure()
plain = compiler.compile_source


def compile_with_level(source, arch=None, defines=None):
    defines = dict(defines or {})
    level = defines.pop("REGLEVEL", None)
    saved = compiler.PTXAS_OPTIONS
    if level is not None:
        compiler.PTXAS_OPTIONS = saved + (f"--register-usage-level={level}",)
    try:
        return plain(source, arch, defines)
    finally:
        compiler.PTXAS_OPTIONS = saved


rung.compile_source = compile_with_level
base = registry.get("default")
impls = [base] + [dataclasses.replace(base, name=f"default L{lv}",
                                      launches=tuple(x.with_defines({"REGLEVEL": int(lv)}) for x in base.launches))
                  for lv in sys.argv[1:]]
for shape, reps in ((None, 2), ((2048, 2048, 2048), 1), ((4096, 4096, 4096), 1)):
    for rep in range(reps):
        rec = measure(impls, shape, 5, 20 if shape is None else 50, False, 7 + rep)
        for r in rec["results"]:
            print(f"{rec['shape']} rep {rep} {r['name']:12s} {r['median_ms']:.4f} ms  vs cuBLAS {r.get('ratio_vs_cublas') or 0:.4f}"
                  f"  {r['passed']} viol {r['figures']['leetgpu_violations']}  {r['kernel']}", flush=True)
        print(rec["clocks_during_timing"], flush=True)
