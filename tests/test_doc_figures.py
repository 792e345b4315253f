"""Figures quoted in the kernels' notes and README come from the records they cite.

A quoted figure is written as a link to its source: `[0.855](results/h200-random.json#summary.small.geomean)`,
the record's path (from the repository's root: `results/`, `docs/`, `experiments/` or `src/gemmlab/tuned/`) and the JSON
path of the value, its keys joined by dots. A key may be a list's index (`points.0`) or, better,
`field=value`, the element of a list whose `field` is `value` (`points.label=1024³.results.name=splitk`;
`%20` for a space); a path may end in `*1000` (milliseconds quoted as µs) or `*100` (a fraction as a
percentage). The figure may group its thousands (`1,565`). This test finds every such link and checks
that the record holds that value, to the digits shown: a figure that drifts from its record fails
here, not in a reader's hands.
"""

from __future__ import annotations

import gzip
import json
import re
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "src" / "gemmlab").rglob("*.md")),
        *sorted((ROOT / "experiments").rglob("*.md"))]
QUOTE = re.compile(r"\[(-?[0-9][0-9.,]*)\]\(((?:results|docs|experiments|src/gemmlab/tuned)/[^)#\s]+\.json(?:\.gz)?)#([^)\s]+)\)")


def _quotes() -> list[tuple[str, str, str, str]]:
    out = []
    for doc in DOCS:
        for value, record, path in QUOTE.findall(doc.read_text()):
            out.append((str(doc.relative_to(ROOT)), value, record, path))
    return out


QUOTES = _quotes()


@cache
def _record(record: str):
    path = ROOT / record
    # experiments/' raw dumps are gzipped (issue 53's lean repository); results/' records are not
    return json.loads(gzip.decompress(path.read_bytes()) if record.endswith(".gz") else path.read_text())


def lookup(data, path: str) -> float:
    """The value at `path` in `data` (the syntax above); KeyError naming the step that fails."""
    scale = 1.0
    if "*" in path:
        path, factor = path.rsplit("*", 1)
        scale = float(factor)
    for key in path.split("."):
        key = unquote(key)
        if isinstance(data, list):
            if "=" in key:
                field, want = key.split("=", 1)
                found = [x for x in data if isinstance(x, dict) and str(x.get(field)) == want]
                if len(found) != 1:
                    raise KeyError(f"{len(found)} elements have {field} = {want!r}")
                data = found[0]
            else:
                data = data[int(key)]
        else:
            data = data[key]
    return float(data) * scale


def matches(value: str, actual: float) -> bool:
    """`value` as quoted (thousands grouped or not) is `actual` rounded to the digits shown."""
    plain = value.replace(",", "")
    digits = len(plain.split(".")[1]) if "." in plain else 0
    return f"{actual:.{digits}f}" == plain


def test_the_notes_quote_figures_from_records():
    assert any(doc.endswith("small.md") for doc, *_ in QUOTES)  # the convention is in use
    cited = {record for _, _, record, _ in QUOTES}
    assert {"results/h200-sweep.json", "results/h200-latest.json"} <= cited


def test_the_checker_finds_a_wrong_figure_and_reads_every_path_form():
    data = {"points": [{"label": "1024³", "results": [{"name": "splitk", "ms": 0.0610, "n": 1565}]},
                       {"label": "perf M-1", "results": [{"name": "x", "ms": 2.5}]}]}
    assert lookup(data, "points.label=1024³.results.name=splitk.ms*1000") == pytest.approx(61.0)
    assert lookup(data, "points.0.results.0.n") == 1565
    assert lookup(data, "points.label=perf%20M-1.results.name=x.ms") == 2.5
    assert matches("1,565", 1565) and matches("61.0", 61.04) and matches("0.061", 0.0610)
    assert not matches("1,485", 1565) and not matches("8.106", 7.854)
    with pytest.raises(KeyError):
        lookup(data, "points.label=2048³.results")


@pytest.mark.parametrize(("doc", "value", "record", "path"), QUOTES, ids=[f"{d}:{p}" for d, _, _, p in QUOTES])
def test_each_quoted_figure_is_its_records_value(doc, value, record, path):
    actual = lookup(_record(record), path)
    assert matches(value, actual), f"{doc} quotes {value} for {record}#{path}, which holds {actual}"
