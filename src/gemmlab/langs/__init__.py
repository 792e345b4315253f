"""The languages beyond CUDA C++, Triton, PyTorch and JAX that LeetGPU accepts or is asked for:
CuTe DSL, Mojo and TileLang. What each needs and how to get it, read without importing any of them.

Each toolchain is an optional extra (`gemmlab[cute]`, `gemmlab[mojo]`, `gemmlab[tilelang]`):
`missing()` says in one line why it cannot run here, and the judge turns that into exit 3.
`solution` is the one loader of a file in LeetGPU's format, the judge's and the rungs' alike.
`LanguageRung` is the registry's factory of a rung written in one of these languages.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from ..committed import PACKAGE_DIR  # a `LanguageRung`'s source is relative to it


@dataclass(frozen=True)
class Toolchain:
    framework: str  # the judge's --framework name
    title: str  # how a person names it
    extra: str  # the optional dependency that installs it
    module: str | None  # the Python module it brings (None: a compiler binary, found by `mojo.binary`)

    def missing(self) -> str | None:
        """Why this toolchain cannot be used here (not installed), or None."""
        if self.module is None:
            from . import mojo

            found = mojo.binary() is not None
        else:
            try:
                found = importlib.util.find_spec(self.module) is not None
            except (ImportError, ValueError):
                found = False
        return None if found else f"{self.title} is not installed here (pip install '{self.extra}')"


TOOLCHAINS: dict[str, Toolchain] = {
    "cute": Toolchain("cute", "CuTe DSL", "gemmlab[cute]", "cutlass"),
    "mojo": Toolchain("mojo", "Mojo", "gemmlab[mojo]", None),
    "tilelang": Toolchain("tilelang", "TileLang", "gemmlab[tilelang]", "tilelang"),
}


@dataclass(frozen=True, eq=False)
class LanguageRung:
    """Factory of a rung written in CuTe DSL, Mojo or TileLang: its source in LeetGPU's format
    (the file `gemmlab export` writes), turned into a solve on torch tensors by `rung_solve`."""

    framework: str  # a key of TOOLCHAINS (the registry passes its Family, a str)
    source: str  # relative to the package

    def __call__(self):
        return rung_solve(str(self.framework), PACKAGE_DIR / self.source)


def rung_solve(framework: str, source):
    """A registry rung's solve on torch tensors, from its source in LeetGPU's format: a Mojo
    file built for this GPU, a CuTe DSL file compiled now, a TileLang file as it is."""
    from .. import runtime
    from .solution import import_solve, load_library

    source = Path(source)
    if framework == "mojo":
        from ..cuda.compiler import cache_root, device_arch
        from . import mojo

        return load_library(mojo.build(source, device_arch(), cache_root() / "mojo"))
    solve = import_solve(source, f"gemmlab_rung_{framework}_")  # gemmlab's own file, not a user's
    if framework == "cute":
        from . import cute

        return cute.adapt(solve, runtime.default_device())
    return solve
