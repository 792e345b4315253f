"""The book's charts: matplotlib draws them as SVG, put inline in the page, and every bar and point
carries its figures as an SVG <title>, which a browser shows on hover with or without JavaScript.
`book.js`, where it runs, also dims the other series while one is hovered.

Labels never collide: bar charts are horizontal (a name per row, the figure as tall as its rows),
the x labels of a line chart are turned, and legends sit outside the axes.
"""

from __future__ import annotations

import html
import io
import re
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ..bench import colours  # noqa: E402

#: The most x labels a line chart shows (turned 40°, they fit side by side).
LABELS_SHOWN = 16


@dataclass
class Point:
    x: float | str
    y: float
    tip: str  # the figures shown on hover, one per line


@dataclass
class Series:
    name: str
    points: list[Point]


#: Ratios a log axis is labelled at, where they fall within its range.
RATIO_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10, 20)


def _ratios(ax, ylabel: str, mark: tuple[float, str] | None) -> None:
    """The y axis as ratios on a log scale, labelled "0.5×", "1×", "2×" instead of powers of ten,
    with `mark` (value, label) a dotted line."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    if mark:
        ax.axhline(mark[0], color="black", lw=0.8, ls=":", label=mark[1])
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(FixedLocator(RATIO_TICKS))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel(ylabel)


class _Tips:
    """Names the artists that carry a tooltip, and puts the tooltips into the SVG afterwards."""

    def __init__(self, chart_id: str):
        self.chart_id = chart_id
        self.tips: dict[str, tuple[str, str]] = {}

    def name(self, tip: str, series: str) -> str:
        gid = f"{self.chart_id}-tip-{len(self.tips)}"
        self.tips[gid] = (tip, series)
        return gid

    def svg(self, fig, ax, title: str, legend: bool = True) -> str:
        """The titled chart (its legend outside the axes) as inline SVG, the tooltips put in."""
        ax.set_title(title, loc="left", fontsize="medium")
        if legend:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
        fig.tight_layout()
        buf = io.StringIO()
        with plt.rc_context({"svg.hashsalt": self.chart_id, "svg.fonttype": "path"}):
            fig.savefig(buf, format="svg", metadata={"Date": None})
        plt.close(fig)
        text = buf.getvalue()
        text = text[text.index("<svg"):]  # inline in HTML: no XML declaration or doctype

        def titled(m: re.Match) -> str:
            tip, series = self.tips[m.group(1)]
            return (f'<g id="{m.group(1)}" class="tip" data-series="{html.escape(series)}">'
                    f"<title>{html.escape(tip)}</title>")

        text = re.sub(r'<g id="(' + re.escape(self.chart_id) + r'-tip-\d+)">', titled, text)
        # Scale with the page: keep the viewBox, let CSS set the width.
        text = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1', text, count=1)
        return text.replace("<svg", f'<svg class="chart" id="{self.chart_id}" role="img"', 1)


def bars(chart_id: str, title: str, items: list[tuple[str, float, str, str]], xlabel: str,
         marks: list[tuple[float, str, str]] = ()) -> str:
    """Horizontal bars, one row per (name, value, colour, tip), top to bottom; `marks`: vertical
    lines (value, label, style) named in the legend."""
    tips = _Tips(chart_id)
    fig, ax = plt.subplots(figsize=(8, 0.9 + 0.32 * max(len(items), 2)))
    ys = range(len(items))
    bar = ax.barh(list(ys), [v for _, v, _, _ in items], color=[c for _, _, c, _ in items], height=0.7)
    for patch, (name, _, _, tip) in zip(bar.patches, items, strict=True):
        patch.set_gid(tips.name(tip, name))
    ax.set_yticks(list(ys), [n for n, _, _, _ in items])
    ax.invert_yaxis()
    for value, label, style in marks:
        ax.axvline(value, color="black", ls=style, lw=1, label=label)
    ax.set_xlabel(xlabel)
    return tips.svg(fig, ax, title, legend=bool(marks))


def lines(chart_id: str, title: str, labels: list[str], series: list[Series], ylabel: str,
          mark: tuple[float, str] | None = None, highlight: str | None = None) -> str:
    """One line per series over categorical x `labels`, each point with its tooltip; distinct
    colours (`bench.colours`); `highlight`: draw that series on top and the others pale."""
    tips = _Tips(chart_id)
    fig, ax = plt.subplots(figsize=(9, 4.6))
    palette = colours.distinct(len(series))
    where = {label: i for i, label in enumerate(labels)}
    for i, s in enumerate(series):
        faint = highlight is not None and s.name != highlight
        style = dict(color="#c8c8c8" if faint else palette[i], lw=1 if faint else 2, zorder=1 if faint else 3)
        pts = [p for p in s.points if p.y == p.y]  # NaN: not run there
        xs, ys = [where[p.x] for p in pts], [p.y for p in pts]
        ax.plot(xs, ys, ls=colours.line_style(i), label=s.name, **style)
        for x, p in zip(xs, pts, strict=True):
            ax.plot([x], [p.y], marker="o", ms=5 if not faint else 3, ls="none", gid=tips.name(p.tip, s.name),
                    **style)
    shown = range(0, len(labels), -(-len(labels) // LABELS_SHOWN))  # past 16 labels, every few: none collides
    ax.set_xticks(list(shown), [labels[i] for i in shown], rotation=40, ha="right")
    _ratios(ax, ylabel, mark)
    ax.grid(True, axis="y", color="#eeeeee")
    return tips.svg(fig, ax, title)


def scatter(chart_id: str, title: str, series: list[Series], xlabel: str, ylabel: str,
            mark: tuple[float, str] | None = None) -> str:
    """Points on log-log axes, one colour per series, each point with its tooltip."""
    tips = _Tips(chart_id)
    fig, ax = plt.subplots(figsize=(9, 4.6))
    palette = colours.distinct(len(series))
    for i, s in enumerate(series):
        for j, p in enumerate(s.points):
            ax.plot([p.x], [p.y], marker="o", ms=4, ls="none", color=palette[i], alpha=0.85,
                    label=s.name if j == 0 else None, gid=tips.name(p.tip, s.name))
    ax.set_xscale("log")
    _ratios(ax, ylabel, mark)
    ax.set_xlabel(xlabel)
    return tips.svg(fig, ax, title)
