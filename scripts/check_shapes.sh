#!/usr/bin/env bash
# gemmlab check of the given rungs at each of CHECK_SHAPES (MxNxK ...), one line of verdicts a
# shape: a quick correctness pass over the shapes a new launch is for, before the case groups.
# Usage: CHECK_SHAPES="821x6114x19 1x1201x400" bash scripts/check_shapes.sh RUNG...
set -uo pipefail
rc=0
for s in ${CHECK_SHAPES:?}; do
  out=$(timeout 120 gemmlab check "$@" --shape "$s" --no-perf --seed 5 2>&1); r=$?
  [ $r -eq 0 ] || rc=1
  echo "$s rc=$r: $(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)"
  [ $r -eq 0 ] || echo "$out" | tail -8
done
exit $rc
