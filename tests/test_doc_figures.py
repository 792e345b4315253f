"""Figures quoted in the kernels' notes and README come from the records they cite.

A quoted figure is written as a link to its source: `[0.855](results/h200-random.json#summary.small.geomean)`,
the record's path (from the repository's root) and the JSON path of the value. This test finds
every such link and checks that the record holds that value, to the digits shown: a figure that
drifts from its record fails here, not in a reader's hands.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "src" / "gemmlab").rglob("*.md"))]
QUOTE = re.compile(r"\[(-?[0-9][0-9.]*)\]\(((?:results|docs)/[^)#\s]+\.json)#([\w.\-]+)\)")


def _quotes() -> list[tuple[str, str, str, str]]:
    out = []
    for doc in DOCS:
        for value, record, path in QUOTE.findall(doc.read_text()):
            out.append((str(doc.relative_to(ROOT)), value, record, path))
    return out


QUOTES = _quotes()


def test_the_notes_quote_figures_from_records():
    assert any(doc.endswith("18_small.md") for doc, *_ in QUOTES)  # the convention is in use


@pytest.mark.parametrize(("doc", "value", "record", "path"), QUOTES, ids=[f"{d}:{p}" for d, _, _, p in QUOTES])
def test_each_quoted_figure_is_its_records_value(doc, value, record, path):
    data = json.loads((ROOT / record).read_text())
    for key in path.split("."):
        data = data[int(key)] if isinstance(data, list) else data[key]
    digits = len(value.split(".")[1]) if "." in value else 0
    assert f"{float(data):.{digits}f}" == value, f"{doc} quotes {value} for {record}#{path}, which holds {data}"
