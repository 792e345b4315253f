"""Issue 54's lesson first: a rung's note opens with the lesson and keeps its history apart (the
book folds it, `explain` shows it with --notes), the lesson walks the rung's code with line
numbers (`gemmlab.walk`), and the glossary defines every word the compiler-facts tables, the shape
classes and the sweep's labels use."""

from __future__ import annotations

import json

import pytest

from gemmlab import notes, registry, walk
from gemmlab.bench import studies
from gemmlab.book import facts, glossary
from gemmlab.policy import classes
from tests.clitools import invoke

NOTES = {i.doc: i for i in registry.reading_order()}
#: The notes of every implementation built from a source of ours: each walks its code.
WALKED = sorted({i.doc for i in registry.reading_order() if i.sources})


@pytest.mark.parametrize("doc", sorted(NOTES))
def test_a_lesson_holds_no_prediction_or_measurement(doc):
    lesson, lab = notes.split(NOTES[doc].explanation())
    assert lesson.strip()
    for lead in notes.LAB_LEADS:
        assert f"\n**{lead}" not in "\n" + lesson, (doc, lead)


def test_the_split_keeps_every_line():
    text = "# T\n\n**Idea.** a\n\n**Prediction.** b\n\n**Measured** c\n"
    lesson, lab = notes.split(text)
    assert lesson == "# T\n\n**Idea.** a\n" and lab == "**Prediction.** b\n\n**Measured** c\n"
    assert notes.split("# T\n\n**Idea.** a\n") == ("# T\n\n**Idea.** a\n", "")


def test_explain_shows_the_lesson_and_points_at_the_lab_notes():
    short = invoke("explain", "bigtile")
    assert short.exit_code == 0 and "Lab notes" in short.output and "gemmlab explain bigtile --notes" in short.output
    assert "If issue is the limit" not in short.output  # the prediction's first words
    full = invoke("explain", "bigtile", "--notes")
    assert full.exit_code == 0 and "If issue is the limit" in full.output
    assert "Terms (gemmlab glossary TERM):" in short.output and "FFMA" in short.output


INSTRUCTIONS = [k for k in facts.SASS_SHOWN if k.replace(".", "").replace("/", "").isalnum() and k.isupper()]


@pytest.mark.parametrize("word", INSTRUCTIONS + ["wave", "split-K", "TMA", "wgmma", "TF32", "3xTF32"])
def test_every_instruction_the_facts_count_and_every_core_idea_has_an_entry(word):
    assert glossary.lookup(word) is not None, word


def test_the_shape_classes_and_the_sweep_s_labels_are_explained():
    text = " ".join(t.text for t in glossary.terms())
    for word in (*classes.SIZES, *classes.LAYOUTS):
        assert f"{word} " in text or f"{word}," in text, word
    labels = {label for label, _ in studies.sweep_shapes() if label.startswith("perf ")}
    assert labels and all(glossary.lookup(label) for label in labels), labels


def test_glossary_prints_one_term_or_all():
    one = invoke("glossary", "LDS.128")
    assert one.exit_code == 0 and "shared memory" in one.output
    assert invoke("glossary").output.count("\n") > 30
    wrong = invoke("glossary", "nope")
    assert wrong.exit_code == 2 and "no glossary entry" in wrong.output
    plural = invoke("glossary", "waves")  # README's word for the entry `wave`
    assert plural.exit_code == 0 and plural.output.startswith("wave")
    named = invoke("glossary", "quarter-wave-aligned")  # a class `explain --shape` names
    assert named.exit_code == 0 and named.output.startswith("shape class")
    typo = invoke("glossary", "wavse")
    assert typo.exit_code == 2 and "did you mean 'wave'?" in typo.output


@pytest.mark.parametrize("doc", WALKED)
def test_every_rung_with_a_source_walks_its_code_in_its_lesson(doc):
    """3 to 6 stops, each snippet found exactly once in its file (`walk.stops` raises otherwise), all
    in the lesson: the lab notes hold none."""
    text = NOTES[doc].explanation()
    lesson, _ = notes.split(text)
    stops = walk.stops(doc)
    assert 3 <= len(stops) <= 6, (doc, len(stops))
    assert walk.stops(doc, lesson) == stops
    assert all(stop.text for stop in stops), doc


@pytest.mark.parametrize("doc", WALKED)
def test_each_stop_s_line_holds_its_snippet(doc):
    for stop in walk.stops(doc):
        lines = (registry.PACKAGE_DIR / stop.path).read_text().splitlines()
        assert stop.snippet in lines[stop.line - 1], (doc, stop)
        assert stop.label.endswith(f":{stop.line}")


def test_a_snippet_missing_or_found_twice_is_an_error(tmp_path):
    source = tmp_path / "k.cu"
    source.write_text("int a = 1;\n__syncthreads();\nint b = 2;\n__syncthreads();\n")
    assert walk.locate(source, "int b = 2;") == 3
    with pytest.raises(walk.WalkError, match="not found"):
        walk.locate(source, "int c")
    with pytest.raises(walk.WalkError, match="found 2 times"):
        walk.locate(source, "__syncthreads();")


def test_an_item_without_its_snippet_link_and_a_file_not_there_are_errors():
    head = f"# t\n\n{walk.HEAD}\n\n"
    with pytest.raises(walk.WalkError, match="does not open with"):
        walk.stops("kernels/cuda/naive.md", head + "- `acc` without a link\n")
    with pytest.raises(walk.WalkError, match="no file"):
        walk.stops("kernels/cuda/naive.md", head + "- [`acc`](nowhere.cu): x\n")
    with pytest.raises(walk.WalkError, match="outside the package"):
        walk.stops("kernels/cuda/naive.md", head + "- [`acc`](../../../../README.md): x\n")
    # the walk ends at the next lead: a list after it is not the walk's
    assert walk.stops("kernels/cuda/naive.md", head + "**Other.**\n\n- `x` a plain list\n") == []


def test_the_rendered_walk_names_each_stop_s_file_and_line():
    doc = "kernels/cuda/naive.md"
    stops = walk.stops(doc)
    text = walk.rendered(doc, NOTES[doc].explanation())
    for stop in stops:
        assert f"- `{stop.label}` `{stop.snippet}` — {stop.text.split()[0]}" in text
    linked = walk.rendered(doc, NOTES[doc].explanation(), lambda stop: f"#L{stop.line}")
    assert f"[`{stops[-1].label}`](#L{stops[-1].line})" in linked
    # a file beside the note by its name, host code elsewhere in the package by its path
    assert stops[-1].label.startswith("naive.cu:")
    host = walk.stops("kernels/cuda/tensor_dispatch.md")
    assert {s.label.split(":")[0] for s in host} == {"policy/tensor.py", "cuda/dispatch.py"}


def test_explain_prints_the_walk_with_line_numbers_in_the_lesson():
    stops = walk.stops(registry.get("bigtile").doc)
    short = invoke("explain", "bigtile")
    assert short.exit_code == 0
    text = " ".join(short.output.split())
    assert "What to notice in the code." in text
    for stop in stops:
        assert stop.label in text, stop.label
    assert text.index(stops[-1].label) < text.index("Lab notes")  # before the pointer to the lab notes


def test_explain_json_gives_each_stop_s_file_line_snippet_and_why():
    doc = json.loads(invoke("explain", "naive", "--json").stdout)[0]
    stops = walk.stops(registry.get("naive").doc)
    assert doc["walk"] == [{"file": s.path, "line": s.line, "snippet": s.snippet, "why": s.text} for s in stops]
    assert doc["walk"][-1]["file"] == "kernels/cuda/naive.cu"
