"""SASS of a cubin (cuobjdump + nvdisasm) and the instruction mix that matters.

The machine code answers questions the source cannot: are the loads really
16 bytes wide (``LDG.E.128``, ``LDS.128``), does the copy engine run
(``LDGSTS``), are the tensor cores used and through which path (``HMMA`` for
mma.sync/WMMA, ``HGMMA`` for wgmma), does TMA load the tiles (``UTMALDG``),
do warpgroups trade registers (``USETMAXREG``), did an array go to local
memory (``LDL``/``STL``).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from .tools import find

_FUNCTION = re.compile(r"^\s*Function : (\S+)")
_INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_.]*)")


def _dump(cubin: bytes) -> str:
    """cuobjdump's SASS listing of the cubin."""
    cuobjdump = find("cuobjdump")
    env = dict(os.environ)
    env["PATH"] = f"{Path(find('nvdisasm')).parent}{os.pathsep}{env.get('PATH', '')}"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        proc = subprocess.run(
            [cuobjdump, "-sass", str(path)], capture_output=True, text=True, env=env, check=False
        )
    if proc.returncode != 0:
        raise RuntimeError(f"cuobjdump failed: {proc.stderr.strip()}")
    return proc.stdout


def _by_function(cubin: bytes, pattern: re.Pattern) -> dict[str, list]:
    """Each function's matches of `pattern` (its first group, or all groups), in order."""
    out: dict[str, list] = {}
    current: list | None = None
    for line in _dump(cubin).splitlines():
        if m := _FUNCTION.match(line):
            current = out.setdefault(m.group(1), [])
        elif current is not None and (m := pattern.match(line)):
            current.append(m.group(1) if pattern.groups == 1 else m.groups())
    return out


def disassemble(cubin: bytes) -> dict[str, list[str]]:
    """Opcodes (with modifiers) of every function in the cubin, in order."""
    return _by_function(cubin, _INSTR)


_SETMAXREG = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+USETMAXREG\.(DEALLOC|TRY_ALLOC)\S*\s+(?:UP\d+,\s*)?(0x[0-9a-f]+)")


def register_claims(cubin: bytes) -> dict[str, list[tuple[str, int]]]:
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
