"""A record file read as it lies or gzipped (experiments/ keeps its raw records gzipped), and written
whole or not at all: one reader and one writer for the records that bench, the tuner and the policy
keep. A write cut short (a full disk, ^C) must not leave a truncated record where `default` or a
report reads one, nor may two runs in one second write one file."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path


def read(path: Path):
    raw = Path(path).read_bytes()
    return json.loads(gzip.decompress(raw) if str(path).endswith(".gz") else raw)


def write(path: Path, text: str, *, keep_existing: bool = False) -> Path:
    """Write `text` to `path` through a temporary file beside it, renamed into place; the path written.
    keep_existing: where `path` is taken (a record of the same second), write NAME-2, NAME-3, … instead."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if keep_existing:
        path = _unused(path)
    fd, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(scratch, path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        if keep_existing:  # the empty file that claimed the name: no half-record left behind
            path.unlink(missing_ok=True)
        raise
    return path


def _unused(path: Path) -> Path:
    """`path`, or the first NAME-i.SUFFIX not taken, claimed (created empty) so that a run beside
    this one cannot take it too."""
    for i in range(1, 1000):
        candidate = path if i == 1 else path.with_name(f"{path.stem}-{i}{path.suffix}")
        try:
            os.close(os.open(candidate, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            return candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"{path}: a thousand records of one name")
