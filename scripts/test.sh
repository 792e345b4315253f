#!/usr/bin/env bash
# Install into a fresh virtual environment and run the whole CPU test suite.
# No GPU is needed: CUDA kernels are compiled for sm_90a and disassembled,
# Triton kernels run through its interpreter, the harness runs on CPU tensors.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${GEMMLAB_VENV:-.venv}"
python3 -m venv "$VENV"
. "$VENV/bin/activate"
python -m pip install -q --upgrade pip
# CPU torch first and pinned: an unpinned torch would pull a multi-GB CUDA build.
python -m pip install -q "torch==2.13.0"
python -m pip install -q -e ".[test]"
ruff check src tests
python -m pytest -q "$@"
