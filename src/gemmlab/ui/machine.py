"""The `--json` documents of list, explain, check and inspect: stable field names (README lists them)."""

from __future__ import annotations

import json
import sys
from datetime import UTC

from .. import registry, walk

#: Field order of `gemmlab list --json`, one object per implementation.
LIST_FIELDS = ("step", "name", "family", "precision", "min_cc", "needs", "summary", "sources", "tile", "aliases",
               "chapter", "variant_of", "old_number")


def emit(document: object) -> None:
    """The document on stdout, alone, as JSON (human messages go to stderr)."""
    sys.stdout.write(json.dumps(document, indent=1) + "\n")


def implementation(impl: registry.Implementation) -> dict:
    return {
        "step": impl.ref, "name": impl.name, "family": str(impl.family),
        "precision": str(impl.precision), "min_cc": list(impl.min_cc), "needs": impl.needs.name.lower(), "summary": impl.summary,
        "sources": list(impl.sources), "tile": list(impl.tile) if impl.tile else None,
        "aliases": registry.aliases_of(impl.name),
        "chapter": impl.chapter.key, "variant_of": impl.variant_of,
        "old_number": impl.old_number,  # an alias old command lines use
    }


def explanation(impl: registry.Implementation) -> dict:
    """`implementation` plus the Markdown explanation, the intensity, every launch and the walk
    through the source (each stop's file, line, snippet and why it matters)."""
    launches = [{
        "kernel": impl.launch_label(launch), "entry": launch.entry,
        "defines": dict(launch.defines), "block": list(launch.block), "tile": list(launch.tile),
        "when": launch.precondition if launch.when else None, "needs": launch.all_needs.name.lower(),
    } for launch in impl.launches]
    stops = [{"file": s.path, "line": s.line, "snippet": s.snippet, "why": s.text} for s in walk.stops(impl.doc)]
    return implementation(impl) | {"intensity": impl.intensity, "launches": launches,
                                   "explanation": impl.explanation(), "walk": stops}


#: inspect's row keys → the stable `--json` field names.
INSPECT_FIELDS = {"name": "name", "arch": "arch", "kernel": "kernel", "pre_pass": "pre_pass", "threads": "threads",
                  "regs": "registers", "setmaxnreg": "setmaxnreg", "smem B": "smem_bytes", "dyn smem B": "dynamic_smem_bytes",
                  "cluster": "cluster", "stack B": "stack_bytes", "spills": "spills",
                  "occupancy": "occupancy"}


def inspect_row(row: dict) -> dict:
    out = {field: row.get(key) for key, field in INSPECT_FIELDS.items()}
    out["sass"] = {k: v for k, v in row.items() if k not in INSPECT_FIELDS}
    return out


#: The schema name of `gemmlab judge --json`'s document (the book reads it: `gemmlab book --judged`).
JUDGE_SCHEMA = "judge/1"


def verdict(v, file: str, precision: str) -> dict:
    """`gemmlab judge --json`: the verdict as data — what was judged, where and when, each case, the
    timing, the reason and the judge's notes (the solution's own output stays on the terminal)."""
    from datetime import datetime

    return {"schema": JUDGE_SCHEMA, "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "file": file, "framework": v.framework, "precision": precision, "passed": v.passed,
            "device": v.device, "seed": v.seed, "build": v.build, "cases": v.cases, "timing": v.timing,
            "failure": v.failure, "not_run": v.cannot_run, "errors": v.errors, "notes": v.notes,
            "sandbox": v.sandbox}
