"""`gemmlab judge --profile`: Nsight Compute on the performance case, the solution's kernels beside cuBLAS's.

Two ncu runs of `profile_target` (one per side, so no kernel is ever attributed
to the wrong side), each on one call at 8192×6144×4096 after a warm-up call,
inside a boundary and the judge's sandbox of their own (`sandboxed`): ncu
and the solution under it run confined as every judged run is. What a
competitor acts on, per kernel: duration, SM and memory throughput, occupancy
(achieved and theoretical), registers, shared memory, launch shape, FMA and
tensor-pipe activity, and the top warp-stall reasons. ncu locks the clocks to
base while it measures (its default), so durations compare with each other,
not with the judge's timing.

Without ncu, or where ncu may not read the GPU's performance counters
(ERR_NVGPUCTRPERM), `CannotProfile` carries the one-line reason (exit 3).
"""

from __future__ import annotations

import csv
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import sandbox, scratch
from .boundary import Boundary
from .limits import PROCESS_LIMIT
from .session import undumpable

STALLS = ("barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle", "long_scoreboard",
          "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction", "not_selected", "selected",
          "short_scoreboard", "sleeping", "tex_throttle", "wait")
STALL_METRIC = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
REQUIRED = [
    "gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed", "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct", "launch__registers_per_thread",
    "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic", "launch__grid_size",
    "launch__block_size", *(STALL_METRIC.format(s) for s in STALLS),
]
#: Pipe activity: names differ between architectures, so these go in a second try's drop list.
OPTIONAL = ["sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
            "regex:sm__pipe_tensor.*cycles_active\\.avg\\.pct_of_peak_sustained_active"]
TIMEOUT_S = 900
#: Units ncu prints (base or scaled), to milliseconds and bytes.
TIME_UNITS = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0,
              "s": 1e3, "second": 1e3}
BYTE_UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "KiB": 1024,
              "MiB": 1 << 20}


class CannotProfile(Exception):
    """ncu cannot profile here; the message is the one line to show."""


@dataclass
class ProfiledKernel:
    name: str
    metrics: dict[str, float] = field(default_factory=dict)

    def get(self, key: str) -> float | None:
        return self.metrics.get(key)


@dataclass
class Profile:
    solution: list[ProfiledKernel]
    cublas: list[ProfiledKernel]
    notes: list[str] = field(default_factory=list)
    sandbox: dict[str, str] = field(default_factory=dict)  # each layer: "on", or why it was off


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def parse(text: str) -> list[ProfiledKernel]:
    """ncu's ``--csv`` details page (one row per kernel and metric) as kernels in launch order."""
    lines = text.splitlines()
    head = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if head is None:
        return []
    kernels: dict[str, ProfiledKernel] = {}
    for row in csv.DictReader(line for line in lines[head:] if not line.startswith("==")):
        value = _number(row.get("Metric Value") or "")
        if value is None or not row.get("ID"):
            continue
        unit = row.get("Metric Unit") or ""
        value *= TIME_UNITS.get(unit, BYTE_UNITS.get(unit, 1))
        kernels.setdefault(row["ID"], ProfiledKernel(row.get("Kernel Name", "?"))).metrics[row["Metric Name"]] = value
    return [kernels[key] for key in sorted(kernels, key=int)]


def ncu_failure(output: str) -> str:
    """'' unless ncu's output says it cannot profile here; then the one line why."""
    if "ERR_NVGPUCTRPERM" in output:
        return ("ncu may not read this GPU's performance counters here (ERR_NVGPUCTRPERM): allow profiling for "
                "all users (the NVIDIA driver's NVreg_RestrictProfilingToAdminUsers=0); root alone does not do, "
                f"as the judge's sandbox drops its capabilities ({sandbox.OFF_ENV}=0 keeps them)")
    return ""


def metric_refused(output: str) -> bool:
    """Whether ncu stopped over a metric this GPU does not have (then the run is tried without the
    optional ones)."""
    return any(line.startswith("==ERROR==") and "metric" in line.lower() for line in output.splitlines())


def _ncu_cmd(ncu: str, metrics: list[str], log: Path, target: list[str]) -> list[str]:
    return [ncu, "--target-processes", "all", "--profile-from-start", "off", "--csv", "--metrics",
            ",".join(metrics), "--log-file", str(log), *target]


def sandboxed(folder: Path, ncu: str, readable: list[Path]) -> tuple[sandbox.SandboxPlan, Path]:
    """The judge's sandbox for one ncu run, and ncu's report file. Tool mode: ncu's front end and the
    process it injects into talk over IP sockets and /dev/shm. ncu and the solution under it write only
    to a scratch folder (TMPDIR: ncu's lock file lands there) and the report; they read the solution's
    files (`readable`) and ncu's own folder beside what every judged run reads."""
    scratch, log = folder / "scratch", folder / "ncu.csv"
    scratch.mkdir(exist_ok=True)
    log.touch()  # a Landlock rule holds an existing file: this one, not its folder (no link put in its place)
    plan = sandbox.plan(scratch, [*readable, Path(ncu).resolve().parent], tool=True)
    # ncu writes its report from inside the sandbox, so the solution may write it too: it can only
    # mislead its own author, as it could by lying to ncu.
    plan.writes.append(log.resolve())
    return plan, log


def _run(cmd: list[str], env: dict[str, str], plan: sandbox.SandboxPlan) -> tuple[int | None, str]:
    """Run inside a boundary and `plan`'s sandbox, the judge non-dumpable meanwhile as for a judged run;
    (exit code or None on a time-out, its output)."""
    fence = Boundary(PROCESS_LIMIT, None, plan)
    undumpable.enter()
    try:
        proc = subprocess.Popen(fence.wrap(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=sandbox.confined_env(env, plan.scratch),
                                start_new_session=True)
        fence.attach(proc.pid)
        try:
            out, _ = proc.communicate(timeout=TIMEOUT_S)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            out, code = b"", None
        finally:
            fence.kill(leader_unreaped=proc.returncode is None)
            proc.wait()
            fence.close()
    finally:
        undumpable.leave()
    return code, out.decode(errors="replace")


def profile_side(ncu: str, which: str, target_args: list[str], env: dict[str, str],
                 readable: list[Path] | None = None) -> tuple[list[ProfiledKernel], str]:
    """One side's kernels, and a note when it gave none (the call failed, say)."""
    target = [sys.executable, "-m", "gemmlab.judge.profile_target", "--which", which, *target_args]
    folder = Path(tempfile.mkdtemp(prefix="gemmlab-ncu-"))
    try:
        plan, log = sandboxed(folder, ncu, readable or [])
        for metrics in (REQUIRED + OPTIONAL, REQUIRED):
            log.write_bytes(b"")  # the second try's report alone; the same file, which the rule names
            code, output = _run(_ncu_cmd(ncu, metrics, log, target), env, plan)
            text = log.read_text(errors="replace")
            why = ncu_failure(text + output)
            if why:
                raise CannotProfile(why)
            kernels = parse(text)
            if kernels or not metric_refused(text + output):
                break
    finally:
        scratch.remove(folder)  # the solution shaped it: no depth or path length keeps it on the host
    if kernels:
        return kernels, ""
    tail = " ".join((output.strip().splitlines() or ["no output"])[-3:])
    ended = "it ran past its time limit" if code is None else f"it exited with code {code}"
    return [], f"no {which} kernel was profiled ({ended}): {tail}"


def profile(ncu: str, target_args: list[str], env: dict[str, str], readable: list[Path] | None = None) -> Profile:
    """Both sides, each in the sandbox (`readable`: the solution's files); `CannotProfile` if ncu may
    not profile here."""
    solution, note_s = profile_side(ncu, "solution", target_args, env, readable)
    cublas, note_c = profile_side(ncu, "cublas", [], env)
    return Profile(solution, cublas, [n for n in (note_s, note_c) if n], sandbox.layers_here())


def profile_file(path: Path, framework: str | None, precision: str, groups: list[str] | None,
                 timeout: float | None, memory_limit: int | None, nvcc_flags: str | None) -> Profile | None:
    """`judge --profile`'s measurement: the request checked first (`isolate.UsageError`), then what
    this machine lacks (`CannotProfile`), then both sides. None when the file cannot even be built:
    the judgement that follows says why."""
    from .. import runtime
    from ..cuda import tools
    from .isolate import check_usage, prepare
    from .yardstick import harness_env

    check_usage(Path(path), framework, precision, groups, timeout, memory_limit, nvcc_flags)
    if not runtime.has_gpu():
        raise CannotProfile("--profile needs a CUDA GPU: Nsight Compute profiles GPU kernels, and there is none here")
    try:
        ncu = tools.find("ncu")
    except tools.ToolMissing as exc:
        raise CannotProfile(str(exc)) from None
    plan = prepare(Path(path), framework, precision, None, groups, timeout, memory_limit, nvcc_flags)
    if plan.stopped:
        return None
    target = ["--file", str(plan.path.resolve()), "--framework", plan.request.framework]
    if plan.lib:
        target += ["--library", plan.lib]
    readable = [Path(p) for p in (plan.path, plan.lib) if p]
    return profile(ncu, target, harness_env(plan.request.framework, None), readable)


# -- the side-by-side table ---------------------------------------------------------------------

def short_name(name: str, width: int = 30) -> str:
    """A kernel's name without its return type, namespaces, template arguments and parameters."""
    base = name.removeprefix("void ")
    for stop in ("<", "("):
        base = base.split(stop, 1)[0]
    base = base.rsplit("::", 1)[-1] or name
    return base if len(base) <= width else base[: width - 1] + "…"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def _tensor_pipe(k: ProfiledKernel) -> float | None:
    found = [v for key, v in k.metrics.items() if key.startswith("sm__pipe_tensor") and "cycles_active" in key]
    return max(found) if found else None


def _shared_kib(k: ProfiledKernel) -> str:
    parts = [k.get("launch__shared_mem_per_block_static"), k.get("launch__shared_mem_per_block_dynamic")]
    if all(p is None for p in parts):
        return "-"
    return f"{sum(p or 0 for p in parts) / 1024:.1f}"


def _stalls(k: ProfiledKernel, top: int = 3) -> str:
    found = [(k.get(STALL_METRIC.format(s)), s) for s in STALLS if s != "selected"]
    found = sorted(((v, s) for v, s in found if v), reverse=True)[:top]
    return ", ".join(f"{s} {v:.2f}" for v, s in found) or "-"


ROWS = [
    ("duration (ms)", lambda k: "-" if k.get("gpu__time_duration.sum") is None
     else f"{k.get('gpu__time_duration.sum'):.3f}"),
    ("SM throughput (% of peak)", lambda k: _pct(k.get("sm__throughput.avg.pct_of_peak_sustained_elapsed"))),
    ("memory throughput (% of peak)",
     lambda k: _pct(k.get("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"))),
    ("DRAM throughput (% of peak)", lambda k: _pct(k.get("dram__throughput.avg.pct_of_peak_sustained_elapsed"))),
    ("achieved occupancy (%)", lambda k: _pct(k.get("sm__warps_active.avg.pct_of_peak_sustained_active"))),
    ("theoretical occupancy (%)", lambda k: _pct(k.get("sm__maximum_warps_per_active_cycle_pct"))),
    ("registers per thread", lambda k: "-" if k.get("launch__registers_per_thread") is None
     else f"{k.get('launch__registers_per_thread'):.0f}"),
    ("shared memory per block (KiB)", _shared_kib),
    ("grid × block", lambda k: "-" if k.get("launch__grid_size") is None
     else f"{k.get('launch__grid_size'):.0f} × {k.get('launch__block_size') or 0:.0f}"),
    ("FMA pipe (% of active cycles)", lambda k: _pct(k.get("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"))),
    ("tensor pipe (% of active cycles)", lambda k: _pct(_tensor_pipe(k))),
    ("top stalls (warps per issue)", _stalls),
]


def _shown(kernels: list[ProfiledKernel], most: int = 3) -> tuple[list[ProfiledKernel], list[ProfiledKernel]]:
    """The longest `most` kernels in launch order, and the rest."""
    longest = sorted(kernels, key=lambda k: k.get("gpu__time_duration.sum") or 0, reverse=True)[:most]
    return [k for k in kernels if k in longest], [k for k in kernels if k not in longest]


def columns(p: Profile) -> tuple[list[str], list[list[str]], list[str]]:
    """(column headers, rows of cells, footnotes) for the side-by-side table."""
    heads, cells_by_kernel, notes = [], [], list(p.notes)
    if p.sandbox:
        from .report import sandbox_summary

        notes.append("profiled in the sandbox: " + sandbox_summary(p.sandbox))
    for side, kernels in (("yours", p.solution), ("cuBLAS", p.cublas)):
        shown, rest = _shown(kernels)
        total = sum(k.get("gpu__time_duration.sum") or 0 for k in kernels)
        if len(kernels) > 1:
            notes.append(f"{side}: {len(kernels)} kernels, {total:.3f} ms in all")
        if rest:
            notes.append(f"{side}: {len(rest)} shorter kernel(s) not shown, "
                         f"{sum(k.get('gpu__time_duration.sum') or 0 for k in rest):.3f} ms")
        for k in shown:
            heads.append(f"{side}: {short_name(k.name)}")
            cells_by_kernel.append([cell(k) for _, cell in ROWS])
    rows = [[label, *(cells[i] for cells in cells_by_kernel)] for i, (label, _) in enumerate(ROWS)]
    return heads, rows, notes
