# What scripts/gpu_session.sh (the product's steps) and experiments/gpu_session.sh (the
# experiments') share: the log folder, `run` (one bounded step, its log packed into $OUT/logs.tgz
# after each) and `sanitize` (one compute-sanitizer tool over the CUDA rungs). Sourced, not run.
set -uo pipefail
OUT="${OUT:-out}"; LOGS="${LOGS:-/tmp/gemmlab-logs}"; mkdir -p "$OUT" "$LOGS"
export PYTHONUNBUFFERED=1
# Said once a session: the experiments' runner sources this again for each step it passes on.
[ -n "${GEMMLAB_COMMIT:-}" ] || [ -n "${GEMMLAB_SESSION_WARNED:-}" ] \
  || { echo "=== GEMMLAB_COMMIT unset: records will name this checkout's git describe"; export GEMMLAB_SESSION_WARNED=1; }
# Each step re-packs the logs, so a run cut short still brings back what finished.
run() { local name=$1 limit=$2; shift 2; echo "=== $name ($(date +%T))"; timeout "$limit" "$@" >"$LOGS/$name.txt" 2>&1; local rc=$?; echo "=== $name rc=$rc"; tail -n "${TAIL:-15}" "$LOGS/$name.txt"; tar -czf "$OUT/logs.tgz" -C "$LOGS" . ; return $rc; }
sanitize() {  # one compute-sanitizer tool over every CUDA rung, on the notes' shapes
  local rungs wrap
  rungs=${SAN_RUNGS:-$(python3 -c "from gemmlab import registry; print(' '.join(i.name for i in registry.IMPLEMENTATIONS if i.family == 'cuda'))")}
  # The command line (and its environment) is gemmlab's own: gemmlab.cuda.tools.
  wrap=$(python3 -m gemmlab.cuda.tools sanitizer "$1") || { echo "=== $1: no compute-sanitizer"; return; }
  run "$1" 500 $wrap python3 -m gemmlab check $rungs ${SAN_ARGS:---group notes} --no-perf --seed 11
}
