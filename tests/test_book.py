"""`gemmlab book`, `tour`, `show` and `diff` (issue 33), without a browser: what the site holds, that
it follows the registry and the records, and the commands' exit codes. tests/test_book_browser.py
opens the same build in Chromium."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from gemmlab import registry, walk
from gemmlab.book import chapters, facts, site, sources
from tests.bookbuild import JUDGED, ROOT, built
from tests.clitools import assert_no_traceback, assert_one_line, files_under, invoke


def _page(name: str) -> str:
    return (built() / name).read_text()


def test_every_implementation_has_a_page_reached_from_the_start_page():
    index = _page("index.html")
    for impl in registry.reading_order():
        assert (built() / site.page_of(impl)).is_file(), impl.name
        assert f'href="{site.page_of(impl)}"' in index, impl.name


def test_the_start_page_follows_the_chapters_in_reading_order():
    index = _page("index.html")
    places = [index.index(f'href="{site.page_of(i)}"') for i in registry.reading_order()]
    assert places == sorted(places)
    for chapter in registry.CHAPTERS:
        assert chapter.title in index


def test_a_rung_page_shows_the_records_figures_not_typed_ones():
    record = json.loads((ROOT / "results/h200-latest.json").read_text())
    row = next(r for r in record["results"] if r["name"] == "tiling-2d")
    page = _page("rung-tiling-2d.html")
    assert f"{row['median_ms']:.3f}" in page and f"{row['tflops']:.1f}" in page
    assert f"{row['ratio_vs_cublas']:.2f}×" in page
    clock = record["clocks_during_timing"]["sm_clock_mhz"]["median"]
    limit = record["peaks_tflops"]["fp32"] * clock / record["device"]["max_sm_clock_mhz"]
    assert f"{100 * row['tflops'] / limit:.0f} %" in page and f"{clock:.0f} MHz" in page


def test_a_rung_page_holds_its_notes_source_diff_diagram_and_inspect_facts():
    page = _page("rung-naive-fma.html")
    assert 'class="explanation"' in page and "fmaf" in page
    assert 'class="highlight"' in page  # Pygments
    assert re.search(r'<span class="gi">\+.*fmaf', page)  # the line naive-fma adds
    assert 'class="diagram"' in page
    rows = facts.inspect_all([registry.get("naive-fma")])[0]["naive-fma"]
    assert f'<td class="num">{rows[0]["registers"]}</td>' in page


@pytest.mark.parametrize("name,entry", [("default", "bigtile"), ("tf32", "wgmma_swap"), ("3xtf32", "wgmma_3xtf32")])
def test_a_dispatcher_is_drawn_and_diffed_by_the_launch_it_runs_at_the_performance_shape(name, entry):
    """Their chains open with another rung's launch (a prelude for short reductions): the page's
    diagram and the diff's build are the launch the performance shape runs, not that one."""
    impl = registry.get(name)
    main = facts.main_launch(impl)
    assert main.entry == entry and main.entry != impl.launches[0].entry
    assert f"{name}: {impl.launch_label(main)}" in _page(site.page_of(impl))
    one_idea = registry.get("thin")  # a rung of one idea: its first launch, whatever the big shape runs
    assert facts.main_launch(one_idea) is one_idea.launches[0]


def test_a_page_of_another_language_does_not_say_it_calls_cublas():
    for name in ("cute-tiled", "mojo-tiled", "tilelang-gemm"):
        assert "calls a library (cuBLAS)" not in _page(site.page_of(registry.get(name))), name
    assert "calls a library (cuBLAS)" in _page(site.page_of(registry.get("torch")))


def test_a_rung_page_walks_its_code_each_stop_linked_to_its_line():
    """Issue 54: the lesson's "what to notice in the code", each stop's `file:line` a link to that
    line of the listed source (headers the page does not list: the place as text)."""
    for name in ("naive", "tma"):
        impl = registry.get(name)
        page = _page(site.page_of(impl))
        assert page.index("What to notice in the code") < page.index('id="diagram"')
        for stop in walk.stops(impl.doc):
            anchor = f"{sources.anchor(stop.path)}-{stop.line}"
            if stop.path in impl.sources:
                assert f'<a href="#{anchor}"><code>{stop.label}</code></a>' in page, stop
                assert f'id="{anchor}"' in page, stop
            else:
                assert f"<code>{stop.label}</code>" in page and f'href="#{anchor}"' not in page, stop


def test_a_variant_is_read_against_what_it_varies():
    impl = registry.get("float4-bk16")
    assert chapters.previous(impl) is registry.get("float4")
    page = _page("rung-float4-bk16.html")
    assert "BK 32 → 16" in page  # same source: the build's change is what the page shows


def test_no_page_diffs_across_languages_and_the_first_of_a_language_says_why():
    """Issue 54: each step is read against what it builds on (`builds_on`, a variant's original, else
    the nearest earlier step in its own language); the first of a language has no diff, and says so."""
    for impl in chapters.reading_order():
        before = chapters.previous(impl)
        assert before is None or before.family == impl.family, (impl.name, before.name)
    assert chapters.previous(registry.get("triton")) is None  # read after cp-async, a CUDA step
    assert chapters.previous(registry.get("triton-tf32x3")) is registry.get("triton")
    assert chapters.previous(registry.get("warptile")) is registry.get("cp-async")  # not triton, read between
    page = " ".join(_page("rung-triton.html").split())
    assert "No diff: triton is the first step of the ladder written in Triton" in page
    assert 'class="diff"' not in page


@pytest.mark.parametrize("name", ["default", "tf32", "3xtf32"])
def test_a_rung_page_shows_the_newest_random_draw_that_timed_it(name):
    """The strict and the tensor draws are records of their own: each rung's page reads the one that
    timed it, against its own yardstick, and links to that draw's section of the sweep page."""
    records = facts.load_records(facts.default_record_paths())
    assert len(records.randoms) >= 2
    found = facts.random_summary(records, registry.get(name))
    page = _page(site.page_of(registry.get(name)))
    assert f"random shapes (seed {found['seed']}): geometric mean {found['geomean']:.2f}× {found['yardstick']}" in page
    assert f'href="sweep.html#{found["anchor"]}"' in page
    assert f'<h2 id="{found["anchor"]}">{found["n"]} random shapes (seed {found["seed"]})' in _page("sweep.html")


def test_the_tf32_page_measures_against_cublas_tf32():
    page = _page("precision-tf32.html")
    assert "cuBLAS TF32" in page and 'href="rung-wgmma-swap.html"' in page
    assert 'href="rung-naive.html"' not in page.split("</header>")[1]


def test_the_sweep_page_reads_without_javascript():
    page = _page("sweep.html")
    assert page.count('<svg class="chart"') >= 2
    assert "<title>" in page and "<table>" in page  # hover figures and the same figures as tables


def test_the_judged_page_shows_the_record_given():
    record = json.loads(JUDGED.read_text())
    page = _page("judged.html")
    assert record["file"] in page and "ACCEPTED" in page


def test_links_into_the_repository_point_at_copies_inside_the_book():
    for path in built().rglob("*.html"):
        for href in re.findall(r'href="([^"#]+)', path.read_text()):
            if "://" not in href and not href.startswith("data:"):
                assert (path.parent / href).exists(), f"{path.name}: {href}"


def test_a_new_rung_appears_with_no_edit_to_the_book(tmp_path, monkeypatch):
    import dataclasses

    fake = dataclasses.replace(registry.get("naive"), name="naive-again", summary="a fake rung for a test",
                               chapter=registry.SIMT, step=99)
    monkeypatch.setattr(registry, "IMPLEMENTATIONS", (*registry.IMPLEMENTATIONS, fake))
    monkeypatch.setitem(registry.REGISTRY, fake.name, fake)
    book = site.Book(facts.load_records(facts.default_record_paths()))
    site.build(book, tmp_path)
    assert "a fake rung for a test" in (tmp_path / "rung-naive-again.html").read_text()
    assert 'href="rung-naive-again.html"' in (tmp_path / "index.html").read_text()
    assert "naive-again" in (tmp_path / "precision-fp32.html").read_text()


def test_the_book_writes_under_an_ignored_folder_by_default():
    from gemmlab.cli.reading import BOOK_OUT

    ignored = subprocess.run(["git", "check-ignore", "-q", str(BOOK_OUT / "index.html")], cwd=ROOT)
    assert ignored.returncode == 0


@pytest.mark.parametrize(("args", "fragment"), [
    (["book", "-o", "{file}"], "is a file"),
    (["book", "-o", "{tmp}/out", "--judged", "{tmp}/absent.json"], "no such file"),
    (["book", "-o", "{tmp}/out", "--judged", "{file}"], "not a judge record"),
    (["book", "-o", "{tmp}/out", "--record", "{file}"], "not a results record"),
    (["show", "no-such-rung"], "unknown"),
    (["diff", "naive", "7"], "give one of them"),
    (["tour", "--at", "no-such-rung"], "unknown"),
])
def test_usage_errors_are_one_line_exit_2_and_write_nothing(tmp_path, args, fragment):
    (tmp_path / "file.json").write_text("{}")
    typed = [a.replace("{tmp}", str(tmp_path)).replace("{file}", str(tmp_path / "file.json")) for a in args]
    before = files_under(tmp_path)
    assert_one_line(invoke(*typed), 2, "error:", fragment)
    assert files_under(tmp_path) == before


def test_a_folder_of_other_files_is_not_overwritten(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    assert_one_line(invoke("book", "-o", tmp_path, "--no-inspect"), 2, "not a book")


def test_show_prints_the_source_and_with_all_every_header_it_includes():
    result = invoke("show", "naive-fma")
    assert result.exit_code == 0 and "fmaf(A[row * N + n]" in result.output
    assert "also built from: kernels/cuda/common.cuh (gemmlab show naive-fma --all)" in result.output
    assert "picks a kernel per call" not in result.output  # one kernel: no dispatch to point at
    every = invoke("show", "small", "--all").output
    for header in ("small.cu", "common.cuh", "splitk.cuh", "tile_copy.cuh"):
        assert f"small: kernels/cuda/{header}" in every, header
    assert "also built from" not in every
    dispatcher = invoke("show", "default").output
    assert "picks a kernel per call among" in dispatcher and "gemmlab explain default" in dispatcher


def test_show_takes_a_step_reference():
    assert "naive_fma" in invoke("show", registry.get("naive-fma").ref).output


def test_diff_shows_the_lines_that_differ_and_the_facts_side_by_side():
    result = invoke("diff", "naive", "naive-fma", "--no-inspect")
    assert result.exit_code == 0, result.output
    assert_no_traceback(result)
    assert re.search(r"^\+\s+acc = fmaf", result.output, re.M)
    assert re.search(r"^-\s+acc \+= A", result.output, re.M)
    assert "median ms at 8192×6144×4096" in result.output


def test_diff_with_inspect_puts_registers_side_by_side():
    result = invoke("diff", "tiling-1d", "tiling-2d")
    assert result.exit_code == 0 and "registers (sm_90a)" in result.output


def test_tour_prints_the_path_and_the_next_step():
    result = invoke("tour")
    order = registry.reading_order()
    assert result.exit_code == 0
    assert all(impl.name in result.output for impl in order)
    assert f"gemmlab show {order[0].name}" in result.output
    at = invoke("tour", "--at", order[0].name).output
    assert f"gemmlab diff {order[0].name} {order[1].name}" in at
    last_step = [i for i in order if i.ref][-1]  # the next page is a baseline, which has no step
    assert f"Next: a baseline: {order[order.index(last_step) + 1].name}" in invoke("tour", "--at", last_step.name).output


def test_judge_json_is_one_document_the_book_reads(tmp_path):
    solution = tmp_path / "mine.py"
    assert invoke("new", "--framework", "torch", solution).exit_code == 0
    solution.write_text(solution.read_text().replace("pass  # TODO", "torch.matmul(a, b, out=c)"))
    result = invoke("judge", solution, "--json", "--no-perf", "--group", "example")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    (tmp_path / "mine.json").write_text(result.stdout)
    assert site.judged_record(tmp_path / "mine.json")["passed"] is True
    assert doc["cases"] and doc["schema"] == "judge/1"


def test_a_solution_judged_at_the_ladders_shape_is_drawn_beside_it(tmp_path):
    records = facts.load_records(facts.default_record_paths())
    shape = records.ladder["shape"]
    judged = json.loads(JUDGED.read_text()) | {"device": "NVIDIA H200", "timing": {
        "shape": shape, "median_ms": 9.0, "tflops": 45.8, "baseline": "cuBLAS", "ratio_vs_baseline": 0.9}}
    book = site.Book(records, [(tmp_path / "mine.json", judged)])
    page = site.judged_html(book, site.environment())
    assert '<svg class="chart" id="judged"' in page and "yours: sol.py" in page
    # between the two strict-FP32 rungs whose TFLOP/s bracket 45.8 in the record
    ranked = sorted((r["tflops"], r["name"]) for r in records.ladder["results"]
                    if r["precision"] == "fp32" and r["name"] in registry.REGISTRY)
    below = max(n for t, n in ranked if t <= 45.8 and t == max(t2 for t2, _ in ranked if t2 <= 45.8))
    assert f'href="rung-{below}.html"' in page.split("on the ladder")[1]


def test_a_solution_timed_elsewhere_is_not_drawn_beside_the_ladder():
    records = facts.load_records(facts.default_record_paths())
    page = site.judged_html(site.Book(records, [(JUDGED, json.loads(JUDGED.read_text()))]), site.environment())
    assert '<svg class="chart"' not in page and "No timing here ran at the ladder" in page


def test_the_committed_records_are_found_from_any_folder(tmp_path, monkeypatch):
    """Run from another folder, the book and diff still read the checkout's records; where there are
    none at all (no checkout and no copy in the package), they say where they looked."""
    from gemmlab import committed
    from gemmlab.book import facts

    monkeypatch.chdir(tmp_path)
    found = facts.default_record_paths()
    assert found and all(p.parent == ROOT / "results" for p in found)
    monkeypatch.setattr(committed, "PACKAGE_DIR", tmp_path / "site-packages" / "gemmlab")
    monkeypatch.setattr(committed, "SHIPPED", committed.PACKAGE_DIR / "records")
    assert committed.checkout() is None and facts.default_record_paths() == []
    assert str(committed.SHIPPED / "results") in facts.no_records_line()
