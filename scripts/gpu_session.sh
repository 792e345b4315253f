#!/usr/bin/env bash
# One batched session on a lent GPU machine: install, judge, test, benchmark, sanitize.
# Usage: bash scripts/gpu_session.sh STEP...   (see the case list below)
# NEW_RUNGS / NEW_TESTS: the rungs and test filter of the `smoke`, `new` and `new-tests` steps;
# SAN_RUNGS: the rungs the sanitizer steps cover (default: every CUDA rung).
# WHEELS: the folder of CuTe DSL, Mojo and TileLang wheels the `langs-install` step installs from
# (default /tmp/wheels); a wheel split for transfer (NAME.whl.part-aa, -ab, …) is joined there
# first and checked against the folder's SHA256SUMS. `langs` = langs-install, then each
# language's GPU tests (langs-cute, langs-mojo, langs-tilelang), then langs-bench.
# GEMMLAB_COMMIT: the commit of the tree sent to the machine, which tune records and exports
# name; set it where the machine's copy of .git may be older than the tree (the device tool's is).
# Each step's full log goes to $LOGS; at the end they are packed into $OUT/logs.tgz
# (the device tool brings back at most 8 files). Every step is bounded by `timeout`.
set -uo pipefail
OUT="${OUT:-out}"; LOGS="${LOGS:-/tmp/gemmlab-logs}"; mkdir -p "$OUT" "$LOGS"
export PYTHONUNBUFFERED=1
[ -n "${GEMMLAB_COMMIT:-}" ] || echo "=== GEMMLAB_COMMIT unset: records will name this checkout's git describe"
# Each step re-packs the logs, so a run cut short still brings back what finished.
run() { local name=$1 limit=$2; shift 2; echo "=== $name ($(date +%T))"; timeout "$limit" "$@" >"$LOGS/$name.txt" 2>&1; local rc=$?; echo "=== $name rc=$rc"; tail -n "${TAIL:-15}" "$LOGS/$name.txt"; tar -czf "$OUT/logs.tgz" -C "$LOGS" . ; return $rc; }
sanitize() {  # one compute-sanitizer tool over every CUDA rung, on the notes' shapes
  local rungs wrap
  rungs=${SAN_RUNGS:-$(python3 -c "from gemmlab import registry; print(' '.join(i.name for i in registry.IMPLEMENTATIONS if i.family == 'cuda'))")}
  # The command line (and its environment) is gemmlab's own: gemmlab.cuda.tools.
  wrap=$(python3 -m gemmlab.cuda.tools sanitizer "$1") || { echo "=== $1: no compute-sanitizer"; return; }
  run "$1" 500 $wrap python3 -m gemmlab check $rungs ${SAN_ARGS:---group notes} --no-perf --seed 11
}
for step in "$@"; do
  case $step in
    install) run install 300 python3 -m pip install --no-deps --no-build-isolation -e . ; nvidia-smi >"$LOGS/nvidia-smi.txt" 2>&1 ;;
    check) run check 400 gemmlab check --seed 2026 ;;
    pytest) run pytest 500 python3 -m pytest -q -m gpu tests ;;
    bench) run bench 300 gemmlab bench --seed 7 --iters 20 --out "$LOGS/results" --latest "$OUT/h200-latest.json" --csv "$LOGS/bench.csv" ;;
    # test_gpu.py alone took about 4 minutes on 2026-12-02 (every rung at every case, the performance
    # shape included); test_properties.py and test_export.py are steps of their own, so that a
    # limit cuts one file short, not all three: `gpu-tests` runs the three.
    gpu-tests) bash "$0" gpu-cases gpu-properties export-builds ;;
    gpu-cases) run gpu-cases 400 python3 -m pytest -q -p no:cacheprovider -rfs tests/test_gpu.py ;;
    gpu-properties) run gpu-properties 500 python3 -m pytest -q -p no:cacheprovider -rfs tests/test_properties.py ;;
    judge-tests) run judge-tests 500 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_judge_gpu.py tests/test_userfile.py ;;
    inspect) run inspect 200 gemmlab inspect ;;
    memcheck|racecheck|synccheck) sanitize "$step" ;;
    sanitize) run sanitize 900 gemmlab check --sanitize ;;
    pytest-all) run pytest-all 900 python3 -m pytest -q tests ;;
    tune) run tune 400 bash scripts/tune_h200.sh ;;
    # Whether this machine's NVRTC builds each kernel alike in fresh processes, and into the
    # cubins the installed tune record timed (experiments/build-lottery).
    builds) for i in 1 2 3; do
              GEMMLAB_CACHE=$(mktemp -d) run "builds-$i" 120 python3 experiments/build-lottery/compile_once.py
            done
            run builds-default 120 gemmlab explain default ;;
    tune-default) run tune-default 560 gemmlab tune ${TUNE_RUNGS:-bigtile splitk warptile float4} --install --out "$LOGS/results"
                  cp src/gemmlab/tuned/*.json "$OUT/" ;;
    # A new or changed kernel first on one small shape, briefly: a kernel that hangs (a barrier
    # never completing) would otherwise hold every later step to its whole time limit.
    smoke) run smoke 90 gemmlab check ${NEW_RUNGS:-mma-tf32 wgmma-tma wgmma-ws torch-tf32} --shape 300 200 500 --no-perf \
             || { echo "=== smoke failed: the steps after it are not run"; break; } ;;
    new) run new 400 gemmlab check ${NEW_RUNGS:-mma-tf32 wgmma-tma wgmma-ws torch-tf32} --seed 2026 ;;
    new-tests) run new-tests 400 python3 -m pytest -q tests/test_properties.py tests/test_gpu.py \
                 -k "${NEW_TESTS:-warptile or presplit or tf32x3 or other_stream or illegal_address}" ;;
    study) run study 300 gemmlab study buffering --out "$LOGS/results"
           cp "$(ls -t "$LOGS"/results/studies/*/*.json | head -1)" "$OUT/study-buffering.json" ;;
    sweep) run sweep 400 gemmlab sweep ${SWEEP_RUNGS:-} --out "$LOGS/results"
           cp "$(ls -t "$LOGS"/results/*/sweep-*.json | head -1)" "$OUT/sweep.json" ;;
    # Every exported CUDA rung built with each grader's flags (export/builds.py) and run here.
    export-builds) run export-builds 560 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_export.py ;;
    # The exported rung (EXPORT_RUNG, default `default`) judged as graders build it, once per flag set
    # (JUDGE_FLAGS, ';'-separated; an empty one is nvcc's defaults), SM clock and power sampled beside.
    export-judge) gemmlab export "${EXPORT_RUNG:-default}" -o "$LOGS/export.cu" --force >/dev/null
          nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv -lms 500 >"$LOGS/export-judge-smi.csv" 2>&1 &
          smi=$!
          IFS=';' read -ra sets <<<"${JUDGE_FLAGS--arch=sm_90a;-arch=sm_90;-arch=native;;-arch=sm_80}"
          # The rung's own gate: a tensor-core file judged as strict FP32 is refused for its speed.
          gate=$(python3 -c "from gemmlab import registry as r; print([i for i in r.IMPLEMENTATIONS if i.name == '${EXPORT_RUNG:-default}'][0].precision)")
          for f in "${sets[@]}"; do slug=${f//[^a-z0-9_]/}; run "judge-${EXPORT_RUNG:-default}-${slug:-none}" 300 gemmlab judge "$LOGS/export.cu" \
                                     --precision "$gate" --nvcc-flags "$f" --seed 5 --json; done
          kill $smi ;;
    # default with split-K raised to at least P parts (PARTS), at large shapes (experiments/accuracy).
    accuracy-parts) for p in ${PARTS:-1 4 8}; do run "parts-$p" 300 python3 experiments/accuracy/parts.py "$OUT/parts.jsonl" "$p"; done ;;
    # RANDOM_N shapes drawn with RANDOM_SEED (bench/randomshapes.py), each timed beside cuBLAS.
    random) run random 590 gemmlab sweep ${RANDOM_RUNGS:-} --random "${RANDOM_N:-64}" --seed "${RANDOM_SEED:-1}" --out "$LOGS/results"
            cp "$(ls -t "$LOGS"/results/*/random-*.json | head -1)" "$OUT/random.json" ;;
    # default recalibrated on the last `random` step's sweep (CALIBRATE_RUNGS), installed here, the
    # record brought back: run `random` again after it with another RANDOM_SEED to judge it on shapes
    # it was not calibrated on. The first sweep of a session also compiles every kernel: allow for it.
    # CALIBRATE_SWEEPS: the sweeps it reads (default: this session's `random`; designed ones such as
    # short-floor's count for the preludes only).
    calibrate) run calibrate 120 gemmlab tune ${CALIBRATE_RUNGS:-small splitk tma tma-warp short gemv} \
                 $(for s in ${CALIBRATE_SWEEPS:-$OUT/random.json}; do echo --calibrate "$s"; done) \
                 --install --out "$LOGS/results"
               [ -n "${CALIBRATE_SWEEPS:-}" ] || cp "$OUT/random.json" "$OUT/random-calibrated-on.json"
               cp src/gemmlab/tuned/*.json "$OUT/" ;;
    # Each kernel of default's calls and of cuBLAS's, timed one by one by ncu (STEP_SHAPES: MxNxK ...):
    # what the pre-passes cost next to the product (experiments/small-odd).
    steps) run steps 300 "$(python3 -m gemmlab.cuda.tools find ncu)" --clock-control none \
             --metrics gpu__time_duration.sum --csv python3 experiments/small-odd/steps.py \
             ${STEP_SHAPES:-8192x6144x4096 8191x6143x4095}
           cp "$LOGS/steps.txt" "$OUT/steps.csv" ;;
    langs) bash "$0" langs-install langs-cute langs-mojo langs-tilelang langs-bench ;;
    langs-install) run langs-install 300 bash -c 'set -e; cd "${WHEELS:-/tmp/wheels}"
             for first in *.part-aa; do [ -e "$first" ] || continue; whole=${first%.part-aa}
               cat "$whole".part-* > "$whole" && rm "$whole".part-*; done
             [ ! -f SHA256SUMS ] || sha256sum --ignore-missing -c SHA256SUMS
             python3 -m pip install --no-index --find-links . nvidia-cutlass-dsl "mojo-compiler>=0.25.6,<0.25.7" tilelang
             python3 -m pip list 2>/dev/null | grep -iE "cutlass|mojo|tilelang|tvm|z3"' ;;
    # Each language's starter, rung, exported file and cheats, judged (tests/test_langs_gpu.py).
    langs-cute|langs-mojo|langs-tilelang)
          run "$step" 560 python3 -m pytest -q -p no:cacheprovider tests/test_langs_gpu.py tests/test_langs.py -k "${step#langs-}" ;;
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
    # split into more parts (bigtile's SPLIT 2, launches.tail_twin; experiments/tail-split); first its
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
    langs-bench) run langs-bench 400 gemmlab bench cute-tiled mojo-tiled tilelang-gemm torch-tf32 --seed 7 --iters 20 \
                   --out "$LOGS/results" --latest "$OUT/langs-bench.json" ;;
    *) echo "unknown step $step" ;;
  esac
done
tar -czf "$OUT/logs.tgz" -C "$LOGS" .
