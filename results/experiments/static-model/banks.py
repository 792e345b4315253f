"""A register-bank model of FFMA operand reads, from SASS text (cuobjdump -sass).

Each FFMA reads up to three source registers. A source is served by the operand reuse cache if
the instruction just before it had the same register in the same slot marked `.reuse`; the others
are read from the register file, whose banks are the register number modulo `banks`. Two reads
from one bank in one instruction cost an extra cycle: `conflicts` counts those extra reads over
every FFMA of the listing. On the H200, at the performance shape, the 2-bank count per FFMA of
the tune record's candidates orders their measured times within each BK (README.md).
"""
import collections
import re

FFMA = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-9T]\s+)?FFMA\S*\s+R\d+, (-?R\d+|RZ)(\.reuse)?, "
                  r"(-?[^,]+?)(\.reuse)?, (-?R\d+|RZ)(\.reuse)?\s*;")
ANY = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+")


def _reg(text: str) -> int | None:
    text = text.lstrip("-")
    return int(text[1:]) if re.fullmatch(r"R\d+", text) else None


def conflicts(listing: str, banks: int = 2) -> tuple[int, int]:
    """(FFMAs, extra register-file reads from bank conflicts) over the whole listing."""
    prev = None  # the previous instruction's (register, reuse) per source slot, if an FFMA
    total = ffma = 0
    for line in listing.splitlines():
        if not ANY.match(line):
            continue
        m = FFMA.match(line)
        if not m:
            prev = None
            continue
        ffma += 1
        slots = [(_reg(m.group(1)), bool(m.group(2))), (_reg(m.group(3)), bool(m.group(4))),
                 (_reg(m.group(5)), bool(m.group(6)))]
        reads = {reg for n, (reg, _) in enumerate(slots)
                 if reg is not None and not (prev is not None and prev[n] == (reg, True))}
        total += sum(c - 1 for c in collections.Counter(r % banks for r in reads).values())
        prev = slots
    return ffma, total
