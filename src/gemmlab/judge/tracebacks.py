"""An exception from a user's solution, as the user needs to read it.

Only the frames of the user's own files (the solution and files beside it),
never the judge's or torch's; then the exception line, with no internal class
name: gemmlab's own errors (a file that defines no solve) give only their
message, a class of the user's module its bare name, anything else its name as
Python prints it (``torch.OutOfMemoryError``). Chained exceptions keep their
order and their "direct cause" lines.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable

from ..langs.solution import USER_MODULE


def _label(exc: BaseException) -> str:
    """The exception line, without the internal module names a user did not write."""
    cls = type(exc)
    try:
        value = str(exc)
    except BaseException:  # an exception whose __str__ itself raises
        value = ""
    module = getattr(cls, "__module__", "") or ""
    if module.startswith("gemmlab"):
        return value or cls.__qualname__
    if isinstance(exc, SyntaxError):  # Python's own lines: the file, the source, the caret
        return "".join(traceback.format_exception_only(cls, exc)).rstrip()
    name = cls.__qualname__ if module in ("builtins", "__main__") or module.startswith(USER_MODULE) \
        else f"{module}.{cls.__qualname__}"
    return f"{name}: {value}" if value else name


def _chain(exc: BaseException) -> list[tuple[BaseException, str]]:
    """The exceptions in the order Python prints them, each with the line that joins it to the one before."""
    out: list[tuple[BaseException, str]] = []
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if exc.__cause__ is not None:
            link, nxt = "The above exception was the direct cause of the following exception:", exc.__cause__
        elif exc.__context__ is not None and not exc.__suppress_context__:
            link, nxt = "During handling of the above exception, another exception occurred:", exc.__context__
        else:
            link, nxt = "", None
        out.append((exc, link))
        exc = nxt
    return list(reversed(out))


def user_frames(solution: str | os.PathLike) -> Callable[[str], bool]:
    """Whether a frame's file is the user's: the solution, or a file in its folder."""
    folder = os.path.dirname(os.path.abspath(solution))
    # "<frozen importlib._bootstrap>" and "<string>" name no file: made absolute, they would land in
    # the current folder, which is often the solution's.
    return lambda filename: not filename.startswith("<") and os.path.dirname(os.path.abspath(filename)) == folder


def format_user_error(exc: BaseException, is_users: Callable[[str], bool], limit: int) -> str:
    """The exception's text for the user, its tail at most `limit` characters long."""
    try:
        parts = []
        for e, link in _chain(exc):
            frames = [f for f in traceback.extract_tb(e.__traceback__) if is_users(f.filename)]
            text = ""
            if frames:
                text = "Traceback (the solution's frames):\n" + "".join(traceback.format_list(frames))
            parts.append((f"{link}\n\n" if link else "") + text + _label(e))
        text = "\n".join(parts).strip()
    except BaseException:
        text = type(exc).__name__
    return text[-limit:]


def last_line(text: str) -> str:
    """The exception line of a `format_user_error` text (what a table has room for)."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else text
