#!/usr/bin/env bash
# The knob sweeps behind the configurations of the fast rungs, as run on the H200.
# Usage: bash scripts/tune_h200.sh [warptile] [presplit] [tf32x3] [triton]   (default: all)
# Each line: scripts/tune.py RUNG VARIANT... (variants override the registry entry).
# Chosen from these on 2026-11-29: warptile BK=16, MIN_BLOCKS=2 (the rest were slower);
# triton-presplit transposed B, a promoted 128×128×32 tile (accurate and as fast as chaining).
set -u
T="python3 scripts/tune.py"
warptile() {
  # PAD_A, A_DOWN_COLUMNS and B_ASYNC were tried too, then removed from the kernel (warptile.md).
  $T warptile '{}' '{"BK": 8}' '{"MIN_BLOCKS": 1}' '{"BK": 8, "MIN_BLOCKS": 1}'
  $T warptile '{}' '{"BK": 16}' --launch 1
}
presplit() {
  $T triton-presplit '{}' '{"promote": false}' '{"red": 32, "stages": 2}' '{"warps": 4}' \
     '{"transpose_b": false}' '{"red": 16, "steps": 2}' '{"group": 4}' '{"group": 16}' \
     '{"cols": 256, "red": 16, "promote": false}' '{"cols": 256, "red": 16}'
}
tf32x3() {
  $T triton-tf32x3 '{}' '{"promote": false}' '{"precision": "tf32x3", "promote": false}' \
     '{"precision": "tf32x3", "promote": true}' '{"rows": 256}' '{"cols": 256, "red": 16}'
}
triton() {
  $T triton '{}' '{"rows": 128, "cols": 128, "warps": 8}' '{"rows": 128, "cols": 64, "warps": 4}' \
     '{"rows": 128, "cols": 128, "red": 16, "warps": 8, "stages": 4}' \
     '{"rows": 128, "cols": 128, "warps": 8, "stages": 2}'
}
for part in "${@:-warptile presplit tf32x3 triton}"; do
  for p in $part; do "$p"; done
done
