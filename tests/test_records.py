"""Tune records name launches by name, and every launch a committed record names still exists and
builds what the record says it timed."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest

from gemmlab import launches
from gemmlab.policy import default, record
from gemmlab.policy.spaces import SPACES

ROOT = Path(__file__).resolve().parents[1]
INSTALLED = sorted(record.INSTALLED.glob("*.json"))
#: A record of 2026-12-01, made when records named a launch by its position in the rung.
BY_POSITION = ROOT / "experiments" / "random-shapes" / "2-tune-record.json.gz"


def _entries(rec: dict):
    for key, entry in rec["classes"].items():
        for item in [*entry["candidates"], entry["winner"]]:
            if item:
                yield key, item


def _label(item: dict) -> str:
    """The kernel label (with its host's words) of the launch a record's entry names, built today;
    for an arm taken out of the kernel since (J_OUTER but 2: experiments/bigtile-arms), the record's
    own label, once the build is refused by name."""
    space = SPACES[item["rung"]]
    knobs = space.knobs_of(item["knobs"])
    if knobs.get("J_OUTER", 2) != 2:
        with pytest.raises(ValueError, match="J_OUTER 2 only"):
            space.build(item["launch"], knobs)
        assert f"J_OUTER={knobs['J_OUTER']}" in item["kernel"]
        return item["kernel"]
    built = space.build(item["launch"], knobs)
    host = getattr(built.host, "label", "")
    return built.kernel.label + (f" ({host})" if host else "")


def test_every_rungs_launches_have_names_unique_within_the_rung():
    for rung, found in launches.RUNGS.items():
        names = [launch.name for launch in found]
        assert all(names) and len(set(names)) == len(names), (rung, names)


@pytest.mark.parametrize("path", INSTALLED, ids=[p.name for p in INSTALLED])
def test_every_launch_an_installed_record_names_exists_and_builds_what_it_timed(path):
    assert '"launch": 0' not in path.read_text()  # written with names, not positions
    rec = record.load(path)
    for key, item in _entries(rec):
        assert item["launch"] in SPACES[item["rung"]].launches, (key, item["rung"], item["launch"])
        assert _label(item) == item["kernel"], key
    for entry in rec["classes"].values():
        if entry["winner"]:
            assert default.rebuild(entry["winner"]).name == entry["winner"]["launch"]


def test_a_record_made_before_names_reads_as_the_launches_it_timed():
    raw = json.loads(gzip.decompress(BY_POSITION.read_bytes()))
    assert any(isinstance(item["launch"], int) for _, item in _entries(raw))  # positions, as written
    rec = record.load(BY_POSITION)
    # Read through LEGACY_LAUNCHES, each position names the launch whose kernel the record timed
    # (PAD_B, EXACT_TILES, the padded host: a wrong order would show in the labels).
    assert all(_label(item) == item["kernel"] for _, item in _entries(rec))


def test_a_position_the_legacy_order_does_not_hold_is_refused_in_one_line():
    rec = json.loads(gzip.decompress(BY_POSITION.read_bytes()))
    rec["classes"]["small-odd"]["winner"]["launch"] = 7  # the class's name as the record has it
    with pytest.raises(record.RecordError, match="predates launch names") as info:
        record.named_launches(record.validate(record.current_classes(rec)))
    assert "\n" not in str(info.value)


def test_a_record_naming_a_launch_that_no_longer_exists_is_refused():
    rec = record.load(INSTALLED[0])
    winner = copy.deepcopy(next(e["winner"] for e in rec["classes"].values() if e["winner"]))
    winner["launch"] = "retired"
    with pytest.raises(record.RecordError, match="no tunable launch retired"):
        default.rebuild(winner)


def test_a_sweep_is_written_compact_and_reads_back_whole(tmp_path):
    from gemmlab.bench import results

    record = {"schema": 1, "study": "sweep", "date": "2026-12-06T00:00:00+00:00", "device": {"name": "Some GPU"},
              "names": ["default"], "points": [{"label": "256³", "results": [{"name": "default", "times_ms": [0.1]}]}]}
    path = results.save_sweep(record, tmp_path)
    assert "\n" not in path.read_text() and json.loads(path.read_text()) == record
