"""setuptools' build (pyproject.toml says the rest), plus the repository's files that gemmlab's
commands read as they run (issue 54).

A wheel has no checkout beside it, so `build_py` copies them into the package, each at its path in
the repository under gemmlab/records/: the committed records (results/, which git tracks only for
these names: .gitignore) and the experiment records the notes link to (the book copies them into
its pages). `gemmlab.committed` reads them there where no checkout is. The sdist carries them too,
so a wheel built from it has them. An editable install reads the checkout itself: nothing is copied.
"""

from __future__ import annotations

import re
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: The committed records, as .gitignore lets them into git.
RECORDS = ("results/h200-*.json", "results/h100-*.json")
#: Where the notes are: every Markdown file of the package.
NOTES = Path("src", "gemmlab")
#: A link of a note to an experiment's file, up to its fragment: [text](experiments/a/b.json.gz#x).
CITED = re.compile(r"\]\(<?(experiments/[^)#>\s]+)")
#: The copy's folder inside the package.
SHIPPED = Path("gemmlab", "records")


def shipped() -> list[str]:
    """The repository paths the wheel carries, relative to its root: the records, then each
    experiment file a note links to that is here."""
    records = sorted({p.relative_to(ROOT).as_posix() for pattern in RECORDS for p in ROOT.glob(pattern)})
    cited = {path for note in (ROOT / NOTES).rglob("*.md")
             for path in CITED.findall(note.read_text(encoding="utf-8"))}
    return records + sorted(p for p in cited if (ROOT / p).is_file())


class BuildWithRecords(build_py):
    """build_py, and the copies: into build_lib (so into the wheel), and into the sdist's file list."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        for path in shipped():
            target = Path(self.build_lib) / SHIPPED / path
            self.mkpath(str(target.parent))
            self.copy_file(str(ROOT / path), str(target))

    def get_source_files(self) -> list[str]:
        return [*super().get_source_files(), *shipped()]


setup(cmdclass={"build_py": BuildWithRecords})
