"""SASS of a cubin (cuobjdump + nvdisasm) and the instruction mix that matters.

The machine code answers questions the source cannot: are the loads really
16 bytes wide (``LDG.E.128``, ``LDS.128``), does the copy engine run
(``LDGSTS``), are the tensor cores used and through which path (``HMMA`` for
mma.sync/WMMA, ``HGMMA`` for wgmma), does TMA load the tiles (``UTMALDG``),
do warpgroups trade registers (``USETMAXREG``), did an array go to local
memory (``LDL``/``STL``). And, for a kernel bound by instruction issue, two
static figures of its schedule (`schedule`): register-bank conflicts of the
FFMAs and the stall cycles ptxas wrote into the main loop.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections import Counter
from functools import lru_cache
from pathlib import Path

from .tools import find

_FUNCTION = re.compile(r"^\s*Function : (\S+)")
_INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_.]*)")


def _dump(cubin: bytes) -> str:
    """cuobjdump's SASS listing of the cubin."""
    return _disassembled(cubin, find("cuobjdump"), find("nvdisasm"))  # the tools asked for each time


@lru_cache(maxsize=128)  # rungs share kernels: the book and `inspect` ask for one listing many times
def _disassembled(cubin: bytes, cuobjdump: str, nvdisasm: str) -> str:
    env = dict(os.environ)
    env["PATH"] = f"{Path(nvdisasm).parent}{os.pathsep}{env.get('PATH', '')}"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        proc = subprocess.run(
            [cuobjdump, "-sass", str(path)], capture_output=True, text=True, errors="replace", env=env, check=False
        )
    if proc.returncode != 0:
        raise RuntimeError(f"cuobjdump failed: {proc.stderr.strip()}")
    return proc.stdout


class Listing(str):
    """cuobjdump's SASS listing of one cubin, dumped once (`listing`) and read by every function
    below in place of the cubin: a report that asks several questions of one kernel runs
    cuobjdump once."""


def listing(cubin: bytes) -> Listing:
    return Listing(_dump(cubin))


def _by_function(cubin: bytes | Listing, pattern: re.Pattern) -> dict[str, list]:
    """Each function's matches of `pattern` (its first group, or all groups), in order."""
    out: dict[str, list] = {}
    current: list | None = None
    text = cubin if isinstance(cubin, Listing) else _dump(cubin)
    for line in text.splitlines():
        if m := _FUNCTION.match(line):
            current = out.setdefault(m.group(1), [])
        elif current is not None and (m := pattern.match(line)):
            current.append(m.group(1) if pattern.groups == 1 else m.groups())
    return out


def disassemble(cubin: bytes | Listing) -> dict[str, list[str]]:
    """Opcodes (with modifiers) of every function in the cubin, in order."""
    return _by_function(cubin, _INSTR)


_SETMAXREG = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+USETMAXREG\.(DEALLOC|TRY_ALLOC)\S*\s+(?:UP\d+,\s*)?(0x[0-9a-f]+)")


def register_claims(cubin: bytes | Listing) -> dict[str, list[tuple[str, int]]]:
    """Each function's setmaxnreg figures, in order: ("DEALLOC" | "TRY_ALLOC", registers).
    A warp-specialised kernel's producers give registers back (DEALLOC) and its consumers
    claim them (TRY_ALLOC); functions without setmaxnreg are absent."""
    return {f: [(kind, int(n, 16)) for kind, n in claims]
            for f, claims in _by_function(cubin, _SETMAXREG).items()}


#: The categories `inspect` reports, each a test on one opcode.
MIX = {
    "FFMA": lambda op: op.startswith("FFMA"),
    "LDS": lambda op: op.startswith("LDS") and not op.startswith("LDSM"),
    "LDS.128": lambda op: op.startswith("LDS") and ".128" in op,
    "LDG": lambda op: op.startswith("LDG.") or op == "LDG",
    "LDG.128": lambda op: op.startswith("LDG.") and ".128" in op,
    "STG.128": lambda op: op.startswith("STG") and ".128" in op,
    "LDGSTS": lambda op: op.startswith("LDGSTS"),
    "HMMA": lambda op: op.startswith("HMMA"),
    "HGMMA": lambda op: op.startswith("HGMMA"),
    "UTMALDG": lambda op: op.startswith("UTMALDG"),
    "SETMAXREG": lambda op: op.startswith("USETMAXREG"),
    "BAR": lambda op: op.startswith("BAR"),
    "LDL/STL": lambda op: op.startswith(("LDL", "STL")),
}


def instruction_mix(opcodes: list[str]) -> dict[str, int]:
    counts = Counter(opcodes)
    return {name: sum(n for op, n in counts.items() if test(op)) for name, test in MIX.items()}


# ---- the schedule ptxas wrote: static figures (experiments/static-model) ----------------

# One instruction of cuobjdump's listing: its address, opcode and operands on the first line,
# the upper 64 bits of its 128-bit word on the next. Since Volta, bits 41-44 of those are the
# stall count: the cycles the warp waits before its next instruction issues.
_WORD = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")
_HIGH = re.compile(r"^\s*/\* (0x[0-9a-f]{16}) \*/")
_BRANCH_TO = re.compile(r"0x([0-9a-f]+)")
_FFMA_SOURCES = re.compile(r"^\s*R\d+, (-?\|?R\d+\|?|RZ)(\.reuse)?, (-?[^,]+?)(\.reuse)?, (-?R\d+|RZ)(\.reuse)?\s*$")


def _instructions(listing: list[str]) -> list[tuple[int, str, str, int]]:
    """(address, opcode, operands, stall cycles) of each instruction of one function's lines."""
    out = []
    for line, after in zip(listing, listing[1:], strict=False):  # each line and the one after it
        if (word := _WORD.match(line)) and (high := _HIGH.match(after)):
            out.append((int(word.group(1), 16), word.group(2), word.group(3), int(high.group(1), 16) >> 41 & 0xF))
    return out


def _register(operand: str) -> int | None:
    name = operand.strip("-|")
    return int(name[1:]) if re.fullmatch(r"R\d+", name) else None


def bank_conflicts(instructions: list[tuple[int, str, str, int]], banks: int = 2) -> tuple[int, int]:
    """(FFMAs, conflicting register reads among them). A source register is served by the
    operand reuse cache if the instruction just before had it in the same slot marked
    ``.reuse``; the other sources are read from `banks` register banks (number mod banks), and
    each read beyond the first from one bank is a conflict: an extra cycle before dispatch. On
    the H200 this count ranks bigtile's builds by speed within one BK (bigtile.md)."""
    ffma = conflicts = 0
    previous = None  # the previous instruction's (register, reuse) per source slot, if an FFMA
    for _, op, operands, _ in instructions:
        m = _FFMA_SOURCES.match(operands) if op.startswith("FFMA") else None
        if not m:
            previous = None
            continue
        ffma += 1
        slots = [(_register(m.group(g)), bool(m.group(g + 1))) for g in (1, 3, 5)]
        reads = {reg for n, (reg, _) in enumerate(slots)
                 if reg is not None and not (previous and previous[n] == (reg, True))}
        conflicts += sum(c - 1 for c in Counter(r % banks for r in reads).values())
        previous = slots
    return ffma, conflicts


def main_loop(instructions: list[tuple[int, str, str, int]]) -> list[tuple[int, str, str, int]]:
    """The instructions of the longest backward branch's body (empty without a loop)."""
    spans = [(address - int(t.group(1), 16), int(t.group(1), 16), address)
             for address, op, operands, _ in instructions
             if op == "BRA" and (t := _BRANCH_TO.search(operands)) and int(t.group(1), 16) < address]
    if not spans:
        return []
    _, start, end = max(spans)
    return [i for i in instructions if start <= i[0] <= end]


def schedule(cubin: bytes | Listing) -> dict[str, dict]:
    """Per function: bank conflicts per FFMA (None without FFMAs), and its main loop's
    instructions, stall cycles (the sum of their stall counts: one warp's issue time for one
    pass when nothing else waits) and shared loads followed by 4 or more stall cycles."""
    out = {}
    for function, lines in _by_function(cubin, re.compile(r"^(.*)$")).items():
        instructions = _instructions(lines)
        ffma, conflicts = bank_conflicts(instructions)
        loop = main_loop(instructions)
        out[function] = {
            "FFMA bank conflicts": round(conflicts / ffma, 4) if ffma else None,
            "loop instructions": len(loop) or None,
            "loop stall cycles": sum(i[3] for i in loop) or None,
            "loop LDS stalled 4+": sum(i[1].startswith("LDS") and i[3] >= 4 for i in loop) if loop else None,
        }
    return out
