"""gemmlab's import graph, read from the source (`ast`), imports inside functions included.

A lazy import inside a function is still a dependency: it is how circles were held apart
before. So every ``import`` statement counts, wherever it stands, except those under
``if TYPE_CHECKING:`` (annotations only, never run).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "gemmlab"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}


def _is_package(name: str) -> bool:
    return modules()[name].name == "__init__.py"


def _type_checking_only(tree: ast.Module) -> set[int]:
    """Line numbers of statements under `if TYPE_CHECKING:`."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            for stmt in node.body:
                lines.update(range(stmt.lineno, stmt.end_lineno + 1))
    return lines


def _targets(name: str, node: ast.AST) -> set[str]:
    """The gemmlab modules one import statement of module `name` names: ``from pkg import mod``
    is an edge to pkg.mod, ``from mod import thing`` one to mod. (Python also runs the parent
    packages' ``__init__`` first; those hold no code that imports back, and a package whose
    ``__init__`` imports its own modules is not a circle.)"""
    known = modules()
    if isinstance(node, ast.Import):
        found = {alias.name for alias in node.names}
    else:
        assert isinstance(node, ast.ImportFrom)
        if node.level:
            base = name.split(".") if _is_package(name) else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            parent = ".".join(base + ([node.module] if node.module else []))
        else:
            parent = node.module or ""
        subs = {f"{parent}.{alias.name}" for alias in node.names}
        found = (subs & known.keys()) | ({parent} if subs - known.keys() else set())
    return (found & known.keys()) - {name}


@cache
def graph() -> dict[str, frozenset[str]]:
    """Module → the gemmlab modules it imports (anywhere in it, TYPE_CHECKING blocks aside)."""
    out = {}
    for name, path in modules().items():
        tree = ast.parse(path.read_text())
        skip = _type_checking_only(tree)
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno not in skip:
                edges |= _targets(name, node)
        out[name] = frozenset(edges)
    return out


def cycles(g: dict[str, frozenset[str]] | None = None) -> list[list[str]]:
    """Every strongly connected set of more than one module (Tarjan) of `g` (gemmlab's graph by
    default), each sorted."""
    g = graph() if g is None else g
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(sorted(scc))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def reaches(source: str, prefix: str) -> list[str]:
    """The modules under `prefix` (a module or package name) that `source` imports directly."""
    return sorted(t for t in graph()[source] if t == prefix or t.startswith(prefix + "."))
