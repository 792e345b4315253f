"""The ladder read in chapters: the registry's chapter API, the names commands take for steps and
old rung numbers, `gemmlab list` grouped by chapter, and README's generated reading order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gemmlab import docblocks, registry
from gemmlab.ui import errors, listing, usage
from gemmlab.ui.errors import UsageError
from tests.clitools import assert_one_line, invoke

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


# ---- the registry's chapters ---------------------------------------------------------------


def test_every_implementation_has_one_chapter_and_a_step_of_its_own():
    seen: dict[tuple[str, int], str] = {}
    for impl in registry.IMPLEMENTATIONS:
        assert impl.chapter in registry.CHAPTERS, impl.name
        key = (impl.chapter.key, impl.step)
        assert key not in seen, f"{impl.name} and {seen[key]} are both step {impl.step} of {impl.chapter.key}"
        seen[key] = impl.name


def test_each_chapter_numbers_its_steps_one_to_n_without_a_gap():
    for chapter in registry.CHAPTERS:
        steps = [impl.step for impl in registry.in_chapter(chapter)]
        assert steps == list(range(1, len(steps) + 1)), chapter.key


def test_chapters_are_numbered_in_reading_order_and_the_baselines_are_not():
    numbers = [c.number for c in registry.CHAPTERS]
    assert numbers == [1, 2, 3, 4, 5, 6, None]
    assert registry.CHAPTERS[-1].key == "baselines"
    assert {i.name for i in registry.in_chapter("baselines")} == {registry.BASELINE, registry.TF32_BASELINE}
    assert all(i.ref is None for i in registry.in_chapter("baselines"))
    assert registry.CHAPTER == {c.key: c for c in registry.CHAPTERS}


def test_a_ref_is_chapter_and_step_and_names_that_implementation_back():
    for impl in registry.reading_order():
        if impl.ref is None:
            continue
        assert impl.ref == f"{impl.chapter.number}.{impl.step}"
        assert registry.is_ref(impl.ref)
        assert registry.by_ref(impl.ref) is impl


def test_the_reading_order_is_by_chapter_then_step():
    order = registry.reading_order()
    assert sorted(order, key=lambda i: i.name) == sorted(registry.IMPLEMENTATIONS, key=lambda i: i.name)
    place = [(registry.CHAPTERS.index(i.chapter), i.step) for i in order]
    assert place == sorted(place)


def test_the_table_itself_is_in_reading_order():
    """Issue 53: `IMPLEMENTATIONS` is written as the book reads it, chapter by chapter and step by
    step, the baselines last: a command that walks the table (bench, check) walks it in that order."""
    table = list(registry.IMPLEMENTATIONS)
    assert [i.name for i in table] == [i.name for i in registry.reading_order()]
    assert table == registry.reading_order() == list(registry.REGISTRY.values())


def test_each_factory_sits_beside_its_kernels():
    """Issue 53: the registry holds the table, not the factories: Triton's and torch's sit in their
    kernels' packages, the languages' in gemmlab.langs."""
    home = {"triton": "gemmlab.kernels.triton", "torch": "gemmlab.kernels.torch",
            **{str(f): "gemmlab.langs" for f in registry.LANGUAGE_FAMILIES}}
    factories = {i.name: (i.family, i.factory.__module__) for i in registry.IMPLEMENTATIONS if i.factory}
    assert {f for f, _ in factories.values()} == home.keys()
    assert {name: m for name, (f, m) in factories.items() if m != home[f]} == {}
    assert [i.name for i in registry.in_chapter("fp32")][-1] == "default"  # the chapter's destination


@pytest.mark.parametrize("name", ["wmma-tf32", "mma-tf32", "wgmma-tma", "wgmma-ws", "wgmma-swap"])
def test_the_tf32_chapter_holds_every_tf32_rung_of_our_own(name):
    assert registry.get(name).chapter.key == "tf32"
    assert all(i.precision == "tf32" for i in registry.in_chapter("tf32"))


def test_each_chapter_holds_one_precision_class():
    # a reader of chapter 3 never meets a TF32 kernel, and chapter 5 holds every fp32x3 rung
    expect = {"simt": "fp32", "memory": "fp32", "fp32": "fp32", "tf32": "tf32", "fp32x3": "fp32x3"}
    for key, precision in expect.items():
        assert {str(i.precision) for i in registry.in_chapter(key)} == {precision}, key
    assert {i.name for i in registry.IMPLEMENTATIONS if i.precision == "fp32x3"} == \
        {i.name for i in registry.in_chapter("fp32x3")}


def test_a_variant_builds_an_existing_implementations_source_again():
    for impl in registry.IMPLEMENTATIONS:
        if impl.variant_of is None:
            continue
        source = registry.REGISTRY[impl.variant_of]
        assert source.variant_of is None, f"{impl.name}: name the source's own implementation"
        assert set(source.sources) & set(impl.sources), f"{impl.name} shares no source with {source.name}"
        assert impl in registry.variants_of(source.name)
    assert [i.name for i in registry.variants_of("float4")] == ["float4-bk16", "float4-128"]


def test_implementations_built_from_one_cu_are_variants_of_one_another():
    # The converse: two CUDA rungs whose first source is one .cu are one source built twice.
    by_source: dict[str, list[registry.Implementation]] = {}
    for impl in registry.IMPLEMENTATIONS:
        if impl.family is registry.Family.CUDA and impl.name != "default":
            by_source.setdefault(impl.sources[0], []).append(impl)
    for source, impls in by_source.items():
        roots = {i.variant_of or i.name for i in impls}
        assert len(roots) == 1, f"{source} is built by {[i.name for i in impls]} without one variant_of"


@pytest.mark.parametrize("ref, message", [
    ("3.11", "no step 3.11; chapter 3 · Past cuBLAS in FP32 has steps 3.1–3.10"),
    ("9.1", "no chapter 9; chapters are 1–6"),
    ("3.0", "no step 3.0"),
])
def test_a_ref_that_names_nothing_says_what_there_is(ref, message):
    with pytest.raises(registry.UnknownStep) as caught:
        registry.by_ref(ref)
    assert message in str(caught.value)
    assert isinstance(caught.value, KeyError)


def test_a_chapter_without_a_step_or_a_step_without_a_chapter_is_refused():
    def make(**where):
        return registry.Implementation("x", registry.Family.TORCH, 99, registry.FP32, registry.Needs.ANY,
                                       "s", "d.md", (), **where)

    for where in ({"chapter": registry.BASELINES}, {"step": 1}, {"chapter": registry.SIMT, "step": -1}):
        with pytest.raises(ValueError):
            make(**where)
    assert make().ref is None  # outside the registry (a study's arm): neither, and no reference


def test_the_buffering_study_s_arms_are_builds_of_the_memory_chapter_s_kernels():
    from gemmlab.bench import studies

    for arm in studies.BUFFERING.values():
        source = registry.REGISTRY[arm.variant_of]
        assert source.chapter is registry.MEMORY and arm.sources == source.sources
        assert arm.chapter is None and arm.name not in registry.REGISTRY


# ---- names: steps and old rung numbers -------------------------------------------------------


def test_a_step_names_one_implementation_on_every_command():
    errors.flush_notes()
    assert usage.resolve("3.2") == [registry.get("bigtile")]
    assert errors.pending_notes() == []  # a step is today's name for it: no note


def test_an_old_rung_number_still_works_and_says_once_what_it_is_now():
    errors.flush_notes()
    assert [i.name for i in usage.resolve("20")] == ["bigtile"]
    usage.resolve("20")
    assert errors.pending_notes() == [
        "note: rung 20 is now 3.2 (gemmlab list numbers the ladder by chapter and step)"]
    errors.flush_notes()
    assert "is now 2.1, 2.2, 2.3 " in usage.rung_note(7)
    assert "is now torch, torch-tf32 " in usage.rung_note(12)


@pytest.mark.parametrize("token, fragment", [("3.11", "no step 3.11"), ("7.1", "no chapter 7")])
def test_a_step_that_names_nothing_is_a_usage_error_saying_which_steps_there_are(token, fragment):
    with pytest.raises(UsageError) as caught:
        usage.resolve(token)
    assert fragment in str(caught.value) and "gemmlab list" in str(caught.value)


def test_explain_takes_a_step_and_an_old_rung_number():
    by_step = invoke("explain", "3.2", "--json")
    assert by_step.exit_code == 0, by_step.output
    by_rung = invoke("explain", "20", "--json")
    assert by_rung.exit_code == 0
    assert by_rung.stdout == by_step.stdout
    assert "rung 20 is now 3.2" in by_rung.stderr and by_step.stderr == ""
    assert_one_line(invoke("explain", "3.11"), 2, "no step 3.11")


def test_an_error_after_an_old_rung_number_is_still_one_line():
    # the note waits for the command to run: a usage error or "not run here" stays one line
    assert_one_line(invoke("tune", "12"), 2, "torch has no search space")
    assert errors.pending_notes() == []


def test_list_json_carries_each_chapter_field():
    import json

    doc = json.loads(invoke("list", "--json").stdout)
    assert [d["name"] for d in doc] == [i.name for i in registry.reading_order()]
    bigtile = next(d for d in doc if d["name"] == "bigtile")
    assert (bigtile["chapter"], bigtile["step"], bigtile["variant_of"]) == ("fp32", "3.2", None)
    splitk = next(d for d in doc if d["name"] == "splitk")
    assert splitk["variant_of"] == "bigtile" and splitk["old_number"] == 21


def test_list_prints_each_chapter_title_before_its_steps():
    out = invoke("list").stdout.splitlines()
    labels = {c.label: c for c in registry.CHAPTERS}
    name_at = next(line for line in out if line.split()[:2] == ["step", "name"]).index("name")
    found: dict[str, list[str]] = {}
    chapter = None
    for line in out:
        if line.strip() in labels:
            chapter = labels[line.strip()]
            found[chapter.key] = []
        elif chapter and (line[:1] == " " or registry.is_ref(line.split()[0])) and len(line) > name_at \
                and line[name_at] != " " and line[name_at - 1] == " ":  # a row, not a fold or the footer
            ref, name = line[:name_at].strip(), line[name_at:].split()[0]
            assert ref == (registry.get(name).ref or ""), line
            found[chapter.key].append(name)
    assert list(found) == [c.key for c in registry.CHAPTERS]  # every title, in reading order
    assert found == {c.key: [i.name for i in registry.in_chapter(c)] for c in registry.CHAPTERS}


# ---- README's reading order ----------------------------------------------------------------


def test_readme_reading_order_is_what_list_readme_writes():
    text = README.read_text()
    assert docblocks.read(text, listing.READING_ORDER_TAG) == listing.reading_order_markdown(), (
        "README's reading order is stale: run gemmlab list --readme README.md")


def test_the_reading_order_links_every_implementations_notes():
    block = listing.reading_order_markdown()
    for impl in registry.IMPLEMENTATIONS:
        assert f"[{Path(impl.doc).name}](src/gemmlab/{impl.doc})" in block
        assert (ROOT / "src" / "gemmlab" / impl.doc).is_file(), impl.doc
    for chapter in registry.CHAPTERS:
        assert f"**{chapter.label}.**" in block


def test_list_readme_rewrites_only_the_block(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("above\n<!-- chapters:begin -->\nold\n<!-- chapters:end -->\nbelow\n")
    result = invoke("list", "--readme", str(readme))
    assert result.exit_code == 0, result.output
    text = readme.read_text()
    assert text.startswith("above\n<!-- chapters:begin -->\n") and text.endswith("<!-- chapters:end -->\nbelow\n")
    assert docblocks.read(text, "chapters") == listing.reading_order_markdown()
    no_block = tmp_path / "plain.md"
    no_block.write_text("nothing here\n")
    result = invoke("list", "--readme", str(no_block))
    assert result.exit_code == 2 and "no <!-- chapters:begin -->" in result.stderr
    assert no_block.read_text() == "nothing here\n"


def test_one_numbering_the_step_no_old_number_in_a_file_name_or_a_comment():
    """Issue 53: the notes, the kernels, their headers and the Python name rungs by name and step;
    README and names.py keep the one note an old number prints (an alias), and no file is named
    by a number."""
    package = ROOT / "src" / "gemmlab"
    files = [*sorted(p for ext in ("md", "cu", "cuh", "py") for p in package.rglob(f"*.{ext}")), README]
    assert len(files) > 100
    found = []
    for path in files:
        text = path.read_text().replace("`rung 7 is now 2.1, 2.2, 2.3`", "")
        # Across a comment's line break too ("rung\n// 18").
        found += [f"{path.name}: {m}" for m in re.findall(r"\b[Rr]ungs?\s+(?:(?://|#)\s*)?[0-9]+\b", text)]
    assert found == []
    assert [p.name for p in package.rglob("*") if re.match(r"[0-9]+_", p.name)] == []
