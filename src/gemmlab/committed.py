"""The repository's files that commands read as they run: the committed records (`results/h200-*.json`,
which the book, `diff`, `report` and `submit` show figures from) and the experiment records the notes
link to (the book copies them into its pages). The one place that says where they lie.

From a checkout (an editable install, or `src/` on PYTHONPATH) they are the checkout's own files. A
wheel has no checkout beside it, so its build copies them into the package (setup.py), each at its
path in the repository under `gemmlab/records/`, and they are read there.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

#: The folder of the gemmlab package.
PACKAGE_DIR = Path(__file__).resolve().parent
#: Where a wheel carries its copy: records/results/h200-latest.json, records/experiments/….
SHIPPED = PACKAGE_DIR / "records"
#: The package's own files, as the notes name them from the repository's root.
PACKAGE_IN_REPOSITORY = ("src", "gemmlab")


def checkout() -> Path | None:
    """The repository gemmlab runs from (src/gemmlab beside a pyproject.toml), else None."""
    root = PACKAGE_DIR.parent.parent
    if PACKAGE_DIR.parent.name == "src" and (root / "pyproject.toml").is_file():
        return root
    return None


def root() -> Path:
    """Where committed files are looked up by their path in the repository: the checkout gemmlab runs
    from, else the copy shipped inside the installed package."""
    return checkout() or SHIPPED


def find(path: str | Path) -> Path | None:
    """A committed file by its path in the repository (`results/h200-sweep.json`,
    `experiments/…/x.json.gz`, `src/gemmlab/tuned/…`), or None where it is not here. A path that
    leaves the repository (absolute, or through ..) is never looked up."""
    parts = PurePosixPath(str(path).replace("\\", "/")).parts
    if not parts or parts[0] == "/" or ".." in parts:
        return None
    if parts[:2] == PACKAGE_IN_REPOSITORY:  # the package's files are where the package is
        target = PACKAGE_DIR.joinpath(*parts[2:])
    else:
        target = root().joinpath(*parts)
    return target if target.is_file() else None


def records(pattern: str = "*.json") -> list[Path]:
    """The committed records in results/ whose names match `pattern`, in order of name."""
    return sorted((root() / "results").glob(pattern))


def is_shipped(path: Path) -> bool:
    """Whether `path` lies in the copy shipped inside the package (which nothing should write beside)."""
    return path.resolve().is_relative_to(SHIPPED)
