"""Which of gemmlab's modules one `gemmlab bench default` at one shape runs through (issue 53's
"at most 20 modules"): the CLI is imported first, so what is counted is code that runs for the
command, not what importing the package touches.

Usage: python experiments/tools/bench_path.py [MxNxK] [RUNG...]   (GPU; default 1024x1024x1024 default)
Prints one JSON object: the modules in the order first entered from the bench command's own function
on, and apart those entered before it (typer building the CLI, which calls into every command's module).
"""

from __future__ import annotations

import json
import sys


def trace(argv: list[str]) -> tuple[list[str], list[str]]:
    """(modules entered before the bench command's own function starts, modules entered from then on)."""
    from gemmlab.cli import app

    before: dict[str, None] = {}
    path: dict[str, None] = {}

    def profile(frame, event, _arg):
        if event != "call":
            return
        name = frame.f_globals.get("__name__", "")
        if not name.startswith("gemmlab"):
            return
        if not path and not (name == "gemmlab.cli.bench" and frame.f_code.co_name == "bench"):
            before.setdefault(name, None)
        else:
            path.setdefault(name, None)

    sys.setprofile(profile)
    try:
        app(argv, prog_name="gemmlab", standalone_mode=False)
    finally:
        sys.setprofile(None)
    return list(before), list(path)


def main() -> None:
    shape = sys.argv[1] if len(sys.argv) > 1 else "1024x1024x1024"
    rungs = sys.argv[2:] or ["default"]
    argv = ["bench", *rungs, "--shape", shape, "--iters", "3", "--warmup", "1", "--no-energy",
            "--out", "/tmp/bench-path"]
    before, path = trace(argv)
    print(json.dumps({"command": "gemmlab " + " ".join(argv), "before_the_command": before,
                      "path": path, "count": len(path)}, indent=1))


if __name__ == "__main__":
    main()
