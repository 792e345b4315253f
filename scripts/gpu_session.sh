#!/usr/bin/env bash
# One batched session on a lent GPU machine: install, judge, test, benchmark, sanitize.
# Usage: bash scripts/gpu_session.sh STEP... (install check pytest bench inspect sanitize)
# Writes logs under $OUT (or ./out); every step is bounded by `timeout`.
set -uo pipefail
OUT="${OUT:-out}"; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
run() { local name=$1 limit=$2; shift 2; echo "=== $name ($(date +%T))"; timeout "$limit" "$@" >"$OUT/$name.txt" 2>&1; local rc=$?; echo "=== $name rc=$rc"; tail -n 25 "$OUT/$name.txt"; }
CUDA_RUNGS="naive naive-fma smem-16 row-4 tiling-1d tiling-2d float4 float4-bk16 float4-128 double-buffer-64 double-buffer-128 cp-async wmma-tf32"
for step in "$@"; do
  case $step in
    install) run install 300 python3 -m pip install --no-deps --no-build-isolation -e . ; nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1 ;;
    check) run check 400 gemmlab check --seed 2026 ;;
    pytest) run pytest 500 python3 -m pytest -q -m gpu tests ;;
    bench) run bench 300 gemmlab bench --seed 7 --out "$OUT/results" --latest "$OUT/h200-latest.json" --csv "$OUT/bench.csv" ;;
    inspect) run inspect 200 gemmlab inspect ;;
    memcheck|racecheck|synccheck)
      PYTORCH_NO_CUDA_MEMORY_CACHING=1 run "$step" 400 compute-sanitizer --tool "$step" --print-limit 20 \
        python3 -m gemmlab check $CUDA_RUNGS --group notes --no-perf --seed 11 ;;
    *) echo "unknown step $step" ;;
  esac
done
