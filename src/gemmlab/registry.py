"""The one registry of implementations: every rung of the ladder, and the chapters it is read in.

The judge, the benchmark, the reports and the CLI all read `REGISTRY`. Adding
a rung is adding one `Implementation` to `IMPLEMENTATIONS`, at its step of its chapter
(the table is in reading order), and its source files (a ``.cu`` kernel with a ``.md``
explanation beside it, or a Python module). A CUDA rung's launches are declared in
`gemmlab.launches` (`RUNGS`), beside their builders; the other families' factories sit
beside their kernels (`kernels.triton`, `kernels.torch`, `langs.LanguageRung`).

**Chapters.** The ladder is read in chapters (`CHAPTERS`, in reading order), each a
run of steps with one idea each: `impl.chapter` is its `Chapter`, `impl.step` its
place in it (1, 2, …), `impl.ref` the two together ("3.2"), and `by_ref("3.2")`
the implementation a reference names. `reading_order()` is every implementation in
the order a reader meets them. The baselines (cuBLAS through torch) are a group of
their own at the end, unnumbered: their `ref` is None and a name reaches them.
`impl.variant_of` names the implementation whose source this one builds again with
other settings (a control, a macro set of one ``.cu``), None where its source is its
own. `impl.old_number` is the rung number it had before chapters: an alias alone, which old
command lines use (`by_old_number`, `old_number_refs`); the step is the one numbering.

These names are a public interface (the book site reads them): `Chapter` (`key`,
`number`, `title`, `summary`, `label`), `CHAPTERS`, `CHAPTER` (key → Chapter), `is_ref` and
`UnknownStep`, defined in `gemmlab.chapters` and re-exported here; `Implementation.chapter` /
`.step` / `.ref` / `.variant_of` / `.old_number`, `by_ref`, `reading_order`, `reading_place`,
`in_chapter`, `variants_of`, `old_number_refs`.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from . import problem, runtime
from .chapters import (  # noqa: F401  (re-exported: the registry's public interface, above)
    BASELINES,
    CHAPTER,
    CHAPTERS,
    FP32_CORES,
    LANGUAGES,
    MEMORY,
    PAST_CUBLAS,
    REF,
    SIMT,
    TF32_CORES,
    Chapter,
    UnknownStep,
    is_ref,
)
from .committed import PACKAGE_DIR
from .cuda.compiler import NoGPUError
from .cuda.dispatch import FALLBACK_MARK, CudaSolver, Launch
from .cuda.needs import Needs
from .kernels.torch import torch_fp32, torch_tf32
from .kernels.triton import triton_matmul, triton_presplit
from .langs import LanguageRung
from .launches import RUNGS
from .policy import default as tuned_default
from .policy import tensor as tensor_policy
from .precision import Precision

if TYPE_CHECKING:  # the registry is read without torch (list, explain): calls import it
    import torch

#: ``solve(A, B, C, M, N, K)`` on torch tensors.
Solve = Callable[..., None]


class Family(StrEnum):
    CUDA = "cuda"
    TRITON = "triton"
    TORCH = "torch"
    CUTE = "cute"  # CuTe DSL (gemmlab[cute])
    MOJO = "mojo"  # Mojo (gemmlab[mojo])
    TILELANG = "tilelang"  # TileLang (gemmlab[tilelang])


#: The families whose kernels need a GPU and an optional toolchain (gemmlab.langs).
LANGUAGE_FAMILIES = (Family.CUTE, Family.MOJO, Family.TILELANG)


@dataclass(frozen=True)
class Implementation:
    name: str
    family: Family
    old_number: int  # the rung number before chapters: an alias (ui/usage.py), never shown as the number
    precision: Precision
    needs: Needs  # what the rung's own path needs of the GPU (its launches may need less)
    summary: str
    doc: str  # Markdown explanation, relative to the package
    sources: tuple[str, ...]  # relative to the package
    factory: Callable[[], Solve] | None = field(default=None, repr=False)
    launches: tuple[Launch, ...] = ()  # CUDA rungs: fast path(s) first, fallback last
    # Where it is read: every entry of the registry names its chapter and step (from 1). Only an
    # implementation made outside the registry (a study's arm, gemmlab.bench.studies) has neither.
    chapter: Chapter | None = None
    step: int = 0
    variant_of: str | None = None  # the implementation whose source it builds again, if any
    # What a reader compares it with, where that is not the step before it in its own language
    # (book.chapters.previous): the book's diff and `gemmlab diff`'s pairing never cross languages.
    builds_on: str | None = None

    def __post_init__(self) -> None:
        if (self.chapter is None) != (self.step == 0) or self.step < 0:
            raise ValueError(f"{self.name}: a chapter and a step within it (from 1), or neither")
        if self.variant_of == self.name:
            raise ValueError(f"{self.name} cannot be a variant of itself")

    @property
    def ref(self) -> str | None:
        """"3.2": chapter number and step; None in an unnumbered group (the baselines) or outside
        the registry."""
        if self.chapter is None or self.chapter.number is None:
            return None
        return f"{self.chapter.number}.{self.step}"

    @property
    def step_label(self) -> str:
        """`ref` where it has one, else its name (the baselines): what a table's step column shows."""
        return self.ref or self.name

    @property
    def min_cc(self) -> tuple[int, int]:
        """The lowest compute capability `needs` runs on (sm_90a's: that one alone)."""
        return self.needs.min_cc

    @property
    def tile(self) -> tuple[int, int, int] | None:
        """(rows, cols, reduction step) of C per block/program on the fast path, from its launch or config.

        The fast path is the first launch that is not a twin for a corner of the shapes: a
        launch with a floor on A's or B's elements (`small`'s narrow twin, `launches.narrow`; `thin`'s
        wider kernels) is not."""
        main = next((x for x in self.launches
                     if not getattr(x.when, "a_elements", 0) and not getattr(x.when, "b_elements", 0)), None)
        if main is not None and main.depth:
            return (*main.tile, main.depth)
        return getattr(self.factory, "tile", None)

    @cached_property
    def _solve(self) -> Solve:
        return CudaSolver(self.launches) if self.family is Family.CUDA else self.factory()

    def explanation(self) -> str:
        return (PACKAGE_DIR / self.doc).read_text()

    def source_paths(self) -> list[Path]:
        return [PACKAGE_DIR / s for s in self.sources]

    @property
    def intensity(self) -> float | None:
        """FLOP per byte loaded from global memory per tile step: BM·BN / (2·(BM+BN))."""
        if not self.tile:
            return None
        rows, cols, _ = self.tile
        return rows * cols / (2 * (rows + cols))

    def can_run_on(self, device: torch.device | str) -> tuple[bool, str]:
        """Whether this implementation runs on that device (or device type: "cpu"), and why not."""
        if self.family is Family.TRITON and importlib.util.find_spec("triton") is None:
            return False, "install gemmlab[triton]"
        if self.family in LANGUAGE_FAMILIES:
            from .langs import TOOLCHAINS

            if TOOLCHAINS[self.family].missing():
                return False, f"install {TOOLCHAINS[self.family].extra}"
        if getattr(device, "type", device) == "cuda":
            import torch

            cc = torch.cuda.get_device_capability(device)
            if not self.needs.runs_on(cc):
                return False, f"needs {self.needs.short}, the device is sm_{cc[0]}{cc[1]}"
            return True, ""
        if self.family is Family.CUDA or self.family in LANGUAGE_FAMILIES:
            return False, "CUDA kernels need a CUDA GPU"
        if self.family is Family.TRITON and os.environ.get("TRITON_INTERPRET") != "1":
            return False, "Triton on CPU needs TRITON_INTERPRET=1"
        return True, ""

    def dispatch(self, a, b, c, m, n, k) -> Launch | None:
        """The CUDA launch this call would run (fast path or fallback); None for other families."""
        return self._solve.select(a, b, c, m, n, k) if self.family is Family.CUDA else None

    def launch_label(self, launch: Launch) -> str:
        """`entry[MACRO=v,…]`, marked as the fallback where the rung has a faster path, and with
        what its host does where that changes what runs (e.g. "padded")."""
        fallback = launch.when is None and len(self.launches) > 1
        marks = [m for m in (getattr(launch.host, "label", ""), FALLBACK_MARK if fallback else "") if m]
        return launch.kernel.label + (f" ({' '.join(marks)})" if marks else "")


    def solve(self, a, b, c, m, n, k) -> None:
        """Validate every argument, then run. Nothing is launched on a bad call."""
        problem.validate(a, b, c, m, n, k)
        device = a.device
        # Asked once per device: whether a rung runs there does not change while the process runs.
        key = (self.name, device.type, device.index)
        verdict = _RUNS_ON.get(key)
        if verdict is None:
            verdict = _RUNS_ON[key] = self.can_run_on(device)
        ok, why = verdict
        if not ok:
            if (self.family is Family.CUDA or self.family in LANGUAGE_FAMILIES) and not runtime.has_gpu():
                raise NoGPUError(f"{self.name}: {why}")
            raise problem.DeviceError("A", f"a device {self.name} runs on ({why})", a.device)
        self._solve(a, b, c, m, n, k)


#: (implementation, device type, device index) → `can_run_on`'s answer, for `solve`.
_RUNS_ON: dict[tuple[str, str, int | None], tuple[bool, str]] = {}


class Lazy(Sequence):
    """A tuple computed on first use: `default`'s launches and sources, a dispatcher's sources."""

    def __init__(self, make: Callable[[], Sequence]):
        self._make = make
        self._items: tuple | None = None

    @property
    def items(self) -> tuple:
        if self._items is None:
            self._items = tuple(self._make())
        return self._items

    def __getitem__(self, index):
        return self.items[index]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator:
        return iter(self.items)

    def __repr__(self) -> str:
        return f"Lazy({self.items!r})"


def _cu(*names: str) -> tuple[str, ...]:
    """Files of the CUDA kernel folder: a bare name is a ``.cu`` file."""
    return tuple(f"kernels/cuda/{name}" + ("" if "." in name else ".cu") for name in names)


def _md(stem: str) -> str:
    return f"kernels/cuda/{stem}.md"


def _cuda(*, name: str, doc: str, sources: tuple[str, ...] | None = None, **fields) -> Implementation:
    """A CUDA rung of `RUNGS`: explained in `doc`.md, built from `doc`.cu unless `sources` says."""
    return Implementation(name=name, family=Family.CUDA, doc=_md(doc), sources=sources or _cu(doc),
                          launches=RUNGS[name], **fields)


FP32, TF32, FP32X3 = Precision.FP32, Precision.TF32, Precision.FP32X3
CUDA, TRITON, TORCH = Family.CUDA, Family.TRITON, Family.TORCH
CUTE, MOJO, TILELANG = Family.CUTE, Family.MOJO, Family.TILELANG
_ALWAYS, _SM80, _SM90, _HOPPER = Needs.ANY, Needs.SM80, Needs.SM90, Needs.SM90A


def _sources_of(*names: str) -> tuple[str, ...]:
    """The sources of the named implementations, each once, in order: what a rung that runs their
    launches builds."""
    return tuple(dict.fromkeys(s for name in names for s in REGISTRY[name].sources))


def _built_with(*names: str, also: tuple[str, ...] = ()) -> Lazy:
    """A dispatcher's sources: those of the rungs it dispatches to (`_sources_of`), then `also`;
    resolved on first use, once the table holds them all."""
    return Lazy(lambda: _sources_of(*names) + also)


def _default_sources() -> tuple[str, ...]:
    """The sources of every rung whose launches `default` runs here."""
    return _sources_of(*tuned_default.rungs())


# The table, in reading order: chapter by chapter (`CHAPTERS`), by step within one, the unnumbered
# baselines last (tests/test_chapters.py keeps it so). `old_number` is an alias only.
IMPLEMENTATIONS: tuple[Implementation, ...] = (
    # 1 · SIMT basics
    _cuda(
        name="naive", old_number=1, precision=FP32, needs=_ALWAYS,
        summary="one thread per output, dot product straight from global memory",
        doc="naive", chapter=SIMT, step=1,
    ),
    _cuda(
        name="naive-fma", old_number=2, precision=FP32, needs=_ALWAYS,
        summary="the naive kernel accumulating with fmaf",
        doc="naive_fma", chapter=SIMT, step=2,
    ),
    _cuda(
        name="smem-16", old_number=3, precision=FP32, needs=_ALWAYS,
        summary="16×16 tiles of A and B staged in shared memory",
        doc="smem16", chapter=SIMT, step=3,
    ),
    _cuda(
        name="row-4", old_number=4, precision=FP32, needs=_ALWAYS,
        summary="16×64 tile, four outputs per thread along a row",
        doc="row4", chapter=SIMT, step=4,
    ),
    _cuda(
        name="tiling-1d", old_number=5, precision=FP32, needs=_ALWAYS,
        summary="64×64 block tile, 16 outputs per thread down a column",
        doc="tiling1d", chapter=SIMT, step=5,
    ),
    _cuda(
        name="tiling-2d", old_number=6, precision=FP32, needs=_ALWAYS,
        summary="64×64 block tile, an 8×4 register micro-tile per thread",
        doc="tiling2d", chapter=SIMT, step=6,
    ),

    # 2 · Memory
    _cuda(
        name="float4", old_number=7, precision=FP32, needs=_ALWAYS,
        summary="2D tiling with 16-byte loads and stores, BK=32",
        doc="float4", chapter=MEMORY, step=1,
    ),
    _cuda(
        name="float4-bk16", old_number=7, precision=FP32, needs=_ALWAYS,
        summary="control: float4 with BK=16",
        doc="float4", chapter=MEMORY, step=2, variant_of="float4",
    ),
    _cuda(
        name="float4-128", old_number=7, precision=FP32, needs=_ALWAYS,
        summary="control: float4 with a 128×128 tile, BK=16, 512 threads",
        doc="float4", chapter=MEMORY, step=3, variant_of="float4",
    ),
    _cuda(
        name="double-buffer-64", old_number=8, precision=FP32, needs=_ALWAYS,
        summary="register prefetch + two shared buffers, 64×64 tile",
        doc="double_buffer", chapter=MEMORY, step=4,
    ),
    _cuda(
        name="double-buffer-128", old_number=8, precision=FP32, needs=_ALWAYS,
        summary="register prefetch + two shared buffers, 128×128 tile",
        doc="double_buffer", chapter=MEMORY, step=5, variant_of="double-buffer-64",
    ),
    _cuda(
        name="cp-async", old_number=9, precision=FP32, needs=_ALWAYS,
        summary="the copy engine moves tiles global→shared (cp.async), 128×128",
        doc="cp_async", chapter=MEMORY, step=6,
    ),
    Implementation(
        name="triton", family=TRITON, old_number=11, precision=FP32, needs=_ALWAYS,
        summary="one program per 64×64 tile, grouped order, IEEE FP32 dot, masks",
        doc="kernels/triton/matmul.md", sources=("kernels/triton/matmul.py",),
        factory=triton_matmul(rows=64, cols=64, red=32, group=8, warps=4, stages=3, precision="ieee"),
        chapter=MEMORY, step=7,
    ),

    # 3 · Past cuBLAS in FP32
    _cuda(
        name="warptile", old_number=14, precision=FP32, needs=_ALWAYS,
        summary="strict FP32 past the notes: A transposed in shared memory, warp tiles, 8×8 per thread",
        doc="warptile", chapter=PAST_CUBLAS, step=1,
    ),
    _cuda(
        name="bigtile", old_number=20, precision=FP32, needs=_SM80,
        summary="strict FP32: 8×16 outputs per thread, Aᵀ and B by a 4-stage cp.async pipeline",
        doc="bigtile", sources=_cu("bigtile", "prepass", "pad"), chapter=PAST_CUBLAS, step=2,
    ),
    _cuda(
        name="splitk", old_number=21, precision=FP32, needs=_SM80,
        summary="strict FP32: bigtile with each tile's reduction split where its tiles leave SMs idle, any N",
        doc="bigtile_splitk", sources=_cu("bigtile", "splitk.cuh", "prepass", "pad"),
        chapter=PAST_CUBLAS, step=3, variant_of="bigtile",
    ),
    _cuda(
        name="tma", old_number=23, precision=FP32, needs=_SM90,
        summary="strict FP32: splitk's kernel with both tiles by TMA on per-stage mbarriers, one thread issuing",
        doc="bigtile_tma", sources=_cu("bigtile", "splitk.cuh", "hopper.cuh", "prepass", "pad"),
        chapter=PAST_CUBLAS, step=4, variant_of="bigtile",
    ),
    _cuda(
        name="small", old_number=24, precision=FP32, needs=_SM80,
        summary="strict FP32 for little work: one launch, no pre-pass, 32×64 tiles, cp.async stages, split-K in a tree",
        doc="small", sources=_cu("small", "splitk.cuh"), chapter=PAST_CUBLAS, step=5,
    ),
    _cuda(
        name="tma-warp", old_number=32, precision=FP32, needs=_SM90,
        summary="strict FP32: tma's kernel in blocks of one warp, 64×64 tiles, eight blocks an SM: no warp waits at "
        "another's barrier, and tiles a quarter the size fill the last wave",
        doc="bigtile_warp", sources=_cu("bigtile", "splitk.cuh", "hopper.cuh", "prepass", "pad"),
        chapter=PAST_CUBLAS, step=6, variant_of="bigtile",
    ),
    _cuda(
        name="thin", old_number=33, precision=FP32, needs=_SM80,
        summary="strict FP32 where C has at most 8 rows or columns: each thread streams the long operand and keeps "
        "one sum per row (or column) of C, split-K in a tree; small's launches elsewhere",
        doc="thin", sources=_cu("thin", "splitk.cuh", "small"), chapter=PAST_CUBLAS, step=7,
    ),
    _cuda(
        name="short", old_number=34, precision=FP32, needs=_SM80,
        summary="strict FP32 where the reduction is at most 32 long: a 64×128 tile of C a block, A's rows and B's "
        "columns loaded whole, one FMA chain an output; the stores are the work; small's launches elsewhere",
        doc="short", sources=_cu("short", "small", "splitk.cuh"), chapter=PAST_CUBLAS, step=8,
    ),
    _cuda(
        name="gemv", old_number=35, precision=FP32, needs=_SM80,
        summary="strict FP32 where C is one column (K = 1): a matrix-vector product, A streamed 16 bytes a lane, "
        "several loads ahead, a compensated sum a lane a row, split-K in a tree; thin's and small's launches elsewhere",
        doc="gemv", sources=_cu("gemv", "thin", "small", "splitk.cuh"), chapter=PAST_CUBLAS, step=9,
    ),
    # Per shape class, the winner of the GPU's tune record (gemmlab.policy.default). Its launches and
    # sources are resolved on first use: which record applies depends on the GPU.
    Implementation(
        name=tuned_default.NAME, family=CUDA, old_number=25, precision=FP32, needs=_ALWAYS,
        summary="shape-aware: per shape class the fastest verified strict-FP32 configuration of the "
                "GPU's tune record (gemmlab tune), else warptile",
        doc="policy/default.md", sources=Lazy(_default_sources), launches=Lazy(tuned_default.launches),
        chapter=PAST_CUBLAS, step=10,
    ),

    # 4 · TF32 tensor cores
    _cuda(
        name="wmma-tf32", old_number=10, precision=TF32, needs=_ALWAYS,
        summary="tensor cores through WMMA, inputs rounded to TF32",
        doc="wmma_tf32", chapter=TF32_CORES, step=1,
    ),
    _cuda(
        name="mma-tf32", old_number=16, precision=TF32, needs=_SM80,
        summary="tensor cores through mma.sync m16n8k8, fed by a 3-stage cp.async pipeline",
        doc="mma_tf32", chapter=TF32_CORES, step=2,
    ),
    _cuda(
        name="wgmma-tma", old_number=17, precision=TF32, needs=_HOPPER,
        summary="Hopper: TMA copies tiles, an mbarrier pipeline, wgmma reads shared memory",
        doc="wgmma_tma", sources=_cu("wgmma_tma", "hopper.cuh", "prepass"),
        chapter=TF32_CORES, step=3,
    ),
    _cuda(
        name="wgmma-ws", old_number=18, precision=TF32, needs=_HOPPER,
        summary="Hopper: a producer warpgroup and two consumers, setmaxnreg, a persistent grid",
        doc="wgmma_ws", sources=_cu("wgmma_ws", "hopper.cuh", "prepass"),
        chapter=TF32_CORES, step=4,
    ),
    _cuda(
        name="wgmma-swap", old_number=22, precision=TF32, needs=_HOPPER,
        summary="Hopper without a pre-pass: C as Cᵀ = Bᵀ·Aᵀ, B gathered into registers, TMA rounds to TF32",
        doc="wgmma_swap", sources=_cu("wgmma_swap", "hopper.cuh", "prepass"),
        chapter=TF32_CORES, step=5,
    ),
    _cuda(
        name="mma-split", old_number=26, precision=TF32, needs=_SM80,
        summary="TF32 for little work or few tiles: mma.sync on 64×64 tiles, no pre-pass, split-K in a tree",
        doc="mma_split", sources=_cu("mma_split", "splitk.cuh"), chapter=TF32_CORES, step=6,
    ),
    Implementation(
        name="tf32", family=CUDA, old_number=27, precision=TF32, needs=_SM80,
        summary="TF32 at every shape: wgmma-swap where the output fills the GPU, mma-split below it, strict-FP32 "
        "short where the reduction is and thin or gemv where C is",
        doc=_md("tensor_dispatch"),
        sources=_built_with("wgmma-swap", "mma-split", also=_cu("short", "thin", "gemv")),
        launches=tensor_policy.tf32_launches(),
        chapter=TF32_CORES, step=7, variant_of="wgmma-swap",
    ),

    # 5 · FP32-accurate tensor cores
    Implementation(
        name="triton-tf32x3", family=TRITON, old_number=13, precision=FP32X3, needs=_SM80,
        summary="Triton on tensor cores, three TF32 products per FP32 product",
        doc="kernels/triton/matmul.md", sources=("kernels/triton/matmul.py",),
        factory=triton_matmul(rows=128, cols=128, red=32, group=8, warps=8, stages=3, precision="split3",
                              promote=True),
        chapter=FP32_CORES, step=1, variant_of="triton",
    ),
    Implementation(
        name="triton-presplit", family=TRITON, old_number=15, precision=FP32X3, needs=_SM80,
        summary="3xTF32 with each operand split once into TF32 planes before the product",
        doc="kernels/triton/presplit.md", sources=("kernels/triton/presplit.py", "kernels/triton/matmul.py"),
        factory=triton_presplit(rows=128, cols=128, red=32, group=8, warps=8, stages=3, transpose_b=True,
                                steps=1, promote=True),
        chapter=FP32_CORES, step=2,
    ),
    _cuda(
        name="wgmma-3xtf32", old_number=19, precision=FP32X3, needs=_HOPPER,
        summary="FP32-accurate on Hopper tensor cores: 3 TF32 wgmma products per step, promoted in FP32",
        doc="wgmma_3xtf32", sources=_cu("wgmma_3xtf32", "hopper.cuh", "prepass"),
        chapter=FP32_CORES, step=3,
    ),
    Implementation(
        name="3xtf32", family=CUDA, old_number=28, precision=FP32X3, needs=_SM80,
        summary="FP32-accurate at every shape: wgmma-3xtf32 where the output fills the GPU, strict-FP32 small below it, "
        "short where the reduction is and thin or gemv where C is",
        doc=_md("tensor_dispatch"),
        sources=_built_with("wgmma-3xtf32", "small", also=_cu("short", "thin", "gemv")),
        launches=tensor_policy.x3_launches(),
        chapter=FP32_CORES, step=4, variant_of="wgmma-3xtf32",
    ),

    # 6 · Other languages LeetGPU accepts (CuTe DSL, Mojo) or is asked for (TileLang): each rung's
    # source is one file in that format. Optional: without the toolchain they say which extra.
    Implementation(
        name="cute-tiled", family=CUTE, old_number=29, precision=FP32, needs=_ALWAYS,
        summary="CuTe DSL, strict FP32: 128×128 tiles staged through registers into shared memory, a tiled MMA "
        "of the universal FMA atom",
        doc="kernels/cute/tiled.md", sources=("kernels/cute/tiled.py",),
        factory=LanguageRung(CUTE, "kernels/cute/tiled.py"), chapter=LANGUAGES, step=1,
    ),
    Implementation(
        name="mojo-tiled", family=MOJO, old_number=30, precision=FP32, needs=_ALWAYS,
        summary="Mojo, strict FP32: 64×64 tiles in shared memory, 4×4 per thread as SIMD vectors, 16-byte loads",
        doc="kernels/mojo/tiled.md", sources=("kernels/mojo/tiled.mojo",),
        factory=LanguageRung(MOJO, "kernels/mojo/tiled.mojo"), chapter=LANGUAGES, step=2,
    ),
    Implementation(
        name="tilelang-gemm", family=TILELANG, old_number=31, precision=TF32, needs=_SM80,
        summary="TileLang: T.copy, T.Pipelined and T.gemm on 128×128 tiles; on float32 that is TF32 tensor cores",
        doc="kernels/tilelang/gemm.md", sources=("kernels/tilelang/gemm.py",),
        factory=LanguageRung(TILELANG, "kernels/tilelang/gemm.py"), chapter=LANGUAGES, step=3,
    ),

    # The baselines, unnumbered: what every figure is compared with.
    Implementation(
        name="torch", family=TORCH, old_number=12, precision=FP32, needs=_ALWAYS,
        summary="torch.matmul(A, B, out=C): cuBLAS SGEMM, TF32 off",
        doc="kernels/torch/matmul.md", sources=("kernels/torch/matmul.py",),
        factory=torch_fp32,
        chapter=BASELINES, step=1,
    ),
    Implementation(
        name="torch-tf32", family=TORCH, old_number=12, precision=TF32, needs=_ALWAYS,
        summary="torch.matmul with TF32 on: cuBLAS on the tensor cores, the tf32 yardstick",
        doc="kernels/torch/matmul.md", sources=("kernels/torch/matmul.py",),
        factory=torch_tf32,
        chapter=BASELINES, step=2, variant_of="torch",
    ),
)

REGISTRY: dict[str, Implementation] = {impl.name: impl for impl in IMPLEMENTATIONS}

#: The implementation every benchmark compares against.
BASELINE = "torch"
#: The yardstick of the `tf32` rungs, compared against when it is in the same run.
TF32_BASELINE = "torch-tf32"


#: Names that stand for the best implementation of a kind on the device at hand: the
#: first of each list that runs there. `accurate`: the fastest FP32-accurate (fp32x3)
#: rung, in the order the committed H200 records measured them (results/h200-*.json).
ALIASES: dict[str, tuple[str, ...]] = {"accurate": ("3xtf32", "triton-presplit")}


class UnknownImplementation(KeyError):
    def __str__(self) -> str:
        return (f"unknown implementation {self.args[0]!r}; known: {', '.join(REGISTRY)}, "
                f"and the alias{'es' if len(ALIASES) > 1 else ''} {', '.join(ALIASES)}")


def _device() -> torch.device | str:
    """Where aliases resolve: the GPU, or the type "cpu" where there is none (no torch needed)."""
    return runtime.default_device() if runtime.has_gpu() else "cpu"


def resolve(name: str) -> str:
    """An alias's implementation on this device (the last choice if none runs); a name as it is."""
    choices = ALIASES.get(name)
    if choices is None:
        return name
    return next((c for c in choices if REGISTRY[c].can_run_on(_device())[0]), choices[-1])


def aliases_of(name: str) -> list[str]:
    """The aliases that stand for this implementation here."""
    return [alias for alias in ALIASES if resolve(alias) == name]


def by_old_number() -> list[Implementation]:
    """Every implementation by its number before chapters, in reading order within one (the
    baselines share torch's): what old command lines number."""
    return sorted(IMPLEMENTATIONS, key=lambda impl: impl.old_number)


def reading_order() -> list[Implementation]:
    """Every implementation in the order a reader meets it: chapter by chapter (`CHAPTERS`), by
    step within one; the unnumbered baselines last. The table is written in this order
    (tests/test_chapters.py); sorting keeps it so for a rung added to it later (a test's)."""
    place = {c.key: i for i, c in enumerate(CHAPTERS)}
    return sorted(IMPLEMENTATIONS, key=lambda impl: (place[impl.chapter.key], impl.step))


def reading_place(name: str) -> tuple[int, str]:
    """Where `name` comes in `reading_order()`, for sorting rows of a record by step; a name this
    registry does not hold (an old record's) after every one it does."""
    place = _reading_places()
    return place.get(name, len(place)), name


@cache
def _reading_places() -> dict[str, int]:
    """Each implementation's index in `reading_order()`, worked out once (the registry does not change)."""
    return {impl.name: i for i, impl in enumerate(reading_order())}


def in_chapter(chapter: Chapter | str) -> list[Implementation]:
    """A chapter's implementations (by `Chapter` or key), by step."""
    key = chapter.key if isinstance(chapter, Chapter) else chapter
    if key not in CHAPTER:
        raise KeyError(f"no chapter {key!r}; chapters: {', '.join(CHAPTER)}")
    return [impl for impl in reading_order() if impl.chapter.key == key]


def variants_of(name: str) -> list[Implementation]:
    """The implementations that build `name`'s source again with other settings, by step."""
    return [impl for impl in reading_order() if impl.variant_of == name]


def by_ref(ref: str) -> Implementation:
    """The implementation a step reference names: "3.2" is chapter 3's second step. UnknownStep
    (a KeyError) when no step has that reference, saying what the chapter holds."""
    match = REF.fullmatch(ref) if ref.isascii() else None
    if match is None:
        raise UnknownStep(f"{ref!r} is not a step reference (chapter.step, e.g. 3.2)")
    number, step = int(match.group(1)), int(match.group(2))
    chapter = next((c for c in CHAPTERS if c.number == number), None)
    numbered = [c.number for c in CHAPTERS if c.number is not None]
    if chapter is None:
        raise UnknownStep(f"no chapter {number}; chapters are {numbered[0]}–{numbered[-1]}")
    steps = in_chapter(chapter)
    found = next((impl for impl in steps if impl.step == step), None)
    if found is None:
        raise UnknownStep(f"no step {number}.{step}; chapter {chapter.label} has steps "
                          f"{steps[0].ref}–{steps[-1].ref}")
    return found


def old_number_refs(number: int) -> list[str]:
    """What an old rung number stands for now: its implementations' references, or their names
    where they have none (the baselines), in reading order."""
    return [impl.step_label for impl in reading_order() if impl.old_number == number]


def get(name: str) -> Implementation:
    try:
        return REGISTRY[resolve(name)]
    except KeyError:
        raise UnknownImplementation(name) from None


def select(names: list[str] | None) -> list[Implementation]:
    return [get(n) for n in names] if names else list(IMPLEMENTATIONS)
