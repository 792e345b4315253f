"""Colours the plots share (`bench.report`'s PNGs, the book's SVGs): one per precision class, and
a set for the lines of a sweep that stay apart however many there are."""

from __future__ import annotations

#: One colour per precision class, in every plot that shows more than one class.
PRECISION = {"fp32": "#1f77b4", "tf32": "#d62728", "fp32x3": "#2ca02c"}

# Matplotlib's tab20, its ten strong colours first, then their ten light partners.
_STRONG = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
_LIGHT = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7",
          "#dbdb8d", "#9edae5")
#: Line styles that go with the colours past the first ten, so that a light colour is also drawn
#: differently from its strong partner.
STYLES = ("-", "--", ":", "-.")


def _hsv(i: int, n: int) -> str:
    import colorsys

    hue = (i * 0.618033988749895) % 1.0  # golden-ratio steps: neighbours far apart on the wheel
    value = (0.55, 0.85)[i % 2]
    r, g, b = colorsys.hsv_to_rgb(hue, 0.75, value)
    return f"#{round(255 * r):02x}{round(255 * g):02x}{round(255 * b):02x}"


def distinct(n: int) -> list[str]:
    """n colours, no two alike: the ten strong ones, then their light partners, then spread hues."""
    base = [*_STRONG, *_LIGHT]
    return [base[i] if i < len(base) else _hsv(i, n) for i in range(n)]


def line_style(i: int) -> str:
    """The line style of the i-th line: solid for the first ten, then one per further ten."""
    return STYLES[i // len(_STRONG) % len(STYLES)]
