"""Digest every shipped kernel build for sm_90a: its cubin and its SASS (a CPU aid).

A change meant to leave the kernels alone (a rename, a comment, an arm taken out of a source)
is checked by digesting before and after: `python experiments/tools/cubins.py > before.json`,
the change, then `python experiments/tools/cubins.py --against before.json` (exit status 1 and
the builds that differ, cubin or SASS). The builds are every launch of every CUDA rung of the
registry (`default`'s by the installed record) and the split twins no rung runs
(experiments/tools/twins.py), each compiled as its rung compiles it (NVRTC, the disk cache).
The SASS is cuobjdump's, so a cubin that differs only outside the code (a name, a note) shows.

Usage (repository root): python experiments/tools/cubins.py [--against FILE.json]
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ARCH = "sm_90a"


def builds() -> dict[str, object]:
    """label → kernel, each distinct build once; keyed by the kernel's label (entry and macros), not
    its file's name, so that digests taken before a file's rename compare with those after."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from twins import TWINS

    from gemmlab import registry

    launches = [x for i in registry.IMPLEMENTATIONS if i.family == "cuda" for x in i.launches]
    launches += [x for _, make, _ in TWINS.values() for x in make()]
    return {x.kernel.label: x.kernel for x in launches}


def sass(cubin: bytes) -> str:
    from gemmlab.cuda.tools import find

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        text = subprocess.run([find("cuobjdump"), "-sass", f.name], capture_output=True, text=True, check=True).stdout
    return "\n".join(line for line in text.splitlines() if f.name not in line)


def digests() -> dict[str, dict[str, str]]:
    out = {}
    for label, kernel in sorted(builds().items()):
        cubin = kernel.compile(ARCH).cubin
        out[label] = {"cubin": hashlib.sha256(cubin).hexdigest(),
                      "sass": hashlib.sha256(sass(cubin).encode()).hexdigest()}
    return out


def main(argv: list[str]) -> int:
    if argv and (argv[0] != "--against" or len(argv) != 2):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    now = digests()
    if not argv:
        json.dump(now, sys.stdout, indent=1, sort_keys=True)
        print()
        return 0
    before = json.loads(Path(argv[1]).read_text())
    differ = {k: [f for f in ("cubin", "sass") if before.get(k, {}).get(f) != v[f]] for k, v in now.items()}
    differ = {k: v for k, v in differ.items() if v}
    gone = sorted(set(before) - set(now))
    for k, fields in sorted(differ.items()):
        print(f"differs ({', '.join(fields)}): {k}")
    for k in gone:
        print(f"no longer built: {k}")
    print(f"{len(now)} builds, {len(differ)} differ, {len(gone)} gone")
    return 1 if differ or gone else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
