"""The book in a real browser (issue 33, point 4): Debian's Chromium, driven by pytest-playwright.

Every page loads with no console error; every chart, diagram and image renders, non-empty, at
the shape its viewBox says; every internal link resolves (its fragment too); no two labels of a
chart overlap; hovering a point shows its figures and, with JavaScript, dims the other series;
the diff of naive-fma from naive shows the lines that differ. Screenshots of the start page and
one rung page go to results/book-screens/ (ignored by git), for CI to keep.

Where Chromium or Playwright is missing the tests skip with one line; under CI (CI=true) they
fail instead, since .ci/run installs both.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from tests.bookbuild import ROOT, built

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREENS = ROOT / "results" / "book-screens"


def _missing() -> str:
    try:
        import playwright  # noqa: F401
        import pytest_playwright  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install -e '.[test]')"
    return "" if CHROMIUM else "no Chromium here (apt-get install chromium)"


if _missing():
    if os.environ.get("CI"):
        raise RuntimeError(f"CI must run the browser tests: {_missing()}")
    pytest.skip(_missing(), allow_module_level=True)


@pytest.fixture(scope="session")
def browser_type_launch_args():
    """The system's Chromium, as this machine runs it headless: no sandbox (root), no network."""
    return {"executable_path": CHROMIUM, "headless": True,
            "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--no-first-run"]}


@pytest.fixture(scope="session")
def device():
    """pytest-playwright's device (none: a desktop page), in place of conftest's torch device."""
    return None


def _pages() -> list[str]:
    """Every page the book writes, from the registry (collecting the tests builds nothing)."""
    from gemmlab import registry
    from gemmlab.book import site

    classes = sorted({str(i.precision) for i in registry.reading_order()})
    return (["index.html", "sweep.html", "judged.html", "glossary.html"] + [f"precision-{c}.html" for c in classes]
            + [site.page_of(i) for i in registry.reading_order()])


def _open(page, path: Path) -> list[str]:
    """Load the page; return its console errors and uncaught exceptions."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return errors


@pytest.mark.parametrize("name", _pages())
def test_every_page_loads_renders_and_links_within_the_book(page, name):
    """One load per page: no console error, every figure drawn at its shape, every link resolving."""
    path = built() / name
    assert sorted(p.name for p in built().glob("*.html")) == sorted(_pages())
    assert _open(page, path) == [], name
    figures = page.eval_on_selector_all("svg.chart, svg.diagram, img", """els => els.map(e => {
        const r = e.getBoundingClientRect();
        const vb = e.viewBox && e.viewBox.baseVal;
        return {tag: e.tagName, id: e.id, w: r.width, h: r.height,
                vw: vb ? vb.width : (e.naturalWidth || 0), vh: vb ? vb.height : (e.naturalHeight || 0),
                drawn: e.tagName === 'IMG' ? e.complete && e.naturalWidth > 0 : e.querySelectorAll('path, rect, use, line').length};
    })""")
    for f in figures:
        assert f["w"] > 100 and f["h"] > 40 and f["drawn"], (name, f)
        assert abs(f["w"] / f["h"] - f["vw"] / f["vh"]) < 0.02 * f["vw"] / f["vh"], (name, f)
    for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
        url = urlparse(href)
        if url.scheme != "file":
            continue
        target = Path(unquote(url.path))
        assert target.is_file(), (name, href)
        if url.fragment and target.suffix == ".html":
            assert f'id="{url.fragment}"' in target.read_text(), (name, href)


@pytest.mark.parametrize("name", ["index.html", "sweep.html", "precision-fp32.html", "rung-bigtile.html"])
def test_no_two_labels_of_a_chart_overlap(page, name):
    _open(page, built() / name)
    overlaps = page.eval_on_selector_all("svg.chart", """charts => charts.flatMap(chart => {
        const boxes = [...chart.querySelectorAll('g[id^="text_"]')].map(g => g.getBoundingClientRect())
            .filter(r => r.width > 0);
        const out = [];
        for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
            const a = boxes[i], b = boxes[j];
            const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
            const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
            if (w > 1 && h > 1) out.push(chart.id + ': ' + i + '/' + j);
        }
        return out;
    })""")
    assert overlaps == []


def test_a_point_shows_its_figures_on_hover_and_dims_the_rest(page):
    _open(page, built() / "sweep.html")
    chart = page.locator("svg.chart").first
    tip = chart.locator("g.tip").first
    assert "ms" in tip.locator("title").text_content()
    tip.dispatch_event("mouseenter")  # the first point may sit under others: the event itself
    assert "dim" in chart.get_attribute("class")


def test_the_diff_page_shows_the_lines_that_differ(page):
    _open(page, built() / "rung-naive-fma.html")
    added = page.locator(".diff .gi").all_text_contents()
    removed = page.locator(".diff .gd").all_text_contents()
    assert any("fmaf(" in line for line in added), added
    assert any("acc += A" in line for line in removed), removed


def test_a_walk_s_link_into_a_folded_source_opens_it_at_the_line(page):
    """tma's walk stops in hopper.cuh, a source the page folds: the link opens the fold."""
    _open(page, built() / "rung-tma.html")
    link = page.locator('.explanation a[href^="#src-hopper-cuh-"]').first
    line = link.get_attribute("href")[1:]
    fold = f"document.getElementById('{line}').closest('details')"
    assert page.evaluate(f"{fold}.open") is False
    link.click()
    page.wait_for_function(f"{fold}.open")
    assert page.evaluate("location.hash") == f"#{line}"


def test_screenshots_of_the_start_page_and_a_rung_page(page):
    SCREENS.mkdir(parents=True, exist_ok=True)
    for name in ("index.html", "rung-bigtile.html"):
        _open(page, built() / name)
        shot = SCREENS / name.replace(".html", ".png")
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 20_000


#: Issue 54's bounds: no page scrolls sideways on a desktop or a phone, and a rung's page, its lab
#: notes folded, is a lesson one can read through (its source and diff scroll in their own boxes).
WIDTHS = (1400, 420)
RUNG_PAGE_MAX_PX = 8000


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", _pages())
def test_no_page_scrolls_sideways(page, name, width):
    page.set_viewport_size({"width": width, "height": 900})
    _open(page, built() / name)
    wider = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert wider <= 0, f"{name} is {wider} px wider than a {width} px window"


@pytest.mark.parametrize("name", [n for n in _pages() if n.startswith("rung-")])
def test_a_rung_page_opens_with_its_lesson_and_folds_its_lab_notes(page, name):
    page.set_viewport_size({"width": 1400, "height": 900})
    _open(page, built() / name)
    assert page.evaluate("document.querySelectorAll('details.lab-notes[open]').length") == 0
    order = page.evaluate("Array.from(document.querySelectorAll('main > h2')).map(h => h.id)")
    assert order[:3] == ["explanation", "diagram", "figures"], order
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height <= RUNG_PAGE_MAX_PX, f"{name} is {height} px tall at 1400 px"


def test_a_term_links_to_its_glossary_entry(page):
    _open(page, built() / "rung-bigtile.html")
    href = page.evaluate("document.querySelector('.explanation a.term').getAttribute('href')")
    _open(page, built() / href.split("#")[0])
    assert page.evaluate(f"!!document.getElementById('{href.split('#')[1]}')"), href
