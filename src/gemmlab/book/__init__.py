"""The ladder as a book: a static site (`gemmlab book`) and the terminal's `show`, `diff` and `tour`.

- `chapters`: the reading order (chapters and steps), read in one place;
- `facts`: what the book says about an implementation, each figure taken from the registry, a
  committed record or `gemmlab inspect`, never typed;
- `sources`: sources, their highlighting, and the diff from the rung before;
- `charts`: the figures as SVG (matplotlib), with each point's figures on hover;
- `diagram`: a launch's tile and data path as SVG, drawn from its geometry;
- `site`: the pages, rendered from Jinja2 templates (`templates/`).
"""
