# Sourced by scripts/bench.sh and scripts/test.sh (README's two commands), from the repository root:
# make the virtual environment, enter it, and install torch.
#
# torch is the large download, and neither a version pin nor gemmlab chooses
# its build: the package index does. PyPI serves Linux the CUDA build (torch,
# Triton and about 20 nvidia-* wheels: a 5.6 GB environment); PyTorch's CPU
# index serves the CPU-only build. To choose, set
#   GEMMLAB_TORCH_INDEX=https://download.pytorch.org/whl/cpu
# and torch, with its own dependencies, is installed first with --index-url that index.
#
# Variables: GEMMLAB_VENV (default .venv), GEMMLAB_TORCH_INDEX (default: pip's own index).

step() { printf '\n== %s (%s)\n' "$1" "$(date +%T)"; }

enter_venv() {
    local venv="${GEMMLAB_VENV:-.venv}"
    step "virtual environment $venv"
    python3 -m venv "$venv"
    . "$venv/bin/activate"
    python -m pip install -q --upgrade pip
}

# install_torch SPEC: torch (SPEC, e.g. "torch==2.13.0") from GEMMLAB_TORCH_INDEX when that
# is set; otherwise only when SPEC pins a version, and from pip's configured index.
install_torch() {
    local spec="$1"
    if [[ -n "${GEMMLAB_TORCH_INDEX:-}" ]]; then
        step "$spec from $GEMMLAB_TORCH_INDEX"
        python -m pip install --progress-bar on "$spec" --index-url "$GEMMLAB_TORCH_INDEX"
    elif [[ "$spec" == *==* ]]; then
        step "$spec from pip's configured index"
        python -m pip install --progress-bar on "$spec"
    fi
}
