"""Resource and instruction reports for the CUDA kernels behind each implementation."""

from __future__ import annotations

import torch

from ..cuda.compiler import HOPPER_ARCH, device_arch
from ..cuda.rung import Kernel
from ..cuda.sass import disassemble, instruction_mix, register_claims
from ..registry import Implementation

MAX_THREADS_PER_SM = 2048


#: The tables `gemmlab inspect` shows, each with its columns in order.
TABLES = {
    "resources": ("name", "kernel", "threads", "regs", "setmaxnreg", "smem B", "dyn smem B", "cluster",
                  "stack B", "spills", "occupancy"),
    "SASS mix": ("name", "kernel", "FFMA", "LDS", "LDS.128", "LDG.128", "STG.128", "LDGSTS", "HMMA",
                 "HGMMA", "UTMALDG", "SETMAXREG", "BAR", "LDL/STL"),
}


def occupancy(module, kernel: Kernel) -> str:
    """Resident blocks per SM and the fraction of the SM's thread slots they fill."""
    from ..cuda import launch as cl

    loaded = cl.get_kernel(module, kernel.entry, kernel.smem)
    blocks = loaded.occupancy.max_active_blocks_per_multiprocessor(kernel.threads, kernel.smem)
    return f"{blocks} blk/SM ({100 * blocks * kernel.threads / MAX_THREADS_PER_SM:.0f}%)"


def setmaxnreg(cubin: bytes, entry: str) -> dict[str, int] | None:
    """The registers a warp-specialised kernel's producers keep and its consumers claim."""
    claims = dict(register_claims(cubin).get(entry, ()))
    if not claims:
        return None
    return {"producer": claims.get("DEALLOC"), "consumer": claims.get("TRY_ALLOC")}


def inspect_launches(impls: list[Implementation], arch: str | None = None) -> list[dict]:
    """One row per kernel of every launch: the main kernel, then its pre-passes."""
    gpu = torch.cuda.is_available()
    arch = arch or (device_arch() if gpu else HOPPER_ARCH)
    rows = []
    for impl in impls:
        for launch in impl.launches:
            for kernel in launch.kernels():
                module = kernel.compile(arch)
                res = module.resources[kernel.entry]
                mix = instruction_mix(disassemble(module.cubin)[kernel.entry])
                label = impl.launch_label(launch) if kernel == launch.kernel else f"  pre-pass {kernel.entry}"
                row = {
                    "name": impl.name, "arch": arch, "kernel": label,
                    "threads": kernel.threads, "regs": res.registers,
                    # (a second look at the SASS, only for kernels that trade registers)
                    "setmaxnreg": setmaxnreg(module.cubin, kernel.entry) if mix["SETMAXREG"] else None,
                    "smem B": res.smem_bytes,
                    "dyn smem B": kernel.smem, "cluster": "×".join(map(str, kernel.cluster)),
                    "stack B": res.stack_bytes, "spills": res.spills,
                } | mix
                if gpu and arch == device_arch():
                    row["occupancy"] = occupancy(module, kernel)
                rows.append(row)
    return rows
