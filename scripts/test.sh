#!/usr/bin/env bash
# README's test command and what CI runs (.ci/run): its virtual environment (.venv, or
# $GEMMLAB_VENV; scripts/bench.sh has its own), gemmlab with its test tools, ruff, then the
# CPU test suite ("$@" goes to pytest).
# No GPU is needed: CUDA kernels are compiled for sm_90a and disassembled,
# Triton kernels run through its interpreter, the harness runs on CPU tensors.
#
# torch is pinned so that CI runs are repeatable. The pin does not keep out the
# multi-GB CUDA build: whether torch==2.13.0 arrives as the CPU or the CUDA
# build depends on the index (see scripts/venv.sh); GEMMLAB_TORCH_INDEX chooses.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
enter_venv test
install_torch "torch==2.13.0"
# The CuTe DSL, Mojo and TileLang toolchains too (about 280 MB of wheels, 45 s to install on CI's
# machine): without a GPU they still compile and build, and tests/test_langs.py checks what they make.
step "gemmlab, its dependencies, its test tools (pytest, hypothesis, ruff, triton) and the cute, mojo and tilelang extras"
python -m pip install --progress-bar on -e ".[test,cute,mojo,tilelang]"
step "ruff check src tests"
ruff check src tests
step "pytest"
python -m pytest -q "$@"
