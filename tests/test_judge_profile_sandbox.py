"""`judge --profile` in the judge's sandbox (judge/profile.py, issue 52): ncu and the solution under it
run in tool mode, writing only to a scratch folder and ncu's report. On a CPU a stand-in for ncu
(a script that starts a child, as ncu starts the solution) shows what the sandbox allows; on a GPU
the real ncu profiles a solution that tries to reach past it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import gemmlab
from gemmlab.judge import profile, sandbox
from gemmlab.provenance import PACKAGE_ROOT

SOL = Path(__file__).parent / "fixtures" / "solutions"
LAYERS = sandbox.layers_here()
needs = pytest.mark.skipif(not all(v == "on" for k, v in LAYERS.items() if k != "capabilities"),
                           reason=f"a sandbox layer is off here: {LAYERS}")
PLANTED = Path(gemmlab.__file__).parent / "judge" / "planted_by_profile.py"

#: A stand-in for ncu: its child tries each way out and prints what happened, then the stand-in
#: writes $GEMMLAB_TEST_CSV (if set) to --log-file, as ncu writes its report.
FAKE_NCU = r'''#!{python}
import os, socket, subprocess, sys
from pathlib import Path

def attempt(label, call):
    try:
        call()
        return label + "=ok"
    except OSError:
        return label + "=refused"

args = sys.argv[1:]
if args[0] == "--child":
    judge, planted, outside, log = int(args[1]), Path(args[2]), Path(args[3]), Path(args[4])
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    print("child:", attempt("scratch", lambda: Path(os.environ["TMPDIR"], "mine").write_text("x")),
          attempt("report", lambda: open(log, "a").close()),
          attempt("package", lambda: planted.write_text("FORGED = True\n")),
          attempt("outside", lambda: outside.write_text("x")),
          attempt("signal", lambda: os.kill(judge, 0)),
          attempt("inet", lambda: socket.socket(socket.AF_INET).close()),
          *(f"{k}={status[k].strip()}" for k in ("NoNewPrivs", "Seccomp", "CapEff")), flush=True)
    sys.exit(0)
log = args[args.index("--log-file") + 1]
subprocess.run([sys.executable, __file__, "--child", os.environ["GEMMLAB_TEST_JUDGE"], "{planted}",
                str(Path(__file__).parent / "left-by-solution"), log], check=True)
if os.environ.get("GEMMLAB_TEST_CSV"):
    Path(log).write_text(Path(os.environ["GEMMLAB_TEST_CSV"]).read_text())
'''
CSV = '''"ID","Process ID","Process Name","Host Name","Kernel Name","Metric Name","Metric Unit","Metric Value"
"0","1","python3","h","void mm(const float *, const float *, float *, int, int, int)","gpu__time_duration.sum","ms","1.5"
'''


@pytest.fixture
def fake_ncu(tmp_path, monkeypatch):
    monkeypatch.delenv(sandbox.WRITABLE_ENV, raising=False)
    fake = tmp_path / "ncu"
    fake.write_text(FAKE_NCU.replace("{python}", sys.executable).replace("{planted}", str(PLANTED)))
    fake.chmod(0o755)
    yield fake
    PLANTED.unlink(missing_ok=True)  # where the sandbox failed, nothing stays in the package


def _covers(folder: Path, path: Path) -> bool:
    return path.resolve().is_relative_to(folder)


def test_the_ncu_run_is_planned_in_tool_mode_with_only_scratch_and_report_writable(tmp_path, fake_ncu):
    folder = tmp_path / "run"
    folder.mkdir()
    solution = SOL / "right_torch.py"
    plan, log = profile.sandboxed(folder, str(fake_ncu), [solution])
    assert plan.network  # tool mode: ncu's front end and its target talk over a socket
    assert plan.layers == LAYERS
    shm = [Path("/dev/shm").resolve()] if Path("/dev/shm").is_dir() else []
    assert sorted(plan.writes) == sorted([plan.scratch.resolve(), log.resolve(), *shm])
    assert plan.scratch.is_dir() and plan.scratch.is_relative_to(folder) and log.is_file()
    # What it reads: the solution, ncu's own folder, gemmlab; none of them, nor the judge's folder, written.
    assert solution.resolve() in plan.reads and tmp_path.resolve() in plan.reads
    assert Path(PACKAGE_ROOT).resolve() in plan.reads
    for mine in (solution, Path(gemmlab.__file__), fake_ncu, folder):
        assert not any(_covers(w, mine) for w in plan.writes), mine
    # The confine step gets all of it.
    args = plan.to_args()
    assert "--network" in args and args[args.index("--scratch") + 1] == str(plan.scratch)
    assert str(log.resolve()) in args and "--layers" in args


@needs
def test_ncu_and_the_solution_under_it_are_confined(fake_ncu, tmp_path):
    env = {"GEMMLAB_TEST_JUDGE": str(os.getpid())}
    kernels, note = profile.profile_side(str(fake_ncu), "solution", ["--file", "x"], env, [fake_ncu])
    assert kernels == [] and "child:" in note, note
    got = dict(item.split("=", 1) for item in note.split("child:", 1)[1].split())
    assert got["scratch"] == "ok" and got["report"] == "ok", got
    assert got["package"] == "refused" and got["outside"] == "refused" and got["signal"] == "refused", got
    assert got["inet"] == "ok", got  # tool mode
    assert got["NoNewPrivs"] == "1" and got["Seccomp"] == "2", got
    if os.geteuid() == 0:
        assert int(got["CapEff"], 16) == 0, got
    assert not PLANTED.exists() and not (tmp_path / "left-by-solution").exists()


@needs
def test_the_report_ncu_writes_in_the_sandbox_is_read_and_the_profile_says_sandbox(fake_ncu, tmp_path):
    csv_file = tmp_path / "sample.csv"
    csv_file.write_text(CSV)
    env = {"GEMMLAB_TEST_JUDGE": str(os.getpid()), "GEMMLAB_TEST_CSV": str(csv_file)}
    p = profile.profile(str(fake_ncu), ["--file", "x"], env, [fake_ncu])
    assert [k.name for k in p.solution + p.cublas] == ["void mm(const float *, const float *, float *, int, int, "
                                                       "int)"] * 2, p.notes
    assert p.sandbox == LAYERS
    _, _, notes = profile.columns(p)
    assert "profiled in the sandbox: no-new-privs, " in "\n".join(notes), notes


def test_the_columns_say_when_the_sandbox_was_off():
    off = {k: "switched off by GEMMLAB_JUDGE_SANDBOX=0" for k in sandbox.LAYERS}
    _, _, notes = profile.columns(profile.Profile([], [], sandbox=off))
    assert notes == ["profiled in the sandbox: no-new-privs off (switched off by GEMMLAB_JUDGE_SANDBOX=0), "
                     "capabilities off (switched off by GEMMLAB_JUDGE_SANDBOX=0), landlock off (switched off by "
                     "GEMMLAB_JUDGE_SANDBOX=0), seccomp off (switched off by GEMMLAB_JUDGE_SANDBOX=0)"]


def test_no_counter_access_says_root_alone_does_not_do_in_the_sandbox():
    why = profile.ncu_failure("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")
    assert "NVreg_RestrictProfilingToAdminUsers=0" in why and f"{sandbox.OFF_ENV}=0" in why
    assert "\n" not in why


@pytest.mark.gpu
def test_the_real_ncu_profiles_a_solution_that_cannot_reach_past_the_sandbox(tmp_path, monkeypatch):
    monkeypatch.delenv(sandbox.WRITABLE_ENV, raising=False)
    monkeypatch.setenv("GEMMLAB_TEST_REAL_HOME", str(tmp_path))
    left = Path("/tmp/gemmlab-left-by-solution")
    planted = Path(gemmlab.__file__).parent / "judge" / "planted_by_solution.py"
    try:
        p = profile.profile_file(SOL / "reaches_host.py", None, "fp32", None, None, None, None)
    except profile.CannotProfile as exc:
        pytest.skip(str(exc))
    assert p is not None and p.solution and p.cublas, p and p.notes
    assert p.sandbox == LAYERS
    try:
        assert not planted.exists() and not left.exists() and not any(tmp_path.iterdir())
    finally:
        planted.unlink(missing_ok=True)
