"""What the user types for an implementation, resolved in one place for every command.

A token is an implementation's name (`float4`), an alias (`accurate`: the
implementation it stands for on this machine), a step reference (`3.2`: chapter 3,
step 2, as `gemmlab list` numbers them), or an old rung number, which stands for
every implementation that had it (`7`: float4, float4-bk16, float4-128) and says
on stderr, once the command has run, what it is now (`rung 7 is now 2.1, 2.2, 2.3`). Anything else is a
usage error of one line that suggests the closest names and points to `gemmlab list`.
"""

from __future__ import annotations

import difflib

from .. import registry
from .errors import UsageError, note

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


def resolve_all(tokens: list[str] | None) -> list[registry.Implementation]:
    """Every implementation the tokens stand for, in the order given and once each; all when none."""
    if not tokens:
        return list(registry.IMPLEMENTATIONS)
    out: dict[str, registry.Implementation] = {}
    for token in tokens:
        for impl in resolve(token):
            out.setdefault(impl.name, impl)
    return list(out.values())
