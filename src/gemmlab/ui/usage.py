"""What the user typed, read and checked before anything runs or is written: implementation
names, shapes, files and flags. Each check raises `UsageError` with one line that says what is
wrong and what is allowed instead.

An implementation is named by its name (`float4`), an alias (`accurate`: the implementation it
stands for on this machine), a step (`3.2`: chapter 3, step 2) or an old rung number, which
stands for every implementation that had it and says on stderr, once the command has run, what
it is now (`rung 7 is now 2.1, 2.2, 2.3`). A shape is `MxNxK` (`×` and `,` also separate) or,
joined by `ShapeCommand` before parsing, three numbers after `--shape`.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from pathlib import Path

from typer.core import TyperCommand

from .. import problem, registry
from ..cuda.needs import ARCH_NAME
from .errors import UsageError, note

# ---- implementations ----------------------------------------------------------------------

#: Where every message sends the user for the whole list.
SEE_LIST = "gemmlab list shows every name and step"


def is_rung(token: str) -> bool:
    return token.isdecimal() and token.isascii()


def rungs() -> list[int]:
    return sorted({i.old_number for i in registry.IMPLEMENTATIONS})


def known() -> list[str]:
    """Every name a command accepts besides rung numbers: implementations, then aliases."""
    return [*registry.REGISTRY, *registry.ALIASES]


def suggestions(token: str, limit: int = 3) -> list[str]:
    """The known names closest to `token` (difflib's ratio), best first."""
    exact_case = [n for n in known() if n.lower() == token.lower()]
    close = difflib.get_close_matches(token.lower(), known(), n=limit, cutoff=0.6)
    return list(dict.fromkeys(exact_case + close))[:limit]


def _or(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def rung_note(rung: int) -> str:
    """The one line that says what an old rung number is now."""
    return (f"note: rung {rung} is now {', '.join(registry.old_number_refs(rung))} "
            "(gemmlab list numbers the ladder by chapter and step)")


def unknown(token: str) -> str:
    """The one line for a token that names nothing."""
    if is_rung(token):
        first, *_, last = rungs()
        return f"no rung {int(token)}; rungs are {first}–{last} ({SEE_LIST})"
    if registry.is_ref(token):
        try:
            registry.by_ref(token)
        except registry.UnknownStep as exc:
            return f"{exc} ({SEE_LIST})"
    close = suggestions(token)
    hint = f"; did you mean {_or(close)}?" if close else ""
    return f"unknown implementation {token!r}{hint} ({SEE_LIST})"


def resolve(token: str) -> list[registry.Implementation]:
    """The implementations one token stands for: one for a name, an alias or a step reference,
    every one that had an old rung number (with a note on stderr saying what it is now)."""
    if is_rung(token):
        found = [i for i in registry.reading_order() if i.old_number == int(token)]
        if found:
            note(rung_note(int(token)))
    elif registry.is_ref(token):
        try:
            found = [registry.by_ref(token)]
        except registry.UnknownStep:
            found = []
    elif token in registry.REGISTRY or token in registry.ALIASES:
        found = [registry.get(token)]
    else:
        found = []
    if not found:
        raise UsageError(unknown(token))
    return found


def names(tokens: list[str] | None) -> list[registry.Implementation]:
    """Every implementation the tokens stand for, in the order given and once each; all when none."""
    if not tokens:
        return list(registry.IMPLEMENTATIONS)
    out: dict[str, registry.Implementation] = {}
    for token in tokens:
        for impl in resolve(token):
            out.setdefault(impl.name, impl)
    return list(out.values())


def one(token: str) -> registry.Implementation:
    """The one implementation `token` stands for; a usage error where it stands for several."""
    impls = names([token])
    if len(impls) > 1:
        raise UsageError(f"{token} stands for {len(impls)} implementations "
                         f"({', '.join(i.name for i in impls)}); give one of them")
    return impls[0]


# ---- shapes -------------------------------------------------------------------------------

#: The placeholder help shows, and what errors say is expected.
SHAPE_METAVAR = "MxNxK"
SHAPE_HELP = "written 8192x6144x4096 or 8192 6144 4096"

_NUMBER = re.compile(r"-?\d+")
_FORM = re.compile(r"\s*(-?\d+)\s*[x×X,\s]\s*(-?\d+)\s*[x×X,\s]\s*(-?\d+)\s*")


def join_triples(args: list[str]) -> list[str]:
    """`--shape M N K` (three whole numbers after it) as `--shape MxNxK`; everything else as it is."""
    out, i = [], 0
    while i < len(args):
        token = args[i]
        out.append(token)
        i += 1
        if token == "--":
            out += args[i:]
            break
        triple = args[i:i + 3]
        if token == "--shape" and len(triple) == 3 and all(_NUMBER.fullmatch(t) for t in triple):
            out.append("x".join(triple))
            i += 3
    return out


class ShapeCommand(TyperCommand):
    """A typer command whose `--shape` also takes three separate numbers."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        return super().parse_args(ctx, join_triples(list(args)))


def parse_shape(text: str) -> tuple[int, int, int]:
    """`MxNxK` as (M, N, K), each within the challenge's constraints (1 ≤ each ≤ 8192)."""
    m = _FORM.fullmatch(text)
    if not m:
        raise UsageError(f"--shape {text!r}: expected {SHAPE_METAVAR}, e.g. 8192x6144x4096 "
                         "(or M N K: 8192 6144 4096)")
    shape = tuple(int(g) for g in m.groups())
    for name, value in zip("MNK", shape, strict=True):
        if not problem.MIN_DIM <= value <= problem.MAX_DIM:
            raise UsageError(f"--shape {shape_label(shape)}: {name}={value} is outside the "
                             f"challenge's constraints {problem.MIN_DIM} ≤ M, N, K ≤ {problem.MAX_DIM}")
    return shape  # type: ignore[return-value]


def shape(text: str | None) -> tuple[int, int, int] | None:
    return None if text is None else parse_shape(text)


def shapes(texts: list[str] | None) -> list[tuple[int, int, int]]:
    return [parse_shape(t) for t in texts or []]


def shape_label(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


# ---- files and flags ----------------------------------------------------------------------


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
    if _exists(path) and path.is_dir():
        raise UsageError(f"{path} is a folder; give a results JSON file")
    in_file(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} is not a results record: expected a JSON object")
    return data


def in_file(path: Path) -> Path:
    """A file a command reads: there, a file, and readable by this user."""
    if not _exists(path):
        raise UsageError(f"no such file: {path}")
    if not path.is_file():
        raise UsageError(f"{path} is a folder, not a file")
    if not os.access(path, os.R_OK):
        raise UsageError(f"cannot read {path}: permission denied")
    return path


def block_file(path: Path, tag: str) -> str:
    """The text of a file that holds a `<!-- tag:begin -->` … `<!-- tag:end -->` block, to rewrite."""
    in_file(path)
    if not os.access(path, os.W_OK):
        raise UsageError(f"cannot rewrite {path}: permission denied")
    text = path.read_text()
    begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    if begin not in text or end not in text[text.find(begin):]:
        raise UsageError(f"{path} has no {begin} … {end} block to rewrite")
    return text


def out_folder(path: Path) -> Path:
    """A folder a command writes under (made if missing): not a file, nor under one, and one this
    user may write, found before the command runs rather than once its work is done."""
    for parent in (path, *path.parents):
        if _exists(parent):
            if not parent.is_dir():
                raise UsageError(f"{parent} is a file, not a folder")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise UsageError(f"cannot write under {path}: {parent} is not writable")
            break
    return path


def _exists(path: Path) -> bool:
    """Whether `path` is there; a folder on the way that cannot be searched is a usage error."""
    try:
        return path.exists()
    except PermissionError:
        raise UsageError(f"cannot reach {path}: permission denied") from None


def out_file(path: Path, what: str, suffix: str) -> Path:
    """A file a command writes, overwriting it (its folders made if missing): not a folder, and named
    for what it holds, so that a slip of the path (a solution's name) cannot overwrite a solution."""
    if path.is_dir():
        raise UsageError(f"{what} {path} is a folder; give a file name")
    of_kind(path, suffix, f"{what} writes a {suffix} file")
    out_folder(path.parent)
    return path


def of_kind(path: Path, suffix: str, said: str, option: str = "") -> None:
    """A file named for what it will hold, so that another tool (judge, an editor) reads it as that:
    UsageError, after `said` (what the file must be), where its suffix names another kind."""
    if path.suffix != suffix:
        raise UsageError(f"{said}; {option}{path} names another kind")


def new_file(path: Path, force: bool) -> None:
    """A file a command is about to write: not a folder, not there unless --force, in a folder that is."""
    if _exists(path) and path.is_dir():
        raise UsageError(f"{path} is a folder; give a file name")
    if path.exists() and not force:
        raise UsageError(f"{path} exists; use --force to overwrite")
    if not path.parent.is_dir():
        raise UsageError(f"no such folder: {path.parent}")
    if not os.access(path if path.exists() else path.parent, os.W_OK):
        raise UsageError(f"cannot write {path}: permission denied")


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
