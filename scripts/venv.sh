# Sourced by scripts/bench.sh and scripts/test.sh (README's two commands), from the repository root:
# make the script's virtual environment, enter it, and install torch.
#
# Each script has an environment of its own, so that neither changes the other's torch:
# scripts/test.sh pins torch==2.13.0, scripts/bench.sh takes the index's newest, and sharing one
# environment swapped torch's build at each run and left the other build's wheels behind.
#   scripts/test.sh   .venv         (role "test")
#   scripts/bench.sh  .venv-bench   (role "bench")
# GEMMLAB_VENV names another folder for the script that runs; the role is written into the
# environment (gemmlab-role), and a script refuses an environment of the other's role.
#
# torch is the large download, and neither a version pin nor gemmlab chooses
# its build: the package index does. PyPI serves Linux the CUDA build (torch,
# Triton and about 20 nvidia-* wheels: a 5.6 GB environment); PyTorch's CPU
# index serves the CPU-only build. To choose, set
#   GEMMLAB_TORCH_INDEX=https://download.pytorch.org/whl/cpu
# and torch, with its own dependencies, is installed first with --index-url that index.
#
# Variables: GEMMLAB_VENV (default: the role's folder above), GEMMLAB_TORCH_INDEX (default: pip's own index).

step() { printf '\n== %s (%s)\n' "$1" "$(date +%T)"; }

# venv_path ROLE: the folder of ROLE's environment (test or bench).
venv_path() {
    case "$1" in
        test) echo "${GEMMLAB_VENV:-.venv}" ;;
        bench) echo "${GEMMLAB_VENV:-.venv-bench}" ;;
        *) echo "venv.sh: unknown role $1" >&2; return 2 ;;
    esac
}

# claim_venv DIR ROLE: DIR is ROLE's environment from now on; it fails, in one line, if DIR
# belongs to the other role (an environment made before roles were written is taken as it is).
claim_venv() {
    local dir="$1" role="$2" owner=""
    [[ -f "$dir/gemmlab-role" ]] && owner="$(cat "$dir/gemmlab-role")"
    if [[ -n "$owner" && "$owner" != "$role" ]]; then
        echo "error: $dir is the $owner environment (scripts/$owner.sh); give scripts/$role.sh another:" \
             "unset GEMMLAB_VENV, or set it to another folder (sharing one would swap torch's build)" >&2
        return 2
    fi
    mkdir -p "$dir" && echo "$role" > "$dir/gemmlab-role"
}

# enter_venv ROLE: make (or reuse) ROLE's environment and enter it.
enter_venv() {
    local role="$1" venv
    venv="$(venv_path "$role")"
    step "virtual environment $venv ($role)"
    claim_venv "$venv" "$role"
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
