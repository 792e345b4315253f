# Stall reasons, instructions and issue activity of bigtile variants at the performance shape (ncu).
# Usage: bash ncu_stalls.sh '{"BK": 8, "STAGES": 3}' ...   (from the repository root, with lean.patch applied)
M=""
for r in dispatch_stall long_scoreboard short_scoreboard mio_throttle lg_throttle barrier math_pipe_throttle not_selected wait no_instruction branch_resolving selected drain membar sleeping tex_throttle imc_miss misc; do M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
M="${M#,},smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg"
for v in "$@"; do
  echo "=== $v"
  timeout 150 ncu -k regex:bigtile --launch-skip 2 --launch-count 1 --metrics "$M" python3 experiments/at2/ncu_one.py "$v" 2>&1 | grep -E "bigtile\[|stalled|inst_executed|issue_active|cycles_elapsed" | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
done
