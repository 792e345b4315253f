#!/usr/bin/env bash
# The knob sweeps behind the configurations of the fast rungs, as run on the H200.
# Each line: scripts/tune.py RUNG VARIANT... (variants override the registry entry).
set -u
T="python3 scripts/tune.py"
$T warptile '{}' '{"BK": 8}' '{"MIN_BLOCKS": 1}' '{"BK": 8, "MIN_BLOCKS": 1}'
$T triton-presplit '{}' '{"transpose_b": false}' '{"red": 16, "stages": 4}' \
   '{"cols": 256, "red": 16, "stages": 3}' '{"rows": 256, "red": 16, "stages": 3}' \
   '{"cols": 256, "stages": 2}' '{"rows": 256, "stages": 2}' '{"warps": 4}' \
   '{"cols": 64, "warps": 4, "stages": 4}' '{"red": 16, "stages": 4, "transpose_b": false}'
$T triton-tf32x3 '{}' '{"warps": 4}' '{"cols": 256, "stages": 3}' '{"red": 16, "stages": 4}' \
   '{"rows": 64, "warps": 4, "stages": 4}' '{"rows": 256, "stages": 3}'
