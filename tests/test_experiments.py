"""The notebook apart from the product: `results/` holds records only, `experiments/` every
experiment with an entry in its index, and `scripts/` only what README names.

The index (`experiments/README.md`) says of each experiment whether it still runs against main;
where it says so, the scripts it names exist and every gemmlab name they import is there. That
is what can be checked without a GPU: a script that imports a module since renamed fails here,
and its entry must say "no" or "in part" instead.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
from pathlib import Path

import pytest

from gemmlab.bench import results

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ROOT / "experiments"
INDEX = (EXPERIMENTS / "README.md").read_text()
FIELDS = ("Asked", "Found", "Re-run", "Runs on main")


def tracked(folder: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", folder], cwd=ROOT, capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if line]


def entries() -> dict[str, dict[str, str]]:
    """Each `## name` section of the index: field → its text, on one line."""
    out: dict[str, dict[str, str]] = {}
    for section in re.split(r"^## ", INDEX, flags=re.M)[1:]:
        name, _, body = section.partition("\n")
        fields = dict(re.findall(r"- \*\*([^*]+)\.\*\* (.*?)(?=\n- \*\*|\Z)", body, flags=re.S))
        out[name.strip()] = {k: " ".join(v.split()) for k, v in fields.items()}
    return out


ENTRIES = entries()


def test_every_experiment_folder_has_an_entry_and_every_entry_a_folder():
    folders = sorted(p.name for p in EXPERIMENTS.iterdir() if p.is_dir())
    assert sorted(ENTRIES) == folders


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_each_entry_says_what_it_asked_found_how_to_rerun_and_whether_it_runs(name):
    entry = ENTRIES[name]
    assert tuple(entry) == FIELDS, name
    assert re.match(r"(yes|no|in part)\b", entry["Runs on main"]), entry["Runs on main"]


def _named_scripts(text: str) -> list[Path]:
    return [ROOT / p for p in re.findall(r"(experiments/[\w./-]+\.(?:py|sh))", text)]


def _gemmlab_names(path: Path) -> list[str]:
    """The gemmlab modules and names `path` imports that this gemmlab lacks."""
    missing = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "gemmlab":
            try:
                module = importlib.import_module(node.module)
            except ImportError:
                missing.append(node.module)
                continue
            for alias in node.names:
                if not hasattr(module, alias.name):
                    try:
                        importlib.import_module(f"{node.module}.{alias.name}")
                    except ImportError:
                        missing.append(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "gemmlab":
                    try:
                        importlib.import_module(alias.name)
                    except ImportError:
                        missing.append(alias.name)
    return missing


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_what_the_index_says_runs_on_main_is_there_and_imports(name):
    entry = ENTRIES[name]
    named = _named_scripts(entry["Re-run"])
    runs = entry["Runs on main"]
    if runs.startswith("no"):
        return
    for script in named:
        assert script.is_file(), f"{name}: the index names {script.relative_to(ROOT)}, which is not there"
    if runs.startswith("yes"):
        for script in named:
            if script.suffix == ".py":
                assert _gemmlab_names(script) == [], f"{name}: {script.name} imports what main lacks"


def test_the_import_check_finds_a_name_main_lacks(tmp_path):
    script = tmp_path / "old.py"
    script.write_text("from gemmlab.cuda.rung import Launch\nfrom gemmlab import registry\n")
    assert _gemmlab_names(script) == ["gemmlab.cuda.rung"]


def test_results_holds_only_the_committed_records():
    files = tracked("results")
    assert files, "results/ holds the committed records"
    for path in files:
        assert re.fullmatch(r"results/h[12]00-[\w-]+\.json", path), f"{path} is not a record: experiments/ is for it"
        results.kind(json.loads((ROOT / path).read_text()))  # a results record, or SchemaError


def test_scripts_holds_only_what_readme_names():
    readme = (ROOT / "README.md").read_text()
    for path in tracked("scripts"):
        assert re.search(rf"`[^`]*\b{re.escape(path)}\b[^`]*`", readme), \
            f"README does not name {path}: move it to experiments/"


def test_nothing_cites_the_old_place_of_the_experiments():
    old = "results/" + "experiments"
    cited = subprocess.run(["git", "grep", "-l", old, "--", ".", ":!tests/test_experiments.py",
                            ":!experiments/README.md"], cwd=ROOT, capture_output=True, text=True)
    # logs written before the move may name it (and the index, which says where it came from);
    # the prose, code and tests may not
    stale = [p for p in cited.stdout.splitlines() if not p.startswith("experiments/") or p.endswith(".md")]
    assert stale == []
    joined = subprocess.run(["git", "grep", "-l", "-E", '"results" */ *"experiments"|"results", *"experiments"',
                             "--", "src", "tests", "scripts", ":!tests/test_experiments.py"], cwd=ROOT,
                            capture_output=True, text=True)
    assert joined.stdout.split() == []  # nor a path built from its parts


def _tracked_bytes(folder: str) -> int:
    return sum((ROOT / f).stat().st_size for f in tracked(folder) if (ROOT / f).is_file())


def test_the_repository_stays_mostly_product():
    # Issue 53's bounds: the notebook keeps its scripts, its index and small records; raw
    # per-shape dumps are compressed summaries, and records are written compact.
    assert _tracked_bytes(".") <= 12_000_000
    assert _tracked_bytes("experiments") <= 5_000_000
