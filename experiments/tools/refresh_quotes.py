"""Bring the figures the docs quote from a record up to a fresh copy of that record.

A figure is quoted as a link to its record (tests/test_doc_figures.py says how). When a record in
`results/` is replaced by a fresh run, the quotes fall into two kinds:
- a finding of the experiment index (`experiments/`) reported what the old run measured, so it keeps
  its figure and its link moves to the old record, archived (gzipped) under ARCHIVE;
- a shipped doc (README, a kernel's notes) says where things stand, so its figure becomes the fresh
  record's value, to the digits it showed. Its prose is not rewritten: read the diff.

Usage: python experiments/tools/refresh_quotes.py RECORD ARCHIVE [--old REV] [--write]
  RECORD   the record's path from the repository's root, already replaced by the fresh one
  ARCHIVE  where the old one goes, e.g. experiments/h200-record/sweep-2026-11-30.json.gz
  --old    the git revision that holds the old record (default HEAD)
Without --write it prints what it would change, and a quote that the fresh record cannot answer.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from test_doc_figures import DOCS, lookup, matches  # noqa: E402  (one reader of the quote syntax)


def shown(value: str, actual: float) -> str:
    """`actual` written as `value` was: the same digits after the point, thousands grouped alike."""
    plain = value.replace(",", "")
    digits = len(plain.split(".")[1]) if "." in plain else 0
    return f"{actual:,.{digits}f}" if "," in value else f"{actual:.{digits}f}"


def refresh(record: str, archive: str, old_rev: str, write: bool) -> int:
    old = json.loads(subprocess.run(["git", "show", f"{old_rev}:{record}"], cwd=ROOT, check=True,
                                    capture_output=True, text=True).stdout)
    new = json.loads((ROOT / record).read_text())
    quote = re.compile(r"\[(-?[0-9][0-9.,]*)\]\(" + re.escape(record) + r"#([^)\s]+)\)")
    unanswered = 0
    for doc in DOCS:
        text = doc.read_text()
        finding = doc.is_relative_to(ROOT / "experiments")

        def one(m: re.Match, doc=doc, finding=finding) -> str:
            nonlocal unanswered
            value, path = m.groups()
            if finding:
                if not matches(value, lookup(old, path)):
                    print(f"{doc.relative_to(ROOT)}: {value} is not the old record's {path} either")
                return f"[{value}]({archive}#{path})"
            try:
                fresh = shown(value, lookup(new, path))
            except (KeyError, IndexError) as e:
                unanswered += 1
                print(f"{doc.relative_to(ROOT)}: the fresh record has no {path} ({e}); left as it was")
                return m.group(0)
            if fresh != value:
                print(f"{doc.relative_to(ROOT)}: {path}: {value} -> {fresh}")
            return f"[{fresh}]({record}#{path})"

        changed = quote.sub(one, text)
        if write and changed != text:
            doc.write_text(changed)
    if write:
        (ROOT / archive).parent.mkdir(parents=True, exist_ok=True)
        (ROOT / archive).write_bytes(gzip.compress(json.dumps(old, separators=(",", ":")).encode(), mtime=0))
    return 1 if unanswered else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("record")
    p.add_argument("archive")
    p.add_argument("--old", default="HEAD")
    p.add_argument("--write", action="store_true")
    a = p.parse_args()
    if not a.archive.endswith(".json.gz") or not a.archive.startswith("experiments/"):
        p.error("ARCHIVE is a .json.gz under experiments/")
    return refresh(a.record, a.archive, a.old, a.write)


if __name__ == "__main__":
    sys.exit(main())
