"""Which launches, and which rungs, a compute-sanitizer finding is about.

The sanitizer names a kernel by its entry point only (``tiling2d``), but one
entry serves many launches (its macros differ) and one launch many rungs
(``tiling2d`` is the fallback of eleven). A finding is therefore reported
against every launch with that entry, each with every rung that uses it;
naming one rung would blame whichever happened to be listed last.
"""

from __future__ import annotations

from .registry import Implementation


def users(impls: list[Implementation]) -> dict[str, dict[str, list[str]]]:
    """entry → launch label → the names of the implementations that run it (pre-passes included)."""
    out: dict[str, dict[str, list[str]]] = {}
    for impl in impls:
        for launch in impl.launches:
            for kernel in launch.kernels():
                names = out.setdefault(kernel.entry, {}).setdefault(kernel.label, [])
                if impl.name not in names:
                    names.append(impl.name)
    return out


def blame(kernels: list[str], impls: list[Implementation]) -> list[str]:
    """One line per launch a finding may be in: `label: rung, rung, …`; unknown entries as they are."""
    known = users(impls)
    lines = []
    for entry in sorted(set(kernels)):
        if entry not in known:
            lines.append(f"{entry}: not a gemmlab kernel")
            continue
        lines += [f"{label}: {', '.join(names)}" for label, names in known[entry].items()]
    return lines
