"""`gemmlab book`: the static site, rendered from Jinja2 templates (`templates/`).

Every page is made from the registry (names, summaries, chapters, launches), the rungs' notes and
sources, the committed records and `gemmlab inspect`; the templates hold the wording around them.
A rung added to the registry gets its page, its place on the start page and in the charts of its
precision class with no change here.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .. import committed, registry, walk
from ..precision import Precision
from ..registry import Implementation
from ..ui.machine import JUDGE_SCHEMA
from . import chapters, facts, glossary, sources

#: Files copied as they are from the templates' folder.
STATIC = ("style.css", "book.js")
#: The yardstick each precision class is timed against: the registry's baselines.
YARDSTICK_IMPL = {Precision.FP32: registry.BASELINE, Precision.TF32: registry.TF32_BASELINE,
                  Precision.FP32X3: registry.BASELINE}
TITLES = {Precision.FP32: "strict FP32", Precision.TF32: "TF32", Precision.FP32X3: "FP32-accurate"}


def page_of(impl: Implementation) -> str:
    return f"rung-{impl.name}.html"


def precision_page(precision: Precision) -> str:
    return f"precision-{precision}.html"


@dataclass
class Book:
    """What one build reads: the records, the judged solutions, the inspect rows."""

    records: facts.Records
    judged: list[tuple[Path, dict]] = field(default_factory=list)
    inspected: dict[str, list[dict]] = field(default_factory=dict)
    inspect_note: str = ""

    def copied(self) -> dict[str, str]:
        """Record kind → the copy's path inside the site."""
        return {kind: f"records/{path.name}" for kind, path in self.records.paths.items()}


def environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    return Environment(loader=PackageLoader("gemmlab.book", "templates"), undefined=StrictUndefined,
                       autoescape=select_autoescape(["html", "svg"]), trim_blocks=True, lstrip_blocks=True)


def judged_record(path: Path) -> dict:
    """A `gemmlab judge --json` record, or a UsageError that names what is wrong with it."""
    from ..ui.errors import UsageError

    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"--judged {path}: not a judge record ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != JUDGE_SCHEMA:
        raise UsageError(f"--judged {path}: not a judge record (make one with gemmlab judge FILE --json)")
    return data


def _member(book: Book, impl: Implementation) -> dict:
    figures = facts.ladder_figures(book.records, impl)
    if figures:
        figures["of_limit_pct"] = None if figures["of_limit"] is None else 100 * figures["of_limit"]
    original = chapters.variant_of(impl)
    chapter = chapters.chapter_of(impl)
    return {"name": impl.name, "file": page_of(impl), "ref": chapters.reference(impl),
            "precision": str(impl.precision), "summary": impl.summary, "figures": figures,
            "variant_of": original.name if original else None, "chapter_slug": chapter.slug,
            "chapter_title": (f"{chapter.number}. " if chapter.number is not None else "") + chapter.title,
            "random": facts.random_summary(book.records, impl)}


def present_precisions() -> list[Precision]:
    return sorted({impl.precision for impl in registry.reading_order()}, key=list(Precision).index)


def _common(book: Book, here: str) -> dict:
    return {"here": here, "precision_pages": [{"file": precision_page(p), "title": TITLES[p]}
                                              for p in present_precisions()]}


def render_markdown(text: str, book: Book, out: Path, terms: bool = True) -> str:
    """The notes as HTML (markdown-it, CommonMark with tables). A link to a file of the repository
    (a record it cites, found by `committed`: the checkout's, or the copy a wheel carries) points
    at a copy inside the site; one to a file that is not here keeps its text and loses the link,
    so that no link of the site leads nowhere."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(text)
    for token in tokens:
        for child in token.children or []:
            if child.type != "link_open":
                continue
            href = str(child.attrs.get("href", ""))
            if "://" in href or href.startswith(("#", "mailto:")):
                continue
            path = href.split("#", 1)[0]
            target = committed.find(path) if path else None
            if target is not None:
                copy = out / "files" / path
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(target, copy)
                child.attrs["href"] = f"files/{path}"
            else:
                child.attrs.pop("href", None)
                child.attrs["title"] = f"{href} (not in this book)"
    if terms:
        glossary.link_tokens(tokens)
    return md.renderer.render(tokens, md.options, {})


def glossary_html(book: Book, env) -> str:
    entries = [{"slug": t.slug, "names": t.names, "text": t.text} for t in glossary.terms()]
    return env.get_template("glossary.html").render(title="Glossary", entries=entries,
                                                    **_common(book, glossary.PAGE))


def _sweep_series(record: dict, members: list[Implementation]) -> tuple[list[str], list]:
    from .charts import Point, Series

    labels = [p["label"] for p in record["points"]]
    series = []
    for impl in members:
        pts = [Point(p["label"], p["ratio"], _point_tip(impl, p)) for p in facts.sweep_points(record, impl)
               if p["ratio"]]
        if pts:
            series.append(Series(impl.name, pts))
    return labels, series


def _point_tip(impl: Implementation, p: dict) -> str:
    yardstick = facts.YARDSTICK[impl.precision][0]
    clock = f", SM {p['clock_mhz']:.0f} MHz" if p["clock_mhz"] else ""
    return (f"{impl.name} at {p['label']} ({'×'.join(map(str, p['shape']))})\n{p['median_ms']:.4f} ms, "
            f"{p['tflops']:.1f} TFLOP/s, {p['ratio']:.2f}× {yardstick}{clock}"
            + ("" if p["passed"] else "\nFAILED its check"))


def class_members(precision: Precision) -> list[Implementation]:
    """The implementations of a class in reading order, its yardstick's own entry left out."""
    return [i for i in chapters.reading_order() if i.precision == precision and i.name != YARDSTICK_IMPL[precision]]


def _ladder_info(book: Book) -> dict | None:
    record = book.records.ladder
    if not record:
        return None
    return {"device": record["device"]["name"], "shape": "×".join(map(str, record["shape"])),
            "timing": record.get("timing", ""), "iters": record["iters"], "warmup": record["warmup"],
            "date": record["date"], "clock": facts.clock(record), "file": book.copied()["ladder"]}


#: The start page's steps for someone who has just installed, each with its command.
def next_steps(first: Implementation) -> list[dict]:
    return [{"text": f"Read {chapters.reference(first)}, {first.name}, and its source", "command": f"gemmlab show {first.name}"},
            {"text": "Check it on the judge's cases (on a GPU for CUDA rungs)", "command": f"gemmlab check {first.name}"},
            {"text": "Write your own solution from the starter", "command": "gemmlab new --framework cuda mine.cu"},
            {"text": "Judge it, and keep the record for this book", "command": "gemmlab judge mine.cu --json > mine.json"},
            {"text": "See what the next rung changes", "command": f"gemmlab tour --at {first.name}"},
            {"text": "Get it ready for LeetGPU, and submit it there", "command": "gemmlab submit mine.cu"}]


def index_page(book: Book, env) -> str:
    from markdown_it import MarkdownIt

    inline = MarkdownIt("commonmark", {"html": False}).renderInline
    chaps = [{"number": c.number, "title": c.title, "slug": c.slug, "summary": inline(c.summary),
              "members": [_member(book, m) for m in c.members]} for c in chapters.chapters()]
    first = chapters.reading_order()[0]
    return env.get_template("index.html").render(
        title="The ladder", chapters=chaps, ladder=_ladder_info(book), next_steps=next_steps(first),
        record_files=[p.name for p in book.records.paths.values()] or ["(none)"],
        inspect_note=book.inspect_note or "compiled and disassembled for this build",
        **_common(book, "index"))


def _diagram(env, impl: Implementation, inspected: list[dict]) -> tuple[str, str]:
    from . import diagram

    if impl.launches:
        geometry = facts.geometry(impl)[impl.launches.index(facts.main_launch(impl))]
        main = facts.main_row(impl, inspected)
        return diagram.svg(env, geometry, main, f"{impl.name}: {geometry['label']}"), ""
    if impl.tile:
        return diagram.program_svg(env, impl.tile, f"{impl.name}: one program's tile"), ""
    if impl.family == "torch":
        return "", f"{impl.name} calls a library (cuBLAS): its kernel is not ours to draw."
    return "", f"{impl.name}'s kernel is written in {LANGUAGES[impl.family]}, which names no tile this book can draw."


#: How a page names the language of a family's sources.
LANGUAGES = {"cuda": "CUDA C++", "triton": "Triton", "torch": "PyTorch", "cute": "CuTe DSL", "mojo": "Mojo",
             "tilelang": "TileLang"}


def rung_page(book: Book, env, impl: Implementation, out: Path) -> str:
    prev, nxt = _neighbours(impl)
    before = chapters.previous(impl)
    inspected = book.inspected.get(impl.name, [])
    picture, no_diagram = _diagram(env, impl, inspected)
    srcs = [{"path": s, "html": sources.html(sources.read(s), sources.lexer_name(s), anchors=sources.anchor(s))}
            for s in impl.sources]
    diff, changes, added, dropped = "", [], [], []
    if before is not None:
        text = sources.unified(before, impl)
        diff = sources.html(text, "diff", line_numbers=False) if text else ""
        changes = sources.launch_changes(before, impl)
        added, dropped = sources.other_files(before, impl)
    member = _member(book, impl)
    original = chapters.variant_of(impl)
    member["variant_of_link"] = f'<a href="{page_of(original)}">{original.name}</a>' if original else ""
    note = book.inspect_note or f"{impl.name} has no CUDA kernel of ours to inspect."
    lesson, lab = walk.lesson_and_lab(impl, lambda stop: _line_link(impl, stop))
    return env.get_template("rung.html").render(
        title=impl.name, impl=member, prev=prev, next=nxt,
        prev_of=_member(book, before) if before else None,
        explanation=render_markdown(lesson, book, out), diagram=picture, no_diagram=no_diagram,
        lab_notes=render_markdown(lab, book, out) if lab else "",
        launches=facts.geometry(impl), inspected=inspected, sass_keys=facts.SASS_SHOWN, inspect_note=note,
        diff=diff, changes=changes, added=added, dropped=dropped, primary=sources.primary(impl),
        language=LANGUAGES[impl.family],
        sources=srcs, sweep_chart=precision_sweep(book, impl.precision, impl.name),
        **_common(book, page_of(impl)))


def _line_link(impl: Implementation, stop: walk.Stop) -> str | None:
    """The anchor of a walk's stop in the page's listing of its source; None for a file the page
    does not list (host code the walk points into)."""
    return f"#{sources.anchor(stop.path)}-{stop.line}" if stop.path in impl.sources else None


def _neighbours(impl: Implementation) -> tuple[dict | None, dict | None]:
    order = chapters.reading_order()
    i = order.index(impl)

    def brief(other: Implementation) -> dict:
        return {"name": other.name, "ref": chapters.reference(other), "file": page_of(other)}

    return (brief(order[i - 1]) if i else None), (brief(order[i + 1]) if i + 1 < len(order) else None)


def _bar_tip(impl_name: str, f: dict) -> str:
    limit = f" · {100 * f['of_limit']:.0f} % of the limit at {f['clock_mhz']:.0f} MHz" if f["of_limit"] else ""
    ratio = f" · {f['ratio']:.2f}× {f['yardstick']}" if f["ratio"] else ""
    return f"{impl_name}: {f['median_ms']:.3f} ms, {f['tflops']:.1f} TFLOP/s{ratio}{limit}"


def precision_bars(book: Book, precision: Precision) -> tuple[str, float | None]:
    """TFLOP/s of the class at the ladder's shape, its yardstick's bar last, and the class's limit
    at the recorded clock as a line; the limit too."""
    from ..bench import colours
    from . import charts

    record = book.records.ladder
    if not record:
        return "", None
    impls = class_members(precision) + [registry.REGISTRY[YARDSTICK_IMPL[precision]]]
    items = []
    for impl in impls:
        f = facts.ladder_figures(book.records, impl)
        if f:
            colour = "#888888" if impl.name == YARDSTICK_IMPL[precision] else colours.PRECISION.get(str(precision), "#1f77b4")
            items.append((impl.name, f["tflops"], colour, _bar_tip(impl.name, f)))
    if not items:
        return "", None
    limit = facts.limit_at_clock(record, precision, facts.clock(record))
    marks = [(limit, f"{precision} limit at {facts.clock(record):.0f} MHz: {limit:.1f}", "--")] if limit else []
    shape = "×".join(map(str, record["shape"]))
    title = f"{TITLES[precision]} at {shape}, {record['device']['name']} (grey: the yardstick)"
    return charts.bars(f"bars-{precision}", title, items, "TFLOP/s", marks), limit


def precision_sweep(book: Book, precision: Precision, highlight: str | None = None) -> str:
    """The class's ratios over the sweep's shapes; with `highlight`, that rung's own chart (""
    where it did not run there)."""
    from . import charts

    record = book.records.sweep
    if not record:
        return ""
    labels, series = _sweep_series(record, class_members(precision))
    if not any(highlight in (None, s.name) for s in series):
        return ""
    yardstick = facts.YARDSTICK[precision][0]
    if highlight:
        return charts.lines(f"sweep-{highlight}", f"{highlight} among the {precision} rungs: × {yardstick}",
                            labels, series, f"time of {yardstick} / time", mark=(1.0, yardstick),
                            highlight=highlight)
    return charts.lines(f"sweep-{precision}", f"{TITLES[precision]}: time of {yardstick} / time",
                        labels, series, f"× {yardstick}", mark=(1.0, yardstick))


def random_chart(book: Book, precision: Precision | None, chart_id: str, record: dict | None = None) -> str:
    """A random draw's ratios against the output tiles, each implementation against its yardstick,
    for one class (or all of them): `record`, else the newest draw that timed that class."""
    from . import charts
    from .charts import Point, Series

    def timed(impl: Implementation, draw: dict) -> bool:
        return impl.name in draw["names"] and impl.name not in (registry.BASELINE, registry.TF32_BASELINE) \
            and (precision is None or impl.precision == precision)

    if record is None:
        record = next((r for r in book.records.randoms
                       if any(timed(i, r) for i in chapters.reading_order())), None)
    if not record:
        return ""
    series, yardsticks = [], set()
    for impl in chapters.reading_order():
        if not timed(impl, record):
            continue
        yardstick, field_name = facts.YARDSTICK[impl.precision]
        pts = []
        for p in record["points"]:
            r = facts.row(p, impl.name)
            if r and r.get(field_name):
                m, n, k = p["shape"]
                tip = (f"{impl.name} at {p['label']}\n{r['median_ms']:.4f} ms, {r['tflops']:.2f} TFLOP/s, "
                       f"{r[field_name]:.2f}× {yardstick}")
                pts.append(Point(m * k / 128 ** 2, r[field_name], tip))
        if pts:
            series.append(Series(impl.name, pts))
            yardsticks.add(yardstick)
    if not series:
        return ""
    r, against = record["random"], " or ".join(sorted(yardsticks))
    return charts.scatter(chart_id, f"{r['n']} random shapes (seed {r['seed']}): time of {against} / time",
                          series, "output tiles (M·K / 128²)", f"× {against}", mark=(1.0, against))


def precision_html(book: Book, env, precision: Precision) -> str:
    bars, limit = precision_bars(book, precision)
    members = [_member(book, i) for i in class_members(precision)]
    page = {"title": f"{TITLES[precision]} ({precision})", "precision": str(precision),
            "yardstick": facts.YARDSTICK[precision][0], "limit": limit}
    return env.get_template("precision.html").render(
        title=page["title"], page=page, bars=bars, members=members, ladder=book.records.ladder,
        sweep=precision_sweep(book, precision), random=random_chart(book, precision, f"random-{precision}"),
        **_common(book, precision_page(precision)))


def sweep_html(book: Book, env) -> str:
    record = book.records.sweep
    panels = []
    for precision in present_precisions() if record else []:
        chart = precision_sweep(book, precision)
        if not chart:
            continue
        labels = [p["label"] for p in record["points"]]
        rows = []
        for impl in class_members(precision):
            by_label = {p["label"]: p["ratio"] for p in facts.sweep_points(record, impl)}
            if by_label:
                rows.append({"name": impl.name, "file": page_of(impl), "cells": [by_label.get(x) for x in labels]})
        panels.append({"precision": str(precision), "chart": chart, "labels": labels, "rows": rows,
                       "title": f"{TITLES[precision]} against {facts.YARDSTICK[precision][0]}"})
    randoms = []
    for n, r in enumerate(book.records.randoms):
        one = facts.Records(randoms=[r])
        rows = [{"name": i.name, "file": page_of(i), **found} for i in chapters.reading_order()
                if (found := facts.random_summary(one, i))]
        randoms.append({"id": "random" if n == 0 else f"random-{n + 1}", "n": r["random"]["n"],
                        "seed": r["random"]["seed"], "device": r["device"]["name"], "date": r["date"],
                        "chart": random_chart(book, None, f"random-all-{n + 1}", r), "rows": rows})
    info = {"device": record["device"]["name"], "date": record["date"],
            "timing": f"median of {record['iters']} after {record['warmup']} warm-ups"} if record else None
    return env.get_template("sweep.html").render(title="The sweep", panels=panels, sweep=info, randoms=randoms,
                                                 **_common(book, "sweep.html"))


def _at_ladder(book: Book, timing: dict | None) -> bool:
    record = book.records.ladder
    return bool(record and timing and list(timing.get("shape", [])) == list(record["shape"]))


def _nearest(book: Book, precision: str, timing: dict | None) -> str:
    """The two rungs of the ladder record, of the same precision, whose TFLOP/s bracket this one
    (only where the judged timing ran at the ladder's shape)."""
    tflops = (timing or {}).get("tflops")
    if tflops is None or not _at_ladder(book, timing):
        return ""
    ranked = sorted(((f["tflops"], impl) for impl in chapters.reading_order()
                     if str(impl.precision) == precision and (f := facts.ladder_figures(book.records, impl))),
                    key=lambda t: t[0])
    below = [impl for t, impl in ranked if t <= tflops]
    above = [impl for t, impl in ranked if t > tflops]
    words = [f'<a href="{page_of(i)}">{i.name}</a>' for i in (below[-1:] + above[:1])]
    return " and ".join(words) if len(words) == 2 else (words[0] + (" (it beats them all)" if below else " (below them all)")
                                                       if words else "")


def judged_html(book: Book, env) -> str:
    from ..bench import colours
    from . import charts

    entries, items = [], []
    for n, (path, data) in enumerate(book.judged):
        timing = data.get("timing") or None
        cases = data.get("cases") or []
        entries.append({
            "slug": f"judged-{n}", "file": data.get("file") or path.name, "precision": data.get("precision", "fp32"),
            "passed": bool(data.get("passed")), "framework": data.get("framework") or "unknown",
            "device": data.get("device"), "date": data.get("date", "?"), "seed": data.get("seed"),
            "build": data.get("build"), "timing": timing,
            "failure": data.get("failure") or (f"not run: {data['not_run']}" if data.get("not_run") else ""),
            "cases_total": len(cases), "cases_passed": sum(c.get("status") == "pass" for c in cases),
            "cases_skipped": sum(c.get("status") == "skip" for c in cases),
            "failed_cases": [c for c in cases if c.get("status") in ("fail", "error")],
            "nearest": _nearest(book, data.get("precision", "fp32"), timing)})
        if _at_ladder(book, timing) and timing.get("tflops"):
            items.append((f"yours: {Path(entries[-1]['file']).name}", timing["tflops"], "#9467bd",
                          f"{entries[-1]['file']}: {timing['median_ms']:.3f} ms, {timing['tflops']:.2f} TFLOP/s"
                          f" at {'×'.join(map(str, timing['shape']))} on {data.get('device') or '?'}"))
    chart, note = "", ""
    record = book.records.ladder
    if entries and record and not items:
        note = (f"No timing here ran at the ladder's shape ({'×'.join(map(str, record['shape']))}), so none is "
                "drawn beside it: judged on a GPU with the performance case, yours would be.")
    if items and record:
        for impl in chapters.reading_order():
            f = facts.ladder_figures(book.records, impl)
            if f and impl.precision == Precision.FP32:
                items.append((impl.name, f["tflops"], colours.PRECISION["fp32"], _bar_tip(impl.name, f)))
        items.sort(key=lambda item: -item[1])
        shape = "×".join(map(str, record["shape"]))
        chart = charts.bars("judged", f"your solutions beside the strict-FP32 ladder ({record['device']['name']}, {shape})",
                            items, "TFLOP/s")
        note = ("The ladder's bars are the committed record's; yours are as judged, on the device and at the "
                "shape each entry names: compare like with like.")
    return env.get_template("judged.html").render(title="Your solutions", judged=entries, chart=chart,
                                                  chart_note=note, **_common(book, "judged.html"))


def build(book: Book, out: Path, progress=None) -> list[Path]:
    """Write the site into `out` (made if missing); return the pages written."""
    env = environment()
    out.mkdir(parents=True, exist_ok=True)
    for name in STATIC:
        (out / name).write_text(env.loader.get_source(env, name)[0])
    (out / "style.css").write_text((out / "style.css").read_text() + "\n" + sources.css())
    (out / "records").mkdir(exist_ok=True)
    for kind, copy in book.copied().items():
        shutil.copyfile(book.records.paths[kind], out / copy)
    impls = chapters.reading_order()
    pages: dict[str, str] = {"index.html": index_page(book, env)}
    for n, impl in enumerate(impls):
        if progress:
            progress(f"writing {page_of(impl)}", n, len(impls))
        pages[page_of(impl)] = rung_page(book, env, impl, out)
    if progress:  # the stage's end: a piped run prints its last line here
        progress(f"wrote {len(impls)} implementation pages", len(impls), len(impls))
    for precision in present_precisions():
        pages[precision_page(precision)] = precision_html(book, env, precision)
    pages["sweep.html"] = sweep_html(book, env)
    pages["judged.html"] = judged_html(book, env)
    pages[glossary.PAGE] = glossary_html(book, env)
    written = []
    for name, text in pages.items():
        (out / name).write_text(text)
        written.append(out / name)
    return written
