"""An implementation's sources as the book shows them: read from the package, highlighted by
Pygments, and diffed against the implementation it is read after."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from ..registry import PACKAGE_DIR, Implementation
from .facts import main_launch


def read(source: str) -> str:
    return (PACKAGE_DIR / source).read_text()


def lexer_name(source: str) -> str:
    """Pygments' name of the source's language: CUDA for .cu and .cuh, else by the file name."""
    suffix = Path(source).suffix
    return {".cu": "cuda", ".cuh": "cuda", ".py": "python", ".md": "markdown"}.get(suffix, "text")


#: A quoted include: a header of the kernel folder, which NVRTC finds beside the source.
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def with_headers(paths: list[str]) -> list[str]:
    """`paths` with every header each includes (and those include), each after the first file
    that includes it, once: the whole of what the compiler reads."""
    out: list[str] = []

    def visit(path: str) -> None:
        if path in out:
            return
        out.append(path)
        if Path(path).suffix in (".cu", ".cuh"):
            for name in INCLUDE.findall(read(path)):
                header = str(Path(path).parent / name)
                if (PACKAGE_DIR / header).is_file():
                    visit(header)

    for path in paths:
        visit(path)
    return out


def primary(impl: Implementation) -> str | None:
    """The source the implementation is written in (the others are headers and pre-passes)."""
    return impl.sources[0] if impl.sources else None


def unified(a: Implementation, b: Implementation) -> str:
    """The diff from a's source to b's (their first sources), as `diff -u` writes it; "" where both
    are built from one unchanged source."""
    pa, pb = primary(a), primary(b)
    if pa is None or pb is None:
        return ""
    old, new = read(pa).splitlines(keepends=True), read(pb).splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, fromfile=f"{a.name}: {pa}", tofile=f"{b.name}: {pb}"))


def other_files(a: Implementation, b: Implementation) -> tuple[list[str], list[str]]:
    """The sources b adds to a's, and those it drops (its first source apart)."""
    sa, sb = set(a.sources[1:]), set(b.sources[1:])
    return sorted(sb - sa - {primary(a)}), sorted(sa - sb - {primary(b)})


def launch_changes(a: Implementation, b: Implementation) -> list[str]:
    """How b's main launch (`facts.main_launch`) is built differently from a's, macro by macro ("BK 16 → 8"), where both
    compile one kernel entry."""
    if not a.launches or not b.launches:
        return []
    la, lb = main_launch(a), main_launch(b)
    out = []
    if la.entry != lb.entry:
        out.append(f"kernel {la.entry} → {lb.entry}")
    for key in dict.fromkeys([*la.defines, *lb.defines]):
        va, vb = la.defines.get(key, "unset"), lb.defines.get(key, "unset")
        if va != vb:
            out.append(f"{key} {va} → {vb}")
    if la.tile != lb.tile:
        out.append(f"tile {'×'.join(map(str, la.tile))} → {'×'.join(map(str, lb.tile))}")
    if la.threads != lb.threads:
        out.append(f"threads {la.threads} → {lb.threads}")
    if len(a.launches) != len(b.launches):
        out.append(f"launches {len(a.launches)} → {len(b.launches)}")
    return out


def anchor(source: str) -> str:
    """The prefix of the ids of a listed source's lines: line 13 of kernels/cuda/naive.cu is
    `src-naive-cu-13` (a page lists the sources of one implementation, whose names differ)."""
    return "src-" + re.sub(r"[^A-Za-z0-9]+", "-", Path(source).name)


def html(text: str, language: str, line_numbers: bool = True, anchors: str = "") -> str:
    """Highlighted HTML (Pygments' classes; `css` styles them); with `anchors`, each line carries
    the id `anchors`-N, for links to it."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name

    formatter = HtmlFormatter(cssclass="highlight", linenos="table" if line_numbers else False, wrapcode=True,
                              lineanchors=anchors)
    return highlight(text, get_lexer_by_name(language), formatter)


def css() -> str:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(style="default").get_style_defs(".highlight")
