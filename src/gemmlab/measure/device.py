"""What a figure was measured on: the GPU, its peaks and clocks, and every version that matters."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from typing import TYPE_CHECKING

from ..provenance import gemmlab_commit

if TYPE_CHECKING:
    from ..precision import Precision

#: FP32 FMA lanes per SM and dense TF32 tensor FLOP per SM per clock, by compute capability.
FP32_LANES = {(7, 0): 64, (8, 0): 64, (8, 6): 128, (8, 9): 128, (9, 0): 128}
TF32_FLOP_PER_CLK = {(8, 0): 1024, (8, 6): 512, (8, 9): 512, (9, 0): 2048}


def slug(name: str) -> str:
    """A device's name as a file name: lower case, runs of anything else one dash
    ("NVIDIA H200" → "nvidia-h200"). Results and tune records are filed under it."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "unknown"


def _version(dist: str) -> str | None:
    # Not at the top: a fifth of gemmlab's start-up, needed only where versions are recorded.
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def versions() -> dict[str, str | None]:
    import platform

    import torch

    from ..cuda.compiler import nvrtc_version

    try:
        nvrtc = nvrtc_version()
    except Exception:
        nvrtc = None
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "triton": _version("triton"),
        "cuda_core": _version("cuda-core"),
        "cuda_bindings": _version("cuda-bindings"),
        "nvrtc": nvrtc,
        "gemmlab": _version("gemmlab"),
        "gemmlab_commit": gemmlab_commit(),  # the tree the record's figures were measured on
    }


def _smi() -> dict[str, str]:
    fields = "driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu"
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits", "-i", "0"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip().splitlines()[0]
    except Exception:
        return {}
    return dict(zip(fields.split(","), (v.strip() for v in out.split(",")), strict=False))


@cache
def _static_gpu() -> dict:
    import torch
    from cuda.core import Device

    props = Device(torch.cuda.current_device()).properties
    cc = torch.cuda.get_device_capability()
    return {
        "name": torch.cuda.get_device_name(),
        "compute_capability": f"{cc[0]}.{cc[1]}",
        "sm_count": props.multiprocessor_count,
        "max_sm_clock_mhz": props.clock_rate / 1000,
        "memory_clock_mhz": props.memory_clock_rate / 1000,
        "l2_bytes": props.l2_cache_size,
    }


def gpu() -> dict:
    """Static properties plus the clocks nvidia-smi reads now (they move under load)."""
    smi = _smi()
    return _static_gpu() | {"driver": smi.get("driver_version"), "nvidia_smi": smi}


def peaks(info: dict) -> dict[str, float | None]:
    """Ceilings in TFLOP/s: SMs × per-SM rate × max SM clock (a derived figure, not a datasheet)."""
    cc = tuple(int(x) for x in info["compute_capability"].split("."))
    clock_hz = info["max_sm_clock_mhz"] * 1e6
    sms = info["sm_count"]
    lanes = FP32_LANES.get(cc, 128)
    tf32 = TF32_FLOP_PER_CLK.get(cc)
    return {
        "fp32": sms * lanes * 2 * clock_hz / 1e12,
        "tf32": sms * tf32 * clock_hz / 1e12 if tf32 else None,
    }


def peak_for(precision: Precision, ceilings: dict[str, float | None]) -> float | None:
    """The ceiling a precision class is measured against, in useful TFLOP/s (2·M·N·K per product),
    None where the record has none: 3xTF32 issues three TF32 products for each useful one, so its
    ceiling is a third of TF32's."""
    from ..precision import Precision

    if precision == Precision.FP32:
        return ceilings.get("fp32")
    tf32 = ceilings.get("tf32")
    return tf32 / 3 if tf32 and precision == Precision.FP32X3 else tf32


class ClockSampler:
    """The SM clock and board power while a block runs, sampled by nvidia-smi every 100 ms.

    Tensor-core work drives an H200 to its power cap and the SM clock down with it
    (LADDER.md §6), so a timing means little without the clock it ran at.
    Without nvidia-smi the summary says so instead of inventing figures.
    """

    FIELDS = ("clocks.sm", "power.draw", "clocks_event_reasons.active")

    def __init__(self, device_index: int = 0, period_ms: int = 100):
        self.cmd = ["nvidia-smi", f"--query-gpu={','.join(self.FIELDS)}", "--format=csv,noheader,nounits",
                    "-i", str(device_index), f"-lms={period_ms}"]
        self.proc: subprocess.Popen | None = None
        self.lines: list[str] = []

    def __enter__(self) -> ClockSampler:
        try:
            self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         text=True)
        except OSError:
            self.proc = None
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            out, _ = self.proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        self.lines = [line for line in out.splitlines() if line.strip()]

    def summary(self) -> dict:
        clocks, power, reasons = [], [], set()
        for line in self.lines:
            parts = [p.strip() for p in line.split(",")]
            try:
                clocks.append(float(parts[0]))
                power.append(float(parts[1]))
            except (ValueError, IndexError):
                continue
            if len(parts) > 2:
                reasons.add(parts[2])
        if not clocks:
            return {"samples": 0, "note": "nvidia-smi gave no samples"}

        def stats(xs: list[float]) -> dict:
            xs = sorted(xs)
            return {"median": xs[len(xs) // 2], "min": xs[0], "max": xs[-1]}

        return {"samples": len(clocks), "sm_clock_mhz": stats(clocks), "power_w": stats(power),
                "throttle_reasons": sorted(reasons)}
