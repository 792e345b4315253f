"""Small functions: none in src/gemmlab runs past 80 lines."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "gemmlab"
LIMIT = 80


def test_no_function_over_80_lines():
    long = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > LIMIT:
                    long.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, long


def _modules():
    return [(path, ast.parse(path.read_text())) for path in sorted(SRC.rglob("*.py"))]


def test_no_two_classes_share_a_name():
    """Issue 53: one name, one class (there were two Chapter, two Kernel, four Plan, two UsageError)."""
    where: dict[str, list[str]] = {}
    for path, tree in _modules():
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(str(path.relative_to(SRC)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}


def test_no_private_name_is_imported_from_another_module():
    """Issue 53: a name with a leading underscore is its module's own; another that needs it gets a
    public name (cli/export imported export.document._collect)."""
    found = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] != "__future__":
                found += [f"{path.relative_to(SRC)}: {node.module}.{a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert found == []
