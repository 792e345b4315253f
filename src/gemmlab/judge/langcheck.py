"""What can be checked of a CuTe DSL or TileLang file on a machine without a GPU, in a process
of its own: ``python -m gemmlab.judge.langcheck --file F --framework cute|tilelang``.

Importing the file runs its code, and a CuTe DSL compile runs ``solve`` itself (the DSL traces
it), so neither happens in the judge's process. CuTe DSL compiles to a cubin without a GPU
(for sm_90a here, `cute.CPU_ARCH`): the check is the same `cute.compile` the judge runs on a GPU.
A TileLang file is imported and its ``solve`` looked up (its kernels compile only for a GPU).

The check process exits 0 when the file passes, else prints the user's error and exits 1; the
judge reads its exit code, never its words (it shows them as the reason). Its process group is
killed once it has answered or run out of time.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

#: How long the check may take (a CuTe DSL compile is seconds; the imports take a few too).
CHECK_TIMEOUT_S = 300.0
#: What a passing check found, by framework (the judge's `build` line says it).
PASSED = {"cute": "compiles (cute.compile for sm_90a)",
          "tilelang": "imports and defines solve (TileLang compiles its kernels only for a GPU)"}
#: The check's exit code for a CuTe DSL file whose solve is a plain Python function: it imports,
#: and what it calls compiles only when it runs (on a GPU).
IMPORTED_ONLY = 4


def check_file(path: Path, framework: str) -> tuple[bool, str]:
    """(whether the file passed, what passed or the error the user needs)."""
    from ..provenance import python_env
    from .protocol import printable

    cmd = [sys.executable, "-m", "gemmlab.judge.langcheck", "--file", str(Path(path).resolve()), "--framework", framework]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=python_env(), start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=CHECK_TIMEOUT_S)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        code, out = None, b""
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever it started goes with it
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    if code is None:
        return False, f"checking {Path(path).name} took longer than {CHECK_TIMEOUT_S:g} s; it was ended"
    if code == 0:
        return True, PASSED[framework]
    if code == IMPORTED_ONLY and framework == "cute":
        return True, "imports (its solve is not @cute.jit: what it calls compiles when it runs)"
    text = printable(out.decode("utf-8", errors="replace").strip()[-4000:])
    return False, text or f"the check of {Path(path).name} exited with code {code}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", required=True)
    ap.add_argument("--framework", required=True, choices=sorted(PASSED))
    args = ap.parse_args()
    if args.framework == "cute":
        from ..langs.cute import CPU_ARCH

        os.environ.setdefault("CUTE_DSL_ARCH", CPU_ARCH)
    from ..langs.solution import SolutionError
    from .protocol import MAX_TEXT
    from .tracebacks import format_user_error, user_frames

    try:
        compiled = _check(Path(args.file), args.framework)
    except SolutionError as exc:
        print(str(exc), flush=True)
        os._exit(1)
    except BaseException as exc:
        print(format_user_error(exc, user_frames(args.file), MAX_TEXT), flush=True)
        os._exit(1)
    sys.stdout.flush()
    os._exit(0 if compiled else IMPORTED_ONLY)


def _check(path: Path, framework: str) -> bool:
    """Import the file and check what can be checked here; whether a compile was part of it."""
    from ..langs.solution import SolutionError, import_solve

    fn = import_solve(path)  # the loader the judge runs on a GPU: the same module name, the same errors
    if framework == "cute":
        from ..langs import cute

        try:
            cute.check_compiles(path, fn)
        except cute.CuteError as exc:
            raise SolutionError(f"{path.name}: {exc}") from None
        return cute.is_jit(fn) and not cute.static_dims(fn)
    return True


if __name__ == "__main__":
    main()
