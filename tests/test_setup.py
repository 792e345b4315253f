"""README's set-up is what the scripts and CI do, and says what a newcomer needs to know."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text()


def two_commands() -> list[str]:
    """The one-line bash blocks of README's "Two commands" section, in order."""
    section = README.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    return [b.strip() for b in blocks if len(b.strip().splitlines()) == 1]


def test_readme_test_command_is_exactly_what_ci_runs():
    ci = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln.startswith("exec ")]
    assert len(ci) == 1
    main, tests = two_commands()[:2]
    assert tests == ci[0].removeprefix("exec ").strip() == "bash scripts/test.sh"
    assert main == "bash scripts/bench.sh"


def test_the_main_job_script_installs_gemmlab_and_runs_bench():
    lines = (ROOT / "scripts" / "bench.sh").read_text().splitlines()
    assert 'python -m pip install --progress-bar on -e .' in lines
    assert lines[-1] == 'exec gemmlab bench "$@"'


def _torch_install(spec: str, tmp_path: Path, index: str | None) -> list[str]:
    """The pip arguments `install_torch SPEC` uses, with a fake `python` that records them."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    log = tmp_path / "args"
    (fake / "python").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    (fake / "python").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "GEMMLAB_TORCH_INDEX"}
    env["PATH"] = f"{fake}:{env['PATH']}"
    if index:
        env["GEMMLAB_TORCH_INDEX"] = index
    subprocess.run(["bash", "-c", f". scripts/venv.sh && install_torch {shlex.quote(spec)}"],
                   cwd=ROOT, env=env, check=True, capture_output=True)
    return log.read_text().split() if log.exists() else []


def test_gemmlab_torch_index_chooses_where_torch_comes_from(tmp_path):
    url = "https://download.pytorch.org/whl/cpu"
    args = _torch_install("torch==2.13.0", tmp_path, url)
    assert args[:3] == ["-m", "pip", "install"] and "torch==2.13.0" in args
    assert args[args.index("--index-url") + 1] == url
    (tmp_path / "args").unlink()
    args = _torch_install("torch==2.13.0", tmp_path, None)
    assert "torch==2.13.0" in args and "--index-url" not in args
    (tmp_path / "args").unlink()
    # Unpinned and no index: the main job leaves torch to `pip install -e .`.
    assert _torch_install("torch", tmp_path, None) == []


def _venv_sh(command: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`command` in bash with scripts/venv.sh sourced, from the repository root."""
    base = {k: v for k, v in os.environ.items() if k != "GEMMLAB_VENV"}
    return subprocess.run(["bash", "-c", f". scripts/venv.sh && {command}"], cwd=ROOT, env=base | (env or {}),
                          capture_output=True, text=True)


def test_each_script_has_an_environment_of_its_own():
    """One shared .venv swapped torch between the CUDA build and 2.13.0+cpu at each run."""
    roles = {}
    for script in ("test", "bench"):
        lines = (ROOT / "scripts" / f"{script}.sh").read_text().splitlines()
        assert f"enter_venv {script}" in lines
        roles[script] = _venv_sh(f"venv_path {script}").stdout.strip()
    assert roles == {"test": ".venv", "bench": ".venv-bench"}
    assert _venv_sh("venv_path bench", {"GEMMLAB_VENV": "/tmp/mine"}).stdout.strip() == "/tmp/mine"
    paths = [".venv-bench/bin/python", ".venv/bin/python"]
    ignored = subprocess.run(["git", "check-ignore", *paths], cwd=ROOT, capture_output=True, text=True)
    assert ignored.stdout.split() == paths


def test_a_script_refuses_the_other_scripts_environment(tmp_path):
    venv = tmp_path / "env"
    assert _venv_sh(f"claim_venv {venv} bench").returncode == 0
    assert (venv / "gemmlab-role").read_text() == "bench\n"
    assert _venv_sh(f"claim_venv {venv} bench").returncode == 0  # its own, again
    refused = _venv_sh(f"claim_venv {venv} test")
    assert refused.returncode == 2 and refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1 and "is the bench environment" in refused.stderr
    assert (venv / "gemmlab-role").read_text() == "bench\n"
    older = tmp_path / "older"  # made before roles were written: taken as it is
    older.mkdir()
    assert _venv_sh(f"claim_venv {older} test").returncode == 0
    assert (older / "gemmlab-role").read_text() == "test\n"


def _size_table() -> dict[str, tuple[str, float]]:
    """README's install table: command → (torch it installed, size in GiB)."""
    rows = {}
    for line in README.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.fullmatch(r"[0-9.]+ GiB", cells[3]):
            rows[cells[0]] = (cells[2], float(cells[3].split()[0]))
    return rows


def test_readme_s_install_table_agrees_with_the_scripts():
    rows = _size_table()
    bench, test = rows["`bash scripts/bench.sh`"], rows["`bash scripts/test.sh`"]
    by_hand = next(v for k, v in rows.items() if k.startswith("by hand"))
    # the version each script installs is the one the table measured
    pin = re.search(r'install_torch "torch==([0-9.]+)"', (ROOT / "scripts" / "test.sh").read_text()).group(1)
    assert test[0].startswith(f"{pin}+cpu") and by_hand[0] == f"{pin}+cpu"
    assert "install_torch" in (ROOT / "scripts" / "bench.sh").read_text() and "CUDA build" in bench[0]
    # and the sizes are in the order their contents make them: CUDA torch's wheels, then Triton
    assert bench[1] > test[1] > by_hand[1] > 0


def test_readme_documents_the_variable_sizes_and_a_virtual_environment():
    for needle in ("GEMMLAB_TORCH_INDEX", "GEMMLAB_VENV", "virtual environment", ".venv-bench",
                   "CPU build", "gemmlab[triton]", "gemmlab[jax]"):
        assert needle in README, needle
    for script in ("venv.sh", "test.sh", "bench.sh"):
        text = (ROOT / "scripts" / script).read_text()
        assert "keeps out" not in text  # the old claim that the pin keeps out the CUDA build
    assert "GEMMLAB_TORCH_INDEX" in (ROOT / "scripts" / "venv.sh").read_text()


def test_installs_are_not_silent():
    for script in ("test.sh", "bench.sh"):
        for line in (ROOT / "scripts" / script).read_text().splitlines():
            if "pip install" in line and "--upgrade pip" not in line:
                assert "-q" not in line.split(), line


def test_inspect_tools_are_core_dependencies_and_extras_exist():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    assert "nvidia-cuda-cuobjdump" in core and "nvidia-cuda-nvdisasm" in core
    extras = project["optional-dependencies"]
    assert any(d.startswith("jax") for d in extras["jax"])
    assert any(d.startswith("triton") for d in extras["triton"])


def test_readme_says_where_things_are_written_and_what_judging_cuda_needs(monkeypatch):
    from gemmlab.cuda.compiler import cache_root

    monkeypatch.delenv("GEMMLAB_CACHE", raising=False)
    assert cache_root() == Path.home() / ".cache" / "gemmlab"
    assert "`~/.cache/gemmlab`" in README
    monkeypatch.setenv("GEMMLAB_CACHE", "/tmp/elsewhere")
    assert cache_root() == Path("/tmp/elsewhere") and "`$GEMMLAB_CACHE`" in README
    assert "`results/DEVICE/DATE.json`" in README and "`RECORD-report/`" in README
    assert "needs `nvcc`" in README


@pytest.mark.parametrize("code", ["0", "1", "2", "3"])
def test_readme_lists_every_exit_code(code):
    from gemmlab.exits import Exit

    section = README.split("### Exit codes", 1)[1].split("\n#", 1)[0]
    assert int(code) in {int(e) for e in Exit}
    assert re.search(rf"^\| {code} \| \S", section, re.M)
