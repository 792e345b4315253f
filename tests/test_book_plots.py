"""The plots (issue 33, point 3): one colour per precision class or a panel each, no labels that
collide, and sweep lines whose colours stay apart. Checked on the committed H200 records, drawn as
`gemmlab report` draws them, and on the colour set itself."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from matplotlib.colors import to_rgb

from gemmlab.bench import colours, report

ROOT = Path(__file__).resolve().parent.parent
LADDER = json.loads((ROOT / "results/h200-latest.json").read_text())
SWEEP = json.loads((ROOT / "results/h200-sweep.json").read_text())
RANDOM = json.loads((ROOT / "results/h200-random.json").read_text())


def _texts(fig):
    """Every label the figure draws, with its box on the canvas: titles, axis labels, legend
    entries, and the tick labels of ticks inside their axis's view (matplotlib keeps labels for
    ticks beyond it, which it does not draw)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = list(fig.texts)  # the suptitle is one of them
    for legend in fig.legends:
        texts += legend.get_texts()
    for ax in fig.axes:
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        if ax.get_legend():
            texts += ax.get_legend().get_texts()
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if low <= tick.get_loc() <= high and tick.label1.get_visible():
                    texts.append(tick.label1)
    return [(t.get_text(), t.get_window_extent(renderer)) for t in texts
            if t.get_visible() and str(t.get_text()).strip()]


def _collisions(fig) -> list[tuple[str, str]]:
    boxes = _texts(fig)
    return [(a, b) for (a, ba), (b, bb) in itertools.combinations(boxes, 2)
            if ba.width and bb.width and ba.overlaps(bb) and
            min(ba.x1, bb.x1) - max(ba.x0, bb.x0) > 1 and min(ba.y1, bb.y1) - max(ba.y0, bb.y0) > 1]


@pytest.mark.parametrize("value", ["tflops", "median_ms"])
def test_the_ladder_has_a_panel_per_precision_class_in_its_colour(value):
    fig = report.ladder_figure(LADDER, value)
    panels = [ax for ax in fig.axes if ax.patches]
    classes = {r["precision"] for r in LADDER["results"]}
    assert len(panels) == len(classes)
    for ax in panels:
        assert len({tuple(round(c, 3) for c in p.get_facecolor()[:3]) for p in ax.patches}) == 1
    assert _collisions(fig) == []


def test_the_sweep_has_a_panel_per_class_and_no_two_lines_alike():
    fig = report.sweep_figure(SWEEP)
    for ax in fig.axes:
        looks = [(line.get_color(), line.get_linestyle()) for line in ax.get_lines()]
        assert len(looks) == len(set(looks)), looks
    assert _collisions(fig) == []


def test_a_sweep_of_many_shapes_thins_its_labels_so_none_collides():
    fig = report.sweep_figure(RANDOM)  # 64 shapes
    labels = [t for t in fig.axes[-1].get_xticklabels() if t.get_text()]
    assert 0 < len(labels) <= report.LABELS_SHOWN
    assert _collisions(fig) == []


def test_the_random_plot_keeps_its_labels_apart():
    assert _collisions(report.random_figure(RANDOM)) == []


@pytest.mark.parametrize("n", [3, 10, 16, 20, 30])
def test_distinct_colours_stay_apart(n):
    rgb = [to_rgb(c) for c in colours.distinct(n)]
    assert len(set(colours.distinct(n))) == n
    nearest = min(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) ** 0.5
                  for a, b in itertools.combinations(rgb, 2))
    assert nearest > 0.12, nearest


def test_lines_past_ten_are_drawn_with_another_line_style():
    assert colours.line_style(0) != colours.line_style(10)
