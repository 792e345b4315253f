"""A JSON file read as it lies or gzipped (experiments/ keeps its raw records gzipped): one reader
for the records that bench, the tuner and the policy load."""

from __future__ import annotations

import gzip
import json
from pathlib import Path


def read(path: Path):
    raw = Path(path).read_bytes()
    return json.loads(gzip.decompress(raw) if str(path).endswith(".gz") else raw)
