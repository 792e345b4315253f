"""A wheel carries the committed records (issue 54): built as `pip install .` builds it, from a copy
of the working tree, it holds results/'s records and the experiment files the notes link to, and,
installed where no checkout is, the commands find them there and show the measured figures. From a
checkout, `gemmlab.committed` finds the checkout's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The wheel's copy of the repository's files, inside the package.
INSIDE = "gemmlab/records/"
#: What issue 54 allows a wheel to weigh with its records (it is under 3 MB).
MOST_BYTES = 4_000_000


def _run(args: list, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def _tracked(*paths: str) -> list[str]:
    """The working tree's files git tracks or would (untracked but not ignored), that are there."""
    out = _run(["git", "ls-files", "-co", "--exclude-standard", "--", *paths], ROOT).stdout.splitlines()
    return sorted(p for p in out if (ROOT / p).is_file())


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """A copy of the working tree (no ignored file: no build/, no other results), its sdist, and the
    wheel pip builds from the tree, offline."""
    base = tmp_path_factory.mktemp("wheel")
    tree = base / "tree"
    for path in _tracked():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, tree / path)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
          "-w", base / "dist", tree], base)
    [wheel] = (base / "dist").glob("gemmlab-*.whl")
    _run([sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_sdist({str(base / 'sdist')!r})"],
         tree)
    [sdist] = (base / "sdist").glob("gemmlab-*.tar.gz")
    return {"base": base, "wheel": wheel, "sdist": sdist}


def _cited_experiments() -> set[str]:
    """The experiment files the notes link to, as the book reads the links (markdown-it)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    found = set()
    for note in (ROOT / "src" / "gemmlab").rglob("*.md"):
        for token in md.parse(note.read_text()):
            for child in token.children or []:
                href = str(child.attrs.get("href", "")).split("#", 1)[0] if child.type == "link_open" else ""
                if href.startswith("experiments/") and (ROOT / href).is_file():
                    found.add(href)
    return found


def test_the_wheel_carries_the_committed_records_and_the_files_the_notes_cite(built):
    with zipfile.ZipFile(built["wheel"]) as whl:
        inside = {n.removeprefix(INSIDE): n for n in whl.namelist() if n.startswith(INSIDE)}
        assert {p for p in inside if p.startswith("results/")} == set(_tracked("results"))
        cited = _cited_experiments()
        assert cited and {p for p in inside if p.startswith("experiments/")} == cited
        for path, name in inside.items():  # the files as committed, not rewritten
            assert whl.read(name) == (ROOT / path).read_bytes(), path
    assert built["wheel"].stat().st_size <= MOST_BYTES


def test_the_sdist_carries_them_too(built):
    """`python -m build` makes the wheel from the sdist: its tree must hold what setup.py copies."""
    with tarfile.open(built["sdist"]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    with zipfile.ZipFile(built["wheel"]) as whl:
        shipped = {n.removeprefix(INSIDE) for n in whl.namelist() if n.startswith(INSIDE)}
    assert shipped <= names and "setup.py" in names


#: Run by the installed copy: where it finds the records, and the figures a page shows from them.
PROBE = """
import json
from gemmlab import committed, registry
from gemmlab.book import facts

paths = facts.default_record_paths()
rows = dict(facts.fact_rows(registry.get("tiling-2d"), facts.load_records(paths), None))
print(json.dumps({"checkout": str(committed.checkout()), "root": str(committed.root()),
                  "paths": [str(p) for p in paths], "cited": str(committed.find("experiments/mid/summary.json")),
                  "tflops": rows.get("TFLOP/s")}))
"""


def test_installed_without_a_checkout_the_commands_read_the_packaged_records(built):
    base = built["base"]
    target, elsewhere = base / "installed", base / "elsewhere"
    elsewhere.mkdir()
    _run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", target,
          built["wheel"]], base)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(target)}
    found = json.loads(_run([sys.executable, "-c", PROBE], elsewhere, env).stdout)
    shipped = target / "gemmlab" / "records"
    assert found["checkout"] == "None" and found["root"] == str(shipped)
    assert found["paths"] and all(Path(p).parent == shipped / "results" for p in found["paths"])
    assert found["cited"] == str(shipped / "experiments" / "mid" / "summary.json")
    latest = json.loads((ROOT / "results" / "h200-latest.json").read_text())
    row = next(r for r in latest["results"] if r["name"] == "tiling-2d")
    assert found["tflops"] == f"{row['tflops']:.1f}"
    diff = _run([sys.executable, "-m", "gemmlab", "diff", "naive", "tiling-2d", "--no-inspect"], elsewhere, env)
    assert "no committed records" not in diff.stdout and f"measured on the {latest['device']['name']}" in diff.stdout
    report = _run([sys.executable, "-m", "gemmlab", "report"], elsewhere, env)
    assert (elsewhere / "results" / "h200-latest-report" / "ladder.md").is_file(), report.stdout
    assert not list(shipped.rglob("*-report"))  # nothing written inside the installed package


def test_from_a_checkout_the_lookup_reads_the_checkout_by_repository_path(tmp_path, monkeypatch):
    from gemmlab import committed
    from gemmlab.book import facts, site

    monkeypatch.chdir(tmp_path)  # any folder: the checkout gemmlab runs from, not the current one
    assert committed.checkout() == ROOT and committed.root() == ROOT
    assert committed.find("results/h200-latest.json") == ROOT / "results" / "h200-latest.json"
    assert committed.find("src/gemmlab/tuned/nvidia-h200.json") == committed.PACKAGE_DIR / "tuned" / "nvidia-h200.json"
    for outside in ("", "../README.md", "results/../../README.md", str(ROOT / "README.md"), "results/none.json"):
        assert committed.find(outside) is None, outside
    html = site.render_markdown("[a](experiments/mid/summary.json#x) [b](../README.md)", site.Book(facts.Records()),
                                tmp_path / "out")
    assert 'href="files/experiments/mid/summary.json"' in html and "../README.md (not in this book)" in html
    assert (tmp_path / "out" / "files" / "experiments" / "mid" / "summary.json").is_file()
