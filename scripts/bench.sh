#!/usr/bin/env bash
# README's main-job command: its virtual environment (.venv-bench, or $GEMMLAB_VENV;
# scripts/test.sh has its own), gemmlab with its dependencies, then `gemmlab bench "$@"`.
# Without a GPU the bench says so and times what runs on the CPU. GEMMLAB_TORCH_INDEX
# chooses torch's build (see scripts/venv.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
enter_venv bench
install_torch "torch"
step "gemmlab and its dependencies"
python -m pip install --progress-bar on -e .
step "gemmlab bench $*"
exec gemmlab bench "$@"
