"""One NVRTC compile in a process of its own: ``python -m gemmlab.cuda.nvrtc_child``.

NVRTC does not always build the same source to the same cubin within one process: after
other compiles, bigtile's loop came out with 228 registers instead of 245, or with other SASS
at the same count, in about one process in four that compiled the registry's strict-FP32
launches in a row, while every compile in a fresh process gave the same cubin
(experiments/README.md#build-lottery). The speed moves with the build, so a build that depends on what the process compiled before makes
timings and the tune record's cubin digests irreproducible. `compiler.compile_source`
therefore runs each compile here, in a fresh interpreter, and caches what comes back.

Reads a JSON request on stdin (``text``, ``name``, ``arch``, ``macro``, ``ptxas``,
``include``), writes a JSON answer on stdout: ``log`` and ``cubin`` (base64), or ``error`` (NVRTC's
message and log), or ``import_error``.
"""

from __future__ import annotations

import base64
import io
import json
import sys


def build(request: dict) -> dict:
    try:
        from cuda.core import Program, ProgramOptions
    except ImportError as exc:  # the parent raises it as its own: "cannot compile CUDA here"
        return {"import_error": str(exc)}

    options = ProgramOptions(
        name=request["name"],
        arch=request["arch"],
        std="c++17",
        ptxas_options=list(request["ptxas"]),
        include_path=[request["include"]],
        define_macro=[f"{k}={v}" for k, v in request["macro"]] or None,
    )
    logs = io.StringIO()
    try:
        obj = Program(request["text"], "c++", options).compile("cubin", logs=logs)
    except Exception as exc:  # NVRTCError carries the log in its message
        return {"error": f"{exc}\n{logs.getvalue()}".strip()}
    return {"log": logs.getvalue().replace("\x00", ""), "cubin": base64.b64encode(bytes(obj.code)).decode()}


def main() -> None:
    json.dump(build(json.load(sys.stdin)), sys.stdout)


if __name__ == "__main__":
    main()
