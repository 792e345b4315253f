"""What the user types for an implementation, resolved in one place for every command.

A token is an implementation's name (`float4`), an alias (`accurate`: the
implementation it stands for on this machine), or a rung number, which stands
for every implementation on that rung (`7`: float4, float4-bk16, float4-128),
as `gemmlab list` numbers them. Anything else is a usage error of one line
that suggests the closest names and points to `gemmlab list`.
"""

from __future__ import annotations

import difflib

from .. import registry
from .errors import UsageError

#: Where every message sends the user for the whole list.
SEE_LIST = "gemmlab list shows every name and rung"


def is_rung(token: str) -> bool:
    return token.isdecimal() and token.isascii()


def rungs() -> list[int]:
    return sorted({i.rung for i in registry.IMPLEMENTATIONS})


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


def unknown(token: str) -> str:
    """The one line for a token that names nothing."""
    if is_rung(token):
        first, *_, last = rungs()
        return f"no rung {int(token)}; rungs are {first}–{last} ({SEE_LIST})"
    close = suggestions(token)
    hint = f"; did you mean {_or(close)}?" if close else ""
    return f"unknown implementation {token!r}{hint} ({SEE_LIST})"


def resolve(token: str) -> list[registry.Implementation]:
    """The implementations one token stands for: one for a name or an alias, every one on a rung."""
    if is_rung(token):
        found = [i for i in registry.by_rung() if i.rung == int(token)]
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
