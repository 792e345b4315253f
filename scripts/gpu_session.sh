#!/usr/bin/env bash
# One batched session on a lent GPU machine: install, judge, test, benchmark, sanitize: the
# product's steps (the experiments' are experiments/gpu_session.sh, which takes these too).
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
# shellcheck source=scripts/session_lib.sh
. "$(dirname "$0")/session_lib.sh"
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
    tune-default) run tune-default 560 gemmlab tune ${TUNE_RUNGS:-bigtile splitk warptile float4} --install --out "$LOGS/results"
                  cp src/gemmlab/tuned/*.json "$OUT/" ;;
    # A new or changed kernel first on one small shape, briefly: a kernel that hangs (a barrier
    # never completing) would otherwise hold every later step to its whole time limit.
    smoke) run smoke 90 gemmlab check ${NEW_RUNGS:-mma-tf32 wgmma-tma wgmma-ws torch-tf32} --shape 300 200 500 --no-perf \
             || { echo "=== smoke failed: the steps after it are not run"; tar -czf "$OUT/logs.tgz" -C "$LOGS" .; exit 1; } ;;
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
    langs-bench) run langs-bench 400 gemmlab bench cute-tiled mojo-tiled tilelang-gemm torch-tf32 --seed 7 --iters 20 \
                   --out "$LOGS/results" --latest "$OUT/langs-bench.json" ;;
    *) echo "unknown step $step (the experiments' steps: bash experiments/gpu_session.sh $step)" ;;
  esac
done
tar -czf "$OUT/logs.tgz" -C "$LOGS" .
