"""The chapters the ladder is read in: each a run of steps with one idea, and how a step is named.

A step's reference is its chapter's number, a dot and its place in the chapter ("3.2"): the one
numbering (the registry's `Implementation.ref`). The baselines are a group of their own, with no
number. The registry places every implementation in one of these (`registry.in_chapter`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Chapter:
    """A chapter of the ladder: its steps share one theme, read in order."""

    key: str  # a stable identifier ("simt", "memory", …): links and JSON use it
    number: int | None  # 1, 2, … in reading order; None for the unnumbered baselines
    title: str
    summary: str  # what the chapter teaches, in a sentence or two

    @property
    def label(self) -> str:
        """"3 · Past cuBLAS in FP32", or the title alone for an unnumbered group."""
        return self.title if self.number is None else f"{self.number} · {self.title}"


SIMT = Chapter(
    "simt", 1, "SIMT basics",
    "One thread per output, then tiles in shared memory and outputs held in registers: each step "
    "raises the FLOPs a block does per byte it loads. The study notes' first rungs.")
MEMORY = Chapter(
    "memory", 2, "Memory",
    "How the tiles arrive: 16-byte loads, two buffers, the copy engine (cp.async), and Triton "
    "doing the same for you. `gemmlab study buffering` separates buffering from tile size.")
PAST_CUBLAS = Chapter(
    "fp32", 3, "Past cuBLAS in FP32",
    "Strict FP32 on the SIMT lanes with cuBLAS's own techniques and then some: warp tiles, 8×16 "
    "outputs per thread, split reductions, TMA copies, a kernel for little work, and `default`, "
    "which runs the fastest of them per shape class.")
TF32_CORES = Chapter(
    "tf32", 4, "TF32 tensor cores",
    "Inputs rounded to TF32 on the tensor cores: WMMA, warp-level mma.sync (sm_80), then Hopper's "
    "wgmma fed by TMA, warp specialisation, and the product swapped to skip the pre-pass; small "
    "split tiles for little work, and `tf32`, which runs the one that fits the shape. Compared "
    "with cuBLAS TF32; about 3e-4 off the exact product.")
FP32_CORES = Chapter(
    "fp32x3", 5, "FP32-accurate tensor cores",
    "Three TF32 products per FP32 product (3xTF32): the tensor cores' speed at FP32's accuracy, "
    "closer to the exact product than cuBLAS FP32; `3xtf32` at every shape.")
LANGUAGES = Chapter(
    "languages", 6, "Other languages",
    "The same problem in the other languages LeetGPU accepts or is asked for, one file each in its "
    "format: CuTe DSL and Mojo in strict FP32, TileLang's T.gemm (TF32 on float32).")
BASELINES = Chapter(
    "baselines", None, "Baselines",
    "cuBLAS through torch.matmul, with TF32 off and on: what every figure is compared with.")

#: Every chapter in reading order, the unnumbered baselines last.
CHAPTERS: tuple[Chapter, ...] = (SIMT, MEMORY, PAST_CUBLAS, TF32_CORES, FP32_CORES, LANGUAGES, BASELINES)
#: A chapter by its key.
CHAPTER: dict[str, Chapter] = {c.key: c for c in CHAPTERS}

#: A step reference as typed: chapter number, a dot, step number ("3.2").
REF = re.compile(r"([0-9]+)\.([0-9]+)")


def is_ref(token: str) -> bool:
    """Whether `token` is written as a step reference ("3.2"), named or not."""
    return REF.fullmatch(token) is not None and token.isascii()


class UnknownStep(KeyError):
    """A reference ("3.9") that names no step; its message says which steps there are."""

    def __str__(self) -> str:
        return self.args[0]
