#!/usr/bin/env bash
# The experiments' steps on a lent GPU machine (each times or checks an arm of experiments/; its
# entry in experiments/README.md says what it asks): run from the repository root, e.g.
# `bash experiments/gpu_session.sh install tail-split`. A step it does not have is the product's
# (scripts/gpu_session.sh: install, check, bench, …), run from here as there. Logs and OUT as there.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/session_lib.sh
. scripts/session_lib.sh
for step in "$@"; do
  case $step in
    # Whether this machine's NVRTC builds each kernel alike in fresh processes, and into the
    # cubins the installed tune record timed (experiments/build-lottery).
    builds) for i in 1 2 3; do
              GEMMLAB_CACHE=$(mktemp -d) run "builds-$i" 120 python3 experiments/build-lottery/compile_once.py
            done
            run builds-default 120 gemmlab explain default ;;
    # default with split-K raised to at least P parts (PARTS), at large shapes (experiments/accuracy).
    accuracy-parts) for p in ${PARTS:-1 4 8}; do run "parts-$p" 300 python3 experiments/accuracy/parts.py "$OUT/parts.jsonl" "$p"; done ;;
    # Each kernel of default's calls and of cuBLAS's, timed one by one by ncu (STEP_SHAPES: MxNxK ...):
    # what the pre-passes cost next to the product (experiments/small-odd).
    steps) run steps 300 "$(python3 -m gemmlab.cuda.tools find ncu)" --clock-control none \
             --metrics gpu__time_duration.sum --csv python3 experiments/small-odd/steps.py \
             ${STEP_SHAPES:-8192x6144x4096 8191x6143x4095}
           cp "$LOGS/steps.txt" "$OUT/steps.csv" ;;
    # `short` beside small, thin, default and cuBLAS where N ≤ 32, from 2^14 outputs to 2^26: where its
    # kernel pays, the output floor `default` would run it above (short.md).
    short-floor) run short-floor 400 gemmlab sweep short small thin default \
                   $(python3 -c "from gemmlab.policy.preludes import FLOOR_SHAPES as F; print(*[f'--shape {s}' for s in F['short']])") \
                   --out "$LOGS/results"
                 cp "$(ls -t "$LOGS"/results/*/sweep-*.json | head -1)" "$OUT/short-floor.json" ;;
    # `gemv` beside thin, default and cuBLAS where K = 1, from 2^10 elements of A to 2^26, few rows and
    # many, N aligned and odd: where its kernel pays, and the rows `default` would run it from (gemv.md).
    gemv-floor) run gemv-floor 400 gemmlab sweep gemv thin default \
                  $(python3 -c "from gemmlab.policy.preludes import FLOOR_SHAPES as F; print(*[f'--shape {s}' for s in F['gemv']])") \
                  --out "$LOGS/results"
                cp "$(ls -t "$LOGS"/results/*/sweep-*.json | head -1)" "$OUT/gemv-floor.json" ;;
    # `thin` beside small, default and cuBLAS where M ≤ 8, B from 4·10³ elements to 6.7·10⁷, then seed
    # 2040's other shapes where default ran thin_rows (8x7165x169 is among the first): since small's copies were hoisted (1331c3f), where
    # thin_rows still pays (experiments/thin-floor).
    thin-floor) run thin-floor 400 gemmlab sweep thin small default \
                  $(for s in 1x301x299 1x4096x1024 1x8191x8191 2x64x63 2x1000x201 2x7001x600 3x200x41 3x1500x701 \
                             3x5000x5001 5x100x1000 5x3001x300 5x2000x1999 5x8000x3000 8x40x80 8x500x501 8x7165x169 \
                             8x2000x1500 8x4000x4001 8x8192x8192 7x333x3333 \
                             3x25x5690 3x5482x4750 3x42x156 3x1x90 2x268x22 8x65x18 8x41x80; do echo --shape $s; done) \
                  --out "$LOGS/results"
                cp "$(ls -t "$LOGS"/results/*/sweep-*.json | head -1)" "$OUT/thin-floor.json" ;;
    # The classes whose winners were calibrated against `small` before its copies were hoisted
    # (1331c3f) and that few random shapes reach: tiny-aligned (one shape in seeds 2033–2040, where
    # tma-warp ran 27 % ahead), tiny-odd, small-odd and tiny-odd-n (seed 2040's worst long
    # reductions), each shape drawn in its class (experiments/class-floor/shapes.py); then
    # recalibrate on it.
    class-floor) run class-floor 500 gemmlab sweep default small tma-warp splitk tma \
                   $(python3 experiments/class-floor/shapes.py) --out "$LOGS/results"
                 cp "$(ls -t "$LOGS"/results/*/sweep-*.json | head -1)" "$OUT/class-floor.json" ;;
    # `small` with 8×8 outputs a thread beside small, default and cuBLAS at the random records' worst
    # long reductions onto few outputs (experiments/small-tiles).
    small-tiles) run small-tiles 400 python3 experiments/small-tiles/tiles.py "$OUT/small-tiles.jsonl" ;;
    # The tile copies with their addresses worked out once a block (HOIST 1) against as shipped, in
    # `small` and `default`, then `mma-split` and `tf32`, at seed 2039's shapes where default ran small
    # (experiments/small-hoist).
    small-hoist) run small-hoist 400 python3 experiments/small-hoist/hoist.py "$OUT/small-hoist.jsonl"
                 run small-hoist-tf32 300 env RUNGS="mma-split tf32" python3 experiments/small-hoist/hoist.py \
                     "$OUT/small-hoist-tf32.jsonl" ;;
    # wgmma-swap with split-K on its persistent grid (SPLIT 1) beside tf32, wgmma-swap and cuBLAS TF32,
    # where its tiles are few (experiments/swap-split); first its GPU test (a kernel that hangs stops here).
    swap-split) run swap-split-test 300 python3 -m pytest -q -p no:cacheprovider -x tests/test_gpu.py tests/test_export.py -k "split_twins and wgmma-swap" \
                  || { echo "=== swap-split's test failed: its timing is not run"; continue; }
                run swap-split 400 python3 experiments/swap-split/swap_split.py "$OUT/swap-split.jsonl" ;;
    # wgmma-3xtf32 with split-K on its persistent grid (SPLIT 1) beside 3xtf32, wgmma-3xtf32 and cuBLAS
    # FP32, where its tiles are few (experiments/3x-split); first its GPU tests (a kernel that hangs stops here).
    3x-split) run 3x-split-test 300 python3 -m pytest -q -p no:cacheprovider -x tests/test_gpu.py tests/test_export.py -k "split_twins and 3xtf32" \
                || { echo "=== 3x-split's tests failed: its timing is not run"; continue; }
              run 3x-split 400 python3 experiments/3x-split/three_split.py "$OUT/3x-split.jsonl" ;;
    # default beside default with its split bigtile launches on a line of blocks whose last wave's tiles
    # split into more parts (bigtile's SPLIT 2, policy.twins.tail_twin; experiments/tail-split); first its
    # GPU tests (a kernel that hangs stops here).
    tail-split) run tail-split-test 300 python3 -m pytest -q -p no:cacheprovider -x tests/test_gpu.py tests/test_export.py -k "tail_split" \
                  || { echo "=== tail-split's tests failed: its timing is not run"; continue; }
                run tail-split 500 python3 experiments/tail-split/tail_split.py "$OUT/tail-split.jsonl" ;;
    # The same at the four short reductions for tma, splitk and tma-warp, each beside its tail twins.
    tail-rungs) run tail-rungs 400 python3 experiments/tail-split/tail_split.py "$OUT/tail-rungs.jsonl" --rungs ;;
    # splitk and tma in 256×128 tiles (WARPS_M 4, one block an SM) beside default and tma-warp at long
    # reductions onto few outputs (experiments/wide-split).
    wide-split) run wide-split 400 python3 experiments/wide-split/wide_split.py "$OUT/wide-split.jsonl" ;;
    # The split-K twins no rung runs yet (experiments/tools/twins.py) under one sanitizer tool each:
    # `gemmlab check` and the steps above walk the rungs only.
    twins-memcheck|twins-racecheck|twins-synccheck)
      wrap=$(python3 -m gemmlab.cuda.tools sanitizer "${step#twins-}") || { echo "=== $step: no compute-sanitizer"; continue; }
      run "$step" 400 $wrap python3 experiments/tools/twins.py ;;
    # default against the very kernel it runs (small's), a second small, and default's entry with
    # small's launches, at tiny shapes (experiments/default-gap).
    default-gap) run default-gap 300 python3 experiments/default-gap/gap.py "$OUT/default-gap.jsonl" ;;
    # The split-K policy's least part (cuda/handoff.SPLIT_MIN_N) at 128, 64 and 32 (experiments/split-min).
    split-min) run split-min 400 python3 experiments/split-min/split_min.py "$OUT/split-min.jsonl" ;;
    # The same for the least part where tiles leave slots idle, 128 (as before) against 64 (installed).
    split-idle) run split-idle 400 env KNOB=SPLIT_MIN_N_IDLE SETTINGS="128 64" RUNGS="default splitk small" \
                  python3 experiments/split-min/split_min.py "$OUT/split-idle.jsonl" \
                  256x256x256 300x2048x200 512x512x512 1024x1024x1024 429x2107x328 640x4096x384 \
                  15x226x292 159x2161x43 2048x128x2048 1000x1000x1000 ;;
    # What each second-stream fixture does at a call: waits, is ordered with the caller's stream, or races.
    race-probe) run race-probe 300 python3 experiments/langs-gpu/race_probe.py tests/fixtures/solutions/second_stream.cu \
                  tests/fixtures/solutions/second_stream_cute.py tests/fixtures/solutions/second_stream.mojo \
                  tests/fixtures/solutions/second_stream_tilelang.py ;;
    # The product's step; a failed smoke stops this session as it stops that one.
    *) bash scripts/gpu_session.sh "$step" || { [ "$step" != smoke ] || break; } ;;
  esac
done
tar -czf "$OUT/logs.tgz" -C "$LOGS" .
