"""The one loader of a solution in LeetGPU's format: a ``.py``'s ``solve`` imported, or a built
library's (a ``.cu`` by nvcc, a ``.mojo`` by `mojo build`) called through ctypes.

The judge (`judge.userfile`, its no-GPU check `judge.langcheck`) and the registry's language rungs
(`rung_solve`) all load through here. It sits in `gemmlab.langs`, below the judge, because the
registry reaches it and must not reach the judge.
"""

from __future__ import annotations

import ctypes
import importlib.util
import sys
from pathlib import Path

#: The module name a user's file is imported under, before its stem: the judge's tracebacks name
#: a class of such a module by its bare name, as the user wrote it.
USER_MODULE = "user_solution_"


class SolutionError(RuntimeError):
    """The file cannot be turned into a solve: missing tool, compile error, wrong signature."""


def import_solve(path: Path, prefix: str = USER_MODULE):
    """Import the ``.py`` (its code runs) as the module ``prefix + stem``, and its callable ``solve``;
    SolutionError where it cannot be imported or defines none."""
    path = Path(path)
    spec = importlib.util.spec_from_file_location(f"{prefix}{path.stem}", path)
    if spec is None or spec.loader is None:
        raise SolutionError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    fn = getattr(module, "solve", None)
    if not callable(fn):
        raise SolutionError(f"{path.name} defines no solve function")
    return fn


def load_library(lib_path: str | Path):
    """A built solution library as a solve on tensors (device pointers passed through): a Mojo
    build's through its entry (`mojo.entry`: an exported Mojo ``def`` is not C's ``solve``)."""
    from . import mojo

    lib = ctypes.CDLL(str(lib_path))
    call = mojo.entry(lib)
    if call is not None:
        return lambda a, b, c, m, n, k: call(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k)
    try:
        fn = lib.solve
    except AttributeError:
        raise SolutionError(f'{Path(lib_path).name} has no extern "C" solve(...)') from None
    fn.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int32] * 3  # int in C, Int32 in Mojo
    fn.restype = None

    def solve(a, b, c, m, n, k):
        fn(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k)

    return solve
