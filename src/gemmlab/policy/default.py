"""`default`: the registry's shape-aware implementation, built from the installed tune record.

Its launches (`launches_from`; policy/default.md, "Dispatch", says why each is where it is): the
record's preludes, then for each shape class the record has a winner for, the twins its space
refines it with (`Space.refine`) and the winner, each under ``InClass(class) ∧ its own
precondition``; then `warptile`'s launches, ending in its fallback. So a call whose class has no
winner, or whose shape misses the winner's own precondition, runs what `warptile` runs.

Which record: on a GPU, ``tuned/<gpu-slug>.json`` if its SM count is the GPU's, else a sibling's of
the same architecture and SM count (the H100 SXM runs the H200's, and `notice` says so); without a
GPU, the target GPU's (``record.TARGET``), so that `explain` and `export` on a laptop show what the
H200 runs. None found: the built-in chain alone. The launches are resolved on first use, not at
import (asking for the GPU would initialise CUDA).

The registry makes `default`'s entry from `launches()` and `rungs()`; this module reads the launch
builders and the spaces, never the registry.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from .. import launches as builders
from ..cuda.dispatch import Launch
from ..cuda.needs import all_of
from . import preludes, twins
from . import record as rec
from .classes import CLASSES, InClass
from .spaces import SPACES

NAME = "default"
#: The rung whose launches `default` runs where no record (or no winner) says otherwise.
BUILTIN = "warptile"


def rebuild(winner: dict) -> Launch:
    """The launch a record's (rung, launch name, knobs) names; RecordError if this gemmlab cannot."""
    space = SPACES.get(winner["rung"])
    if space is None:
        raise rec.RecordError(f"the record names rung {winner['rung']!r}, which has no search space "
                              f"here (spaces: {', '.join(SPACES)})")
    if winner["launch"] not in space.launches:
        raise rec.RecordError(f"{winner['rung']} has no tunable launch {winner['launch']} "
                              f"(tunable: {', '.join(space.launches)})")
    names = [name for name, _ in space.knobs] + list(space.retired)
    knobs = space.knobs_of(winner["knobs"])  # a knob the record predates holds its absent (or kept) value
    if sorted(knobs) != sorted(names):
        raise rec.RecordError(f"{winner['rung']}: the record's knobs {sorted(winner['knobs'])} are not "
                              f"the space's {sorted(names)}")
    try:
        return space.build(winner["launch"], {k: int(knobs[k]) for k in names})
    except ValueError as exc:  # a build the kernel no longer has (an arm taken out after its record)
        raise rec.RecordError(f"{winner['rung']} {winner['launch']}: {exc}") from None


def launches_from(record: dict | None, builtin: Sequence[Launch]) -> tuple[Launch, ...]:
    """The record's preludes, each class's winner under its class condition, named by its class,
    then `builtin` (which ends in a fallback)."""
    out: list[Launch] = list(preludes.launches(record))
    if record is not None:
        sms = record["gpu"]["sm_count"]
        for cls in CLASSES:
            winner = (record["classes"].get(cls.key) or {}).get("winner")
            if not winner:
                continue
            launch = rebuild(winner)
            cond = InClass(cls, sms)
            for x in (*SPACES[winner["rung"]].refine(launch, cls, sms), launch):
                name = cls.key if x is launch else f"{cls.key} {x.name.removesuffix('-' + launch.name)}"
                out.append(dataclasses.replace(x, when=all_of(cond, x.when), name=name))
    return (*out, *builtin)


def _gpu() -> tuple[str | None, int | None, str | None]:
    """(name, SM count, compute capability "9.0") of the current GPU; Nones without one."""
    from .. import runtime
    from ..cuda.compiler import keep_ptxas_reports

    keep_ptxas_reports()  # before CUDA initialises
    if not runtime.has_gpu():
        return None, None, None
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return props.name, props.multi_processor_count, f"{props.major}.{props.minor}"


#: A record file to dispatch by instead of the installed one (a calibration sweep times a record
#: before it is installed; a user compares two records): read and validated like an installed one.
RECORD_ENV = "GEMMLAB_TUNE_RECORD"


@cache
def plan() -> tuple[dict | None, str]:
    """(the record `default` dispatches by here, or None; where it came from, in words)."""
    if chosen := os.environ.get(RECORD_ENV):
        try:
            return rec.load(Path(chosen)), f"{chosen} (named by {RECORD_ENV})"
        except rec.RecordError as exc:
            raise rec.RecordError(f"{RECORD_ENV}: {exc}") from None
    name, sms, capability = _gpu()
    found, why = rec.find(name, sms, capability=capability)
    return found, why if found else f"built-in ({BUILTIN}'s launches): {why}"


def record_file() -> Path | None:
    """The file of the record `plan` dispatches by (the one named, else the installed one it found)."""
    found, _ = plan()
    if found is None:
        return None
    chosen = os.environ.get(RECORD_ENV)
    return Path(chosen) if chosen else rec.installed_path(found["gpu"]["slug"])


#: What makes a record of the GPU at hand (cli/tune.py: no names tunes what `default` needs).
TUNE_COMMAND = "gemmlab tune --install"


def notice() -> str | None:
    """One line where this GPU has no record of its own (None where it has, or there is no GPU):
    what `default` runs instead, and the command that makes one."""
    name = _gpu()[0]
    found, why = plan()
    if name is None or rec.is_own(found, name):
        return None
    runs = f"{found['gpu']['name']}'s record" if found else f"{BUILTIN}'s launches alone"
    return f"{name} has no tune record of its own: default runs {runs}; `{TUNE_COMMAND}` makes one"


def provenance() -> dict:
    """What a results record says of the tune record `default` ran by: its GPU and date, whether
    it is this GPU's own, and the words `plan` gives."""
    found, why = plan()
    return {"gpu": found["gpu"]["name"] if found else None, "date": found.get("date") if found else None,
            "own": rec.is_own(found, _gpu()[0]) if found else False, "why": why}


def launches() -> tuple[Launch, ...]:
    """`default`'s launches on this machine: the record's winners, then `BUILTIN`'s, each split
    bigtile launch on a line of blocks (`twins.tailed`)."""
    return twins.tailed(launches_from(plan()[0], builders.RUNGS[BUILTIN]))


def rungs() -> list[str]:
    """The rungs whose launches `default` runs here: `BUILTIN`, each winner's, and those its space
    refines it with (their sources are `default`'s)."""
    record = plan()[0]
    winners = [w["rung"] for w in _winners(record)]
    return list(dict.fromkeys([BUILTIN] + [r for w in winners for r in (w, *SPACES[w].refined_by)]
                              + list((record or {}).get("preludes") or {})))


def _winners(record: dict | None) -> list[dict]:
    if record is None:
        return []
    return [e["winner"] for e in record["classes"].values() if e.get("winner")]


def build_check() -> str:
    """Whether this machine builds each winner's kernel into the cubin the record timed.

    The same source and macros do not always compile to the same SASS, and the timing moves
    with it (`record.cubin_digest`): a winner built differently may not run at its recorded
    speed. Only meaningful on the record's GPU (another compiler build differs anyway)."""
    found, _ = plan()
    if found is None:
        return "no tune record"
    name = _gpu()[0]
    if name is None:
        return "no GPU here: builds are compared on the record's GPU"
    from ..cuda.compiler import device_arch, nvrtc_version

    winners = [w for w in _winners(found) if w.get("cubin")]
    if not winners:
        return "the record names no cubins (made before they were recorded)"
    arch, nvrtc = device_arch(), nvrtc_version()
    made = (found.get("arch"), found.get("versions", {}).get("nvrtc"))
    if made != (arch, nvrtc):
        return (f"not comparable: the record was built for {made[0]} by NVRTC {made[1]}, "
                f"this machine builds for {arch} with NVRTC {nvrtc}")
    differ = sorted({w["kernel"] for w in winners
                     if rec.cubin_digest(rebuild(w).kernel.compile(arch).cubin) != w["cubin"]})
    if not differ:
        return f"every winner builds into the cubin the record timed ({len(winners)} classes)"
    return "built differently from the timed cubin, so timings may differ: " + "; ".join(differ)
