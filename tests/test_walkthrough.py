"""A new user's first hour on a CPU, as a script: each command's exit code, and its errors in one line.

The commands are those of the trial behind issue 30 (a fresh clone, no GPU),
run in order in one empty folder, so that later ones see what earlier ones
wrote (new, then judge; export twice). Every command must exit as README's
table says, never print a traceback, and a usage error (2) or a "not run
here" (3) that stops a command is one line on stderr. One test runs them all
and reports every command that went wrong, not just the first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clitools import HAS_GPU, invoke

RECORD = Path(__file__).resolve().parents[1] / "results" / "h200-latest.json"

#: (command line, exit code, "line" when the output is one line on stderr, else None).
LINE = "line"
WALK: list[tuple[str, int, str | None]] = [
    ("--version", 0, None),
    ("-h", 0, None),
    ("", 2, None),  # the help, on stderr
    ("tour", 0, None),
    ("tour --at flaot4", 2, LINE),
    ("show naive", 0, None),
    ("show 1.2 --all", 0, None),
    ("show nope", 2, LINE),
    ("diff naive naive-fma --no-inspect", 0, None),
    ("diff naive 7", 2, LINE),
    ("list", 0, None),
    ("list --json", 0, None),
    ("explain float4", 0, None),
    ("explain 7", 0, None),
    ("explain default", 0, None),
    ("explain 99", 2, LINE),
    ("explain flaot4", 2, LINE),
    ("explain bigtile --notes", 0, None),
    ("glossary", 0, None),
    ("glossary wave", 0, None),
    ("glossary nope", 2, LINE),
    ("submit nope.cu", 2, LINE),
    ("check torch --group example --seed 1", 0, None),
    ("check 12 --group example --seed 1", 0, None),
    ("check triton --group example --seed 1", 0, None),
    ("check naive --group example", 3, None),  # the summary says why
    ("check 7 --group example", 3, None),
    ("check torch --shape 7x9x11", 0, None),
    ("check torch --shape 7 9 11", 0, None),
    ("check torch --shape 7 9", 2, LINE),
    ("check torch --shape 0x9x11", 2, LINE),
    ("check torch --shape 7x9x11 --group notes", 2, LINE),
    ("check nope", 2, LINE),
    ("check --group exmaple", 2, LINE),
    ("check torch --group example --json", 0, None),
    ("check --sanitize naive", 3, LINE),
    ("bench torch --shape 64x64x64 --iters 2 --warmup 1", 0, None),
    ("bench 12 --shape 32 32 32 --iters 1 --warmup 0 --csv bench.csv", 0, None),
    ("bench naive", 3, LINE),
    ("bench torch --iters 0", 2, LINE),
    ("bench torch --shape 9000x1x1", 2, LINE),
    ("inspect naive", 0, None),
    ("inspect 2 --json", 0, None),
    ("inspect torch", 2, LINE),
    ("inspect --arch ampere", 2, LINE),
    ("export naive", 0, None),
    ("export naive", 2, LINE),  # naive.cu is there now
    ("export 8", 0, None),
    ("export torch", 0, None),
    ("export tilelang-gemm", 2, LINE),
    ("export 7 -o x.cu", 2, LINE),
    (f"report {RECORD} --out report", 0, None),
    ("report missing.json", 2, LINE),
    ("study", 3, LINE),
    ("study nope", 2, LINE),
    ("sweep", 3, LINE),
    ("sweep torch --shape 1024x1024x1024", 3, LINE),
    ("sweep nope", 2, LINE),
    ("tune warptile", 3, LINE),
    ("tune warptile --shape 512 512 512", 3, LINE),
    ("tune 20 --shape 512x512x512", 3, LINE),
    ("tune torch", 2, LINE),
    ("tune warptile --shape 512x512", 2, LINE),
    ("new --framework torch", 0, None),
    ("new --framework torch", 2, LINE),
    ("new --framework fortran", 2, LINE),
    ("judge solution_torch.py --group example --no-perf", 1, None),  # the starter fails, as it says
    ("judge missing.py", 2, LINE),
    ("judge solution_torch.py --group example --no-perf --json", 1, None),  # the verdict as JSON
    ("judge solution_torch.py --jsno", 2, LINE),
    (f"book -o book --no-inspect --record {RECORD}", 0, None),
    ("book -o naive.cu", 2, LINE),  # a file
    ("book -o report", 2, LINE),  # a folder that holds something else

    ("no-such-command", 2, LINE),
    ("judge -h", 0, None),
    ("check -h", 0, None),
]


def problems_of(line: str, code: int, kind: str | None, result) -> list[str]:
    out = []
    if result.exit_code != code:
        out.append(f"exit {result.exit_code}, expected {code}")
    if "Traceback" in result.output or not (result.exception is None or isinstance(result.exception, SystemExit)):
        out.append(f"traceback or exception: {result.exception!r}")
    if kind == LINE:
        lines = [ln for ln in result.output.splitlines() if ln.strip()]
        label = "error:" if code == 2 else "not run here:"
        if len(lines) != 1 or not lines[0].startswith(label) or result.stdout.strip():
            out.append(f"not one {label!r} line on stderr: {result.output[-300:]!r}")
    return out


@pytest.mark.skipif(HAS_GPU, reason="the walk-through is a machine without a GPU")
def test_a_new_users_walk_through(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    problems = []
    for line, code, kind in WALK:
        result = invoke(*line.split())
        problems += [f"gemmlab {line}: {p}" for p in problems_of(line, code, kind, result)]
    assert not problems, "\n".join(problems)
    assert {"naive.cu", "double-buffer-64.cu", "double-buffer-128.cu", "solution_torch.py", "bench.csv",
            "report", "book"} <= {p.name for p in tmp_path.iterdir()}


def test_the_walk_through_covers_every_command_and_exit_code():
    from gemmlab.cli import app
    from gemmlab.exits import Exit

    commands = {info.name or info.callback.__name__ for info in app.registered_commands}
    walked = {line.split()[0] for line, _, _ in WALK if line and not line.startswith("-")}
    assert {c.removesuffix("_cmd").rstrip("_") for c in commands} <= walked
    assert {code for _, code, _ in WALK} == {int(e) for e in Exit}
    assert 30 <= len(WALK) <= 80
