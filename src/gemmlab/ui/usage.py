"""Checks on what the user typed, made before anything runs or is written.

Each raises `UsageError` with one line that says what is wrong and what is
allowed instead.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import registry
from ..cuda.needs import ARCH_NAME
from . import names as resolver
from .errors import UsageError


def names(given: list[str] | None) -> list[registry.Implementation]:
    """The implementations that names, aliases, steps and old rung numbers stand for (all by default);
    anything else is a usage error (`gemmlab.ui.names`)."""
    return resolver.resolve_all(given)


def groups(given: list[str] | None, known: list[str]) -> list[str] | None:
    unknown = [g for g in given or [] if g not in known]
    if unknown:
        raise UsageError(f"unknown case group {unknown[0]!r}; known: {', '.join(known)}")
    return given


def arch(given: str | None, supported: list[int] | None) -> str | None:
    """`sm_XY` (optionally `a` or `f`) that this NVRTC can target (when it says which it can)."""
    if given is None:
        return None
    m = ARCH_NAME.fullmatch(given)
    if not m:
        raise UsageError(f"--arch {given!r}: expected sm_XY, e.g. sm_90a, sm_89, sm_80")
    if supported and int(m.group(1)) not in supported:
        raise UsageError(f"--arch {given}: this NVRTC targets "
                         + ", ".join(f"sm_{a}" for a in supported))
    return given


def json_file(path: Path) -> dict:
    """A JSON object read from `path`; a missing, unreadable or malformed file is a usage error."""
    if path.is_dir():
        raise UsageError(f"{path} is a folder; give a results JSON file")
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} is not a results record: expected a JSON object")
    return data


def block_file(path: Path, tag: str) -> str:
    """The text of a file that holds a `<!-- tag:begin -->` … `<!-- tag:end -->` block."""
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    text = path.read_text()
    begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    if begin not in text or end not in text[text.find(begin):]:
        raise UsageError(f"{path} has no {begin} … {end} block to rewrite")
    return text


def out_folder(path: Path) -> Path:
    """A folder a command writes under (made if missing): not a file, nor under one."""
    for parent in (path, *path.parents):
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"{parent} is a file, not a folder")
            break
    return path


def out_file(path: Path, what: str) -> Path:
    """A file a command writes, overwriting it (its folders made if missing): not a folder."""
    if path.is_dir():
        raise UsageError(f"{what} {path} is a folder; give a file name")
    out_folder(path.parent)
    return path


def new_file(path: Path, force: bool) -> None:
    """A file a command is about to write: not a folder, not there unless --force, in a folder that is."""
    if path.is_dir():
        raise UsageError(f"{path} is a folder; give a file name")
    if path.exists() and not force:
        raise UsageError(f"{path} exists; use --force to overwrite")
    if not path.parent.is_dir():
        raise UsageError(f"no such folder: {path.parent}")


#: nvcc options a build's flags may not carry: gemmlab chooses the output and its kind.
_NVCC_OWN = ("-o", "--output-file", "-c", "--compile", "-E", "--preprocess", "-ptx", "-cubin", "-fatbin")


def nvcc_flags(given: str) -> str:
    """A grader's nvcc flags as one string ("" for nvcc's defaults), checked: quotes that close,
    and nothing that changes what is built (an output file, a compile-only or PTX-only step)."""
    import shlex

    try:
        words = shlex.split(given)
    except ValueError as exc:
        raise UsageError(f"--nvcc-flags {given!r}: {exc}") from None
    own = [w for w in words if w in _NVCC_OWN or w.startswith(("-o=", "--output-file="))]
    if own:
        raise UsageError(f"--nvcc-flags: {' '.join(own)} is gemmlab's to choose (it builds a shared "
                         "library to check); give the target and code-generation flags only")
    return shlex.join(words)
