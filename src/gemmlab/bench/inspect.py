"""Resource and instruction reports for the CUDA kernels behind each implementation."""

from __future__ import annotations

import torch

from ..cuda.compiler import HOPPER_ARCH, device_arch
from ..cuda.dispatch import Kernel
from ..cuda.sass import MIX, disassemble, instruction_mix, listing, register_claims, schedule
from ..registry import Implementation

MAX_THREADS_PER_SM = 2048


#: The tables `gemmlab inspect` shows, each with its columns in order.
TABLES = {
    "resources": ("name", "kernel", "threads", "regs", "setmaxnreg", "smem B", "dyn smem B", "cluster",
                  "stack B", "spills", "occupancy"),
    "SASS mix": ("name", "kernel", *MIX),
    # Static figures of the schedule (sass.schedule): what decides an issue-bound FFMA kernel's
    # speed beyond its instruction mix (bigtile.md, experiments/static-model).
    "SASS schedule": ("name", "kernel", "FFMA bank conflicts", "loop instructions", "loop stall cycles",
                      "loop LDS stalled 4+"),
}


def occupancy(module, kernel: Kernel) -> str:
    """Resident blocks per SM and the fraction of the SM's thread slots they fill."""
    from ..cuda import driver as cl

    loaded = cl.get_kernel(module, kernel.entry, kernel.smem)
    blocks = loaded.occupancy.max_active_blocks_per_multiprocessor(kernel.threads, kernel.smem)
    return f"{blocks} blk/SM ({100 * blocks * kernel.threads / MAX_THREADS_PER_SM:.0f}%)"


def setmaxnreg(cubin, entry: str) -> dict[str, int] | None:
    """The registers a warp-specialised kernel's producers keep and its consumers claim
    (`cubin`: the cubin or its `sass.listing`)."""
    claims = dict(register_claims(cubin).get(entry, ()))
    if not claims:
        return None
    return {"producer": claims.get("DEALLOC"), "consumer": claims.get("TRY_ALLOC")}


def default_arch() -> str:
    """The GPU's target, or sm_90a (the H200's) without one."""
    return device_arch() if torch.cuda.is_available() else HOPPER_ARCH


def inspect_launches(impls: list[Implementation], arch: str | None = None) -> list[dict]:
    """One row per kernel of every launch: the main kernel, then its pre-passes. Implementations
    that `arch` cannot build are left out (`Needs.builds_for`), and so are the launches of the
    others that it cannot (`default`'s TMA winners for sm_80, say)."""
    gpu = torch.cuda.is_available()
    arch = arch or default_arch()
    rows = []
    for impl in impls:
        if not impl.needs.builds_for(arch):
            continue
        for launch in impl.launches:
            if not launch.all_needs.builds_for(arch):
                continue
            for kernel in launch.kernels():
                module = kernel.compile(arch)
                res = module.resources[kernel.entry]
                sass = listing(module.cubin)  # one cuobjdump for every figure of the row
                mix = instruction_mix(disassemble(sass)[kernel.entry])
                pre = kernel != launch.kernel
                label = f"pre-pass {kernel.entry}" if pre else impl.launch_label(launch)
                row = {
                    "name": impl.name, "arch": arch, "kernel": label, "pre_pass": pre,
                    "threads": kernel.threads, "regs": res.registers,
                    "setmaxnreg": setmaxnreg(sass, kernel.entry) if mix["SETMAXREG"] else None,
                    "smem B": res.smem_bytes,
                    "dyn smem B": kernel.smem, "cluster": list(kernel.cluster),
                    "stack B": res.stack_bytes, "spills": res.spills,
                } | mix | schedule(sass)[kernel.entry]
                if gpu and arch == device_arch():
                    row["occupancy"] = occupancy(module, kernel)
                rows.append(row)
    return rows
