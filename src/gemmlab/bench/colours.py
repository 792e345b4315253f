"""Colours the plots share (`bench.report`'s PNGs, the book's SVGs): one per precision class, and
a set for the lines of a sweep that stay apart however many there are."""

from __future__ import annotations

from functools import cache

#: One colour per precision class, in every plot that shows more than one class.
PRECISION = {"fp32": "#1f77b4", "tf32": "#d62728", "fp32x3": "#2ca02c"}

# Matplotlib's tab10, then what `_farthest` adds from its other qualitative sets.
_STRONG = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
_POOL_MAPS = ("tab20", "tab20b", "tab20c", "Dark2", "Set1", "Set2")


@cache
def _farthest(count: int) -> tuple[str, ...]:
    """tab10, then, one at a time, the colour of matplotlib's qualitative sets farthest (in RGB) from
    every colour already taken: each added colour is as unlike the others as the sets allow."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex, to_rgb

    pool = list(dict.fromkeys(to_hex(c) for name in _POOL_MAPS for c in colormaps[name].colors))
    taken = list(_STRONG)

    def gap(c: str) -> float:
        return min(sum((x - y) ** 2 for x, y in zip(to_rgb(c), to_rgb(t), strict=True)) for t in taken)

    while len(taken) < count and len(taken) < len(pool):
        taken.append(max((c for c in pool if c not in taken), key=gap))
    return tuple(taken)


#: Line styles that go with the colours past the first ten, so that a line is told apart by its
#: style too.
STYLES = ("-", "--", ":", "-.")


def _hsv(i: int) -> str:
    import colorsys

    hue = (i * 0.618033988749895) % 1.0  # golden-ratio steps: neighbours far apart on the wheel
    value = (0.55, 0.85)[i % 2]
    r, g, b = colorsys.hsv_to_rgb(hue, 0.75, value)
    return f"#{round(255 * r):02x}{round(255 * g):02x}{round(255 * b):02x}"


def distinct(n: int) -> list[str]:
    """n colours, no two alike: tab10, then the farthest of matplotlib's other qualitative colours,
    then hues spread round the wheel."""
    base = list(_farthest(n)) if n > len(_STRONG) else list(_STRONG)
    return [base[i] if i < len(base) else _hsv(i) for i in range(n)]


def line_style(i: int) -> str:
    """The line style of the i-th line: solid for the first ten, then one per further ten."""
    return STYLES[i // len(_STRONG) % len(STYLES)]
