#!/usr/bin/env bash
# thin v3 on the GPU: correctness at thin shapes (M ≤ 8 or K ≤ 8, odd and aligned), then `thin`,
# `small` and `default` timed beside cuBLAS FP32 at the thin shapes the random records lost or won
# with version 2 (thin.md). Usage: OUT=dir bash experiments/thin-v3/run.sh
set -u
OUT=${OUT:-out}; mkdir -p "$OUT/thin-v3"
for s in 1x1x1 1x4097x3 8x2134x50 6x3645x2740 4x365x1580 8x8192x8192 5x7x129 2x33x8191 \
         3126x7755x4 5057x753x4 8192x8192x8 129x31x1 8191x5x7 4x4x4 1x1201x400 3194x2590x1; do
  timeout 60 gemmlab check thin default --shape "$s" --no-perf --seed 5 > "$OUT/thin-v3/check-$s.txt" 2>&1
  echo "check $s rc=$?"
done
for s in 3126x7755x4 5057x753x4 6x3645x2740 4x365x1580 8x2134x50 340x4059x7 1x1201x400 3194x2590x1 \
         8192x8192x8 8x8192x8192; do
  timeout 60 gemmlab bench thin small default --shape "$s" --seed 3 --iters 50 --json > "$OUT/thin-v3/bench-$s.json" 2> /dev/null
  python3 - "$OUT/thin-v3/bench-$s.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(r["shape"], " ".join(f"{x['name']} {x['median_ms'] * 1e3:.1f}us {x.get('ratio_vs_cublas') or 0:.2f}x"
                          for x in r["results"] if x.get("median_ms")),
      "clock", r.get("clocks_during_timing", {}).get("sm_clock_mhz"))
PY
done
