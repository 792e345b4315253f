"""What LeetGPU takes, checked before a file is pasted there (`gemmlab submit`): one file in a
language its editor offers, the `solve` its harness calls, and what the file's precision means
for LeetGPU's check (`torch.allclose` against its own `torch.matmul`, atol = rtol = 1e-4, on its
functional tests: challenges/easy/2_matrix_multiplication/challenge.py of AlphaGPU/leetgpu-challenges)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

CHALLENGE_URL = "https://leetgpu.com/challenges/matrix-multiplication"
#: LeetGPU's names for the languages gemmlab judges.
LANGUAGES = {"cuda": "CUDA", "triton": "Triton", "torch": "PyTorch", "jax": "JAX", "cute": "CuTe DSL",
             "mojo": "Mojo", "tilelang": "TileLang"}
_CUDA_SOLVE = re.compile(r'extern\s+"C"\s+void\s+solve\s*\(\s*const\s+float\s*\*\s*\w+\s*,\s*const\s+float\s*\*'
                         r'\s*\w+\s*,\s*float\s*\*\s*\w+\s*,\s*int\s+\w+\s*,\s*int\s+\w+\s*,\s*int\s+\w+\s*\)')
_MOJO_SOLVE = re.compile(r"^(def|fn)\s+solve\s*\(", re.M)
_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
#: The first line of every file `gemmlab export` writes (`document`), read back by `declared`.
FIRST_LINE = "{comment} {filename}: gemmlab step {step} `{name}` ({precision}), exported as one LeetGPU solution."
_FIRST_LINE = re.compile(r"^(?://|#) \S+: gemmlab step \S+ `([^`]+)` \(([a-z0-9]+)\), exported as one LeetGPU solution\.$")


@dataclass
class Check:
    what: str
    ok: bool
    detail: str


def declared(path: Path) -> tuple[str, str] | None:
    """(rung, precision) that an exported file's first line names; None for a file gemmlab did not
    write, or whose first line was edited."""
    with path.open(encoding="utf-8", errors="replace") as f:
        m = _FIRST_LINE.match(f.readline().rstrip("\r\n"))
    return (m[1], m[2]) if m else None


def _python_solve(text: str, framework: str) -> Check:
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        return Check("solve", False, f"the file does not parse: {exc.msg} (line {exc.lineno})")
    wanted = 5 if framework == "jax" else 6  # JAX's solve returns C: solve(A, B, M, N, K)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "solve":
            given = len(node.args.posonlyargs) + len(node.args.args)
            if given == wanted:
                return Check("solve", True, f"def solve with {wanted} arguments, as LeetGPU's harness calls it")
            return Check("solve", False, f"solve takes {given} arguments; LeetGPU passes {wanted}")
    return Check("solve", False, "no top-level def solve(...): LeetGPU's harness calls solve")


#: Packages a LeetGPU Python solution imports: a file named like one (torch.py) would be imported in
#: its place, by itself and by every solution beside it.
SOLUTION_PACKAGES = ("torch", "triton", "jax", "cutlass", "tilelang", "numpy")


def shadows(path: Path) -> str | None:
    """The package a Python file of this name would stand in for, if any."""
    return path.stem if path.suffix == ".py" and path.stem in SOLUTION_PACKAGES else None


def _one_file(path: Path, text: str, framework: str) -> Check:
    if shadows(path):
        return Check("one file", False, f"its name shadows the {path.stem} package: `import {path.stem}` "
                                        f"would import the file itself; rename it ({path.stem}_solution.py)")
    if framework == "cuda":
        local = [f for f in _LOCAL_INCLUDE.findall(text) if (path.parent / f).exists()]
        if local:
            return Check("one file", False, f"it includes files beside it ({', '.join(local)}): LeetGPU "
                                            "compiles the one file it is given")
    elif path.suffix == ".py":
        tree = ast.parse(text)
        relative = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
        beside = sorted({a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                         for a in n.names if (path.parent / f"{a.name.split('.')[0]}.py").exists()})
        if relative or beside:
            return Check("one file", False, "it imports modules beside it (" + ", ".join(beside or ["relative"])
                         + "): LeetGPU runs the one file it is given")
    return Check("one file", True, "needs nothing beside it")


def _reads_as(path: Path, text: str) -> str | None:
    """The other language a file's text is written in, where its suffix names one and its text another:
    a .cu that parses as Python with a def or an import, a .py whose text holds a CUDA solve."""
    if path.suffix == ".cu":
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return None
        python = any(isinstance(n, (ast.FunctionDef, ast.Import, ast.ImportFrom)) for n in tree.body)
        return "Python" if python else None
    if path.suffix == ".py" and _CUDA_SOLVE.search(text):
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            return "CUDA C++"
    return None


def checks(path: Path, framework: str) -> list[Check]:
    """What LeetGPU's editor and harness need of the file, in the order they would fail."""
    text = path.read_text(errors="replace")
    language = LANGUAGES.get(framework)
    other = _reads_as(path, text)
    if other:
        return [Check("language", False, f"a {path.suffix} file whose text is {other}: LeetGPU's "
                                         f"{language or framework} editor would not run it; name it for what it holds")]
    out = [Check("language", language is not None,
                 f"{language}, one of LeetGPU's languages" if language else f"{framework} is not a LeetGPU language")]
    if framework == "cuda":
        found = _CUDA_SOLVE.search(text) is not None
        out.append(Check("solve", found, 'extern "C" void solve(const float* A, const float* B, float* C, '
                         "int M, int N, int K)" + ("" if found else " is missing: LeetGPU's harness calls it")))
    elif framework == "mojo":
        found = _MOJO_SOLVE.search(text) is not None
        out.append(Check("solve", found, "a top-level solve" if found else "no top-level solve in the file"))
    else:
        out.append(_python_solve(text, framework))
    if out[-1].ok:
        out.append(_one_file(path, text, framework))
    size, lines = len(text.encode()), len(text.splitlines())
    out.append(Check("size", True, f"{size / 1024:.0f} KB in {lines} line{'' if lines == 1 else 's'}; LeetGPU publishes no "
                     "size limit for its editor, so a large export is pasted at the user's own risk"))
    return out


def precision_note(precision: str) -> str:
    """What a file of this precision class means for LeetGPU's 1e-4 check."""
    return {
        "fp32": "strict FP32, what LeetGPU's check expects; gemmlab judge FILE runs LeetGPU's own test "
                "shapes and counts every element outside its 1e-4 check",
        "fp32x3": "3xTF32, closer to the exact product than cuBLAS FP32, and for that further from "
                  "cuBLAS's own result, which LeetGPU's 1e-4 check compares with: strict FP32 is what it "
                  "expects. gemmlab judge FILE --precision fp32x3 runs LeetGPU's own test shapes and "
                  "counts every element outside that check",
        "tf32": "WARNING: TF32 keeps 10 mantissa bits, about 1e-3 relative error: LeetGPU's 1e-4 check "
                "rejects it. Submit a strict FP32 rung instead (default)",
    }[precision]


def points_of(record: dict | None) -> list[dict]:
    """A record's timed shapes as a sweep's points: a sweep's own, or a bench record's one shape."""
    if not record:
        return []
    if "points" in record:
        return record["points"]
    return [{"label": "×".join(map(str, record["shape"])), "results": record["results"]}]


def violations(record: dict | None, name: str) -> list[dict]:
    """The record's shapes (a sweep's, or a bench record's one) where `name` differs from cuBLAS's
    FP32 result beyond LeetGPU's tolerance, each with how far cuBLAS itself is from the float64
    product by the same rule."""
    out = []
    for point in points_of(record):
        rows = {r["name"]: r for r in point["results"]}
        mine, cublas = rows.get(name), rows.get("torch")
        counted = (mine or {}).get("figures", {}).get("leetgpu_violations")
        if counted and cublas:
            out.append({"label": point["label"], "outside": counted, "numel": mine["figures"]["numel"],
                        "own_exact": mine["figures"].get("exact_violations"),
                        "cublas_exact": cublas["figures"].get("exact_violations")})
    return out
