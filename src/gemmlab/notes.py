"""A rung's note in two parts: the lesson a learner reads first (the idea, who owns what, the data
path, what to notice) and the lab notes after it (predictions, measurements, what was tried and
dropped), which the book folds and `gemmlab explain` shows only with --notes."""

from __future__ import annotations

import re

#: The leads of the paragraphs or headings that open a note's lab notes: from the first of them on,
#: the note is history, not lesson.
LAB_LEADS = ("Prediction", "Predicted", "Measured", "What did not pay", "Tried", "Version",
             "Where it still loses", "Where the time goes now", "What the knobs showed",
             "Third hypothesis", "Lab notes", "History")
_OPENS = re.compile(r"(\*\*|#+\s+)(" + "|".join(map(re.escape, LAB_LEADS)) + r")\b")


def split(text: str) -> tuple[str, str]:
    """(lesson, lab notes) of a note; the lab notes are empty where no paragraph opens them."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if _OPENS.match(line) and (i == 0 or not lines[i - 1].strip()):
            return "".join(lines[:i]).rstrip() + "\n", "".join(lines[i:])
    return text, ""
