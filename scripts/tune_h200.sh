#!/usr/bin/env bash
# The knob sweeps behind the configurations of the fast rungs, as run on the H200.
# Each line: scripts/tune.py RUNG VARIANT... (variants override the registry entry).
# The first pass (22:10 UTC, 2026-11-29) chose BK=16/MIN_BLOCKS=2 for warptile and
# transpose_b with a 128×256×16 tile for triton-presplit; this pass chooses how
# often the 3xTF32 rungs add their tensor-core partial sums in FP32.
set -u
T="python3 scripts/tune.py"
$T warptile '{}' '{"BK": 8}' '{"MIN_BLOCKS": 1}' '{"BK": 8, "MIN_BLOCKS": 1}' '{"PAD_A": 4}' \
   '{"A_DOWN_COLUMNS": 1}' '{"A_DOWN_COLUMNS": 1, "BK": 8}' '{"A_DOWN_COLUMNS": 1, "PAD_A": 4}'
$T warptile --launch 1 '{}' '{"A_DOWN_COLUMNS": 1}'
$T triton-presplit '{}' '{"promote": false}' '{"steps": 2, "stages": 2}' '{"red": 32, "stages": 2}' \
   '{"warps": 4}' '{"rows": 256, "cols": 128}' \
   '{"transpose_b": false}' '{"red": 16, "steps": 2}' '{"group": 4}' \
   '{"group": 16}'
$T triton-tf32x3 '{}' '{"promote": false}' '{"precision": "tf32x3", "promote": false}' \
   '{"precision": "tf32x3", "promote": true}' '{"rows": 256}' '{"cols": 256, "red": 16}'
