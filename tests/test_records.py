"""Tune records name launches by name, and every launch a committed record names still exists and
builds what the record says it timed; a record made before the shape classes' sizes had their
present names reads as one made today, and no size is named like a rung or a launch."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest

from gemmlab import launches, registry
from gemmlab.policy import classes, default, record
from gemmlab.policy.preludes import PRELUDES
from gemmlab.policy.spaces import SPACES
from gemmlab.tune.search import ALIGNED

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


# ---- the shape classes' names ------------------------------------------------------------------


def _names_a_reader_meets() -> set[str]:
    """Every rung, alias and prelude name, and every launch's name within its rung: what a tune
    record, `explain` or a table may put beside a class."""
    return {*registry.REGISTRY, *registry.ALIASES, *PRELUDES,
            *(launch.name for found in launches.RUNGS.values() for launch in found)}


def test_no_shape_class_is_named_like_a_rung_or_a_launch():
    names = _names_a_reader_meets()
    # the test can fail: the former sizes had a rung's name ("small"), which is why they changed
    assert {"small", "short", "thin", "any", "vec4"} <= names
    assert any(old in names for old in classes.FORMER_SIZES)
    for size in classes.SIZES:
        assert size not in names and not set(size.split("-")) & names, size
    for layout in classes.LAYOUTS:
        assert layout not in names, layout
    assert not {c.key for c in classes.CLASSES} & names


def test_the_former_size_names_map_one_to_one_onto_todays():
    assert sorted(classes.FORMER_SIZES.values()) == sorted(classes.SIZES[1:])  # micro kept its name
    assert not set(classes.FORMER_SIZES) & set(classes.SIZES)
    assert sorted(classes.FORMER_KEYS.values()) == sorted(k for k in classes.BY_KEY if not k.startswith("micro-"))
    assert classes.current_key("small-odd-n") == "one-wave-odd-n" and classes.current_key("large-tiled") == "many-waves-tiled"
    assert classes.current_key("micro-odd") == "micro-odd" and classes.current_key("few-waves-odd") == "few-waves-odd"


def _former_names(rec: dict) -> dict:
    """`rec` as a record made before the present size names would hold it: each class key (of
    `classes` and of `calibration.classes`) and each class an entry names in its former name."""
    former = {new: old for old, new in classes.FORMER_KEYS.items()}
    out = copy.deepcopy(rec)
    sections = [out["classes"], out.get("calibration", {}).get("classes", {})]
    for section in sections:
        renamed = {former.get(key, key): entry for key, entry in section.items()}
        for entry in renamed.values():
            for field in record.CLASS_FIELDS:
                if field in entry:
                    entry[field] = former.get(entry[field], entry[field])
        section.clear()
        section.update(renamed)
    return out


def _dispatch(rec: dict) -> list[tuple[str, str, str]]:
    return [(x.name, str(x.when), x.kernel.label)
            for x in default.launches_from(rec, launches.RUNGS[default.BUILTIN])]


def _runs(rec: dict, m: int, n: int, k: int) -> str:
    chain = default.launches_from(rec, launches.RUNGS[default.BUILTIN])
    return next(x.name for x in chain if x.when is None or x.when(ALIGNED, ALIGNED, ALIGNED, m, n, k))


@pytest.mark.parametrize("path", INSTALLED, ids=[p.name for p in INSTALLED])
def test_a_record_with_the_former_size_names_loads_to_the_same_dispatch(path, tmp_path):
    today = record.load(path)
    old = _former_names(json.loads(path.read_text()))
    assert "small-tiled" in old["classes"] and "one-wave-tiled" not in old["classes"]  # as an old record has it
    assert any(e.get("inherited") in classes.FORMER_KEYS for e in old["classes"].values())
    (tmp_path / "old.json").write_text(record.dumps(old))
    read = record.load(tmp_path / "old.json")
    assert read == today and list(read["classes"]) == list(today["classes"])
    assert _dispatch(read) == _dispatch(today)
    sms = today["gpu"]["sm_count"]
    for cls, shape in classes.representatives().items():
        assert _runs(read, *shape) == _runs(today, *shape), (cls, shape)
    assert _runs(read, 1024, 1024, 1024) == "one-wave-tiled" == classes.classify(1024, 1024, 1024, sms).key


def test_a_record_made_before_the_names_reads_its_winners_under_todays_classes():
    raw = json.loads(gzip.decompress(BY_POSITION.read_bytes()))
    assert "small-odd" in raw["classes"]  # as it was written
    rec = record.load(BY_POSITION)
    assert set(rec["classes"]) <= set(classes.BY_KEY)
    for old, new in classes.FORMER_KEYS.items():
        if old in raw["classes"]:
            timed = [(c["kernel"], c.get("median_ms")) for c in raw["classes"][old]["candidates"]]
            assert [(c["kernel"], c.get("median_ms")) for c in rec["classes"][new]["candidates"]] == timed, old
    assert [x[0] for x in _dispatch(rec) if x[0].startswith("one-wave-")]  # its classes dispatch


def test_a_record_holding_a_class_under_both_names_is_refused(tmp_path):
    rec = json.loads(INSTALLED[0].read_text())
    rec["classes"]["small-tiled"] = copy.deepcopy(rec["classes"]["one-wave-tiled"])
    (tmp_path / "both.json").write_text(record.dumps(rec))
    with pytest.raises(record.RecordError, match="one-wave-tiled is in the record twice") as info:
        record.load(tmp_path / "both.json")
    assert "\n" not in str(info.value)
