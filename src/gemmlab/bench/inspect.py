"""Resource and instruction reports for the CUDA kernels behind each implementation."""

from __future__ import annotations

import torch

from ..cuda.compiler import HOPPER_ARCH, device_arch
from ..cuda.sass import disassemble, instruction_mix
from ..registry import Implementation

MAX_THREADS_PER_SM = 2048


def occupancy(module, entry: str, threads: int) -> str:
    """Resident blocks per SM and the fraction of the SM's thread slots they fill."""
    from ..cuda import launch as cl

    kernel = cl.get_kernel(module, entry)
    blocks = kernel.occupancy.max_active_blocks_per_multiprocessor(threads, 0)
    return f"{blocks} blk/SM ({100 * blocks * threads / MAX_THREADS_PER_SM:.0f}%)"


def inspect_launches(impls: list[Implementation], arch: str | None = None) -> list[dict]:
    gpu = torch.cuda.is_available()
    arch = arch or (device_arch() if gpu else HOPPER_ARCH)
    rows = []
    for impl in impls:
        for launch in impl.launches:
            module = launch.compile(arch)
            res = module.resources[launch.entry]
            mix = instruction_mix(disassemble(module.cubin)[launch.entry])
            row = {
                "name": impl.name, "arch": arch, "kernel": impl.launch_label(launch),
                "threads": launch.threads, "regs": res.registers, "smem B": res.smem_bytes,
                "stack B": res.stack_bytes, "spills": res.spills,
            } | mix
            if gpu and arch == device_arch():
                row["occupancy"] = occupancy(module, launch.entry, launch.threads)
            rows.append(row)
    return rows
