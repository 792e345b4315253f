"""`--shape`, one syntax for every command that takes a shape: `8192x6144x4096`, or `8192 6144 4096`.

The option is one string (`MxNxK`; `×` and `,` also separate). `Command` joins `--shape M N K`
into it before parsing, so that the three-number form check and bench always took still works.
"""

from __future__ import annotations

import re

from typer.core import TyperCommand

from .. import problem
from .errors import UsageError

OPTION = "--shape"
#: The placeholder help shows, and what errors say is expected.
METAVAR = "MxNxK"
EXAMPLE = "8192x6144x4096"
HELP = f"written {EXAMPLE} or 8192 6144 4096"

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
        if token == OPTION and len(triple) == 3 and all(_NUMBER.fullmatch(t) for t in triple):
            out.append("x".join(triple))
            i += 3
    return out


class Command(TyperCommand):
    """A typer command whose `--shape` also takes three separate numbers."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        return super().parse_args(ctx, join_triples(list(args)))


def parse(text: str) -> tuple[int, int, int]:
    """`MxNxK` as (M, N, K), each within the challenge's constraints (1 ≤ each ≤ 8192), else a
    usage error."""
    m = _FORM.fullmatch(text)
    if not m:
        raise UsageError(f"{OPTION} {text!r}: expected {METAVAR}, e.g. {EXAMPLE} (or M N K: 8192 6144 4096)")
    shape = tuple(int(g) for g in m.groups())
    for name, value in zip("MNK", shape, strict=True):
        if not problem.MIN_DIM <= value <= problem.MAX_DIM:
            raise UsageError(f"--shape {'x'.join(map(str, shape))}: {name}={value} is outside the "
                             f"challenge's constraints {problem.MIN_DIM} ≤ M, N, K ≤ {problem.MAX_DIM}")
    return shape  # type: ignore[return-value]


def one(text: str | None) -> tuple[int, int, int] | None:
    return None if text is None else parse(text)


def many(texts: list[str] | None) -> list[tuple[int, int, int]]:
    return [parse(t) for t in texts or []]


def label(shape: tuple[int, int, int]) -> str:
    return "x".join(map(str, shape))
