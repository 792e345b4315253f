"""The one registry of implementations: every rung of the ladder, in order.

The judge, the benchmark, the reports and the CLI all read `REGISTRY`. Adding
a rung is adding one `Implementation` here and its source files (a ``.cu``
kernel with a ``.md`` explanation beside it, or a Python module).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path

import torch

from . import problem
from .cuda import hopper
from .cuda.compiler import NoGPUError
from .cuda.needs import Needs
from .cuda.pad import PaddedOperands
from .cuda.requires import VEC4, Requires, whole_tiles
from .cuda.rung import CudaSolver, Launch
from .cuda.splitgrid import SplitGrid
from .cuda.transposed import TransposedA
from .reference import Precision
from .tune import default as tuned_default

PACKAGE_DIR = Path(__file__).resolve().parent
Solve = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, int, int, int], None]


class Family(StrEnum):
    CUDA = "cuda"
    TRITON = "triton"
    TORCH = "torch"


@dataclass(frozen=True)
class Implementation:
    name: str
    family: Family
    rung: int
    precision: Precision
    needs: Needs  # what the rung's own path needs of the GPU (its launches may need less)
    summary: str
    doc: str  # Markdown explanation, relative to the package
    sources: tuple[str, ...]  # relative to the package
    factory: Callable[[], Solve] | None = field(default=None, repr=False)
    launches: tuple[Launch, ...] = ()  # CUDA rungs: fast path(s) first, fallback last

    @property
    def min_cc(self) -> tuple[int, int]:
        """The lowest compute capability `needs` runs on (sm_90a's: that one alone)."""
        return self.needs.min_cc

    @property
    def tile(self) -> tuple[int, int, int] | None:
        """(rows, cols, reduction step) of C per block/program on the fast path, from its launch or config."""
        if self.launches and self.launches[0].step:
            return (*self.launches[0].tile, self.launches[0].step)
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

    def can_run_on(self, device: torch.device) -> tuple[bool, str]:
        """Whether this implementation runs on that device, and why not."""
        if self.family is Family.TRITON and importlib.util.find_spec("triton") is None:
            return False, "install gemmlab[triton]"
        if device.type == "cuda":
            cc = torch.cuda.get_device_capability(device)
            if not self.needs.runs_on(cc):
                return False, f"needs {self.needs.short}, the device is sm_{cc[0]}{cc[1]}"
            return True, ""
        if self.family is Family.CUDA:
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
        marks = [m for m in (getattr(launch.host, "label", ""), "fallback" if fallback else "") if m]
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
            if self.family is Family.CUDA and not torch.cuda.is_available():
                raise NoGPUError(f"{self.name}: {why}")
            raise problem.DeviceError("A", f"a device {self.name} runs on ({why})", a.device)
        self._solve(a, b, c, m, n, k)


#: (implementation, device type, device index) → `can_run_on`'s answer, for `solve`.
_RUNS_ON: dict[tuple[str, str, int | None], tuple[bool, str]] = {}


@dataclass(frozen=True, eq=False)
class TritonConfig:
    """Factory of a Triton solver: its class and configuration (which scripts/tune.py varies)."""

    module: str  # under gemmlab.kernels.triton
    cls: str
    config: dict

    @property
    def tile(self) -> tuple[int, int, int]:
        return self.config["rows"], self.config["cols"], self.config["red"]

    def __call__(self) -> Solve:
        import importlib

        module = importlib.import_module(f"{__package__}.kernels.triton.{self.module}")
        return getattr(module, self.cls)(**self.config)


def _triton(**config) -> TritonConfig:
    return TritonConfig("matmul", "TritonMatmul", config)


def _triton_presplit(**config) -> TritonConfig:
    return TritonConfig("presplit", "PreSplit", config)


def _torch() -> Solve:
    from .kernels.torch.matmul import solve

    return solve


def _torch_tf32() -> Solve:
    from .kernels.torch.matmul import solve_tf32

    return solve_tf32


# The scalar, bounds-checked 2D-tiled kernel: every later rung's fallback.
TILING2D = Launch("06_tiling2d.cu", "tiling2d", (128, 1), (64, 64), step=16, buffers=1)


def _vec4(source: str, entry: str, threads: int, size: int, bk: int, buffers: int, defines: dict,
          exact: bool) -> Launch:
    """A float4 kernel with a size×size tile: its whole-tile fast path (EXACT_TILES) or its checked one."""
    block, tile = (threads, 1), (size, size)
    if exact:
        return Launch(source, entry, block, tile, defines | {"EXACT_TILES": 1},
                      when=whole_tiles(size, bk, size), step=bk, buffers=buffers)
    return Launch(source, entry, block, tile, defines, when=VEC4, step=bk, buffers=buffers)


def float4_launch(bm: int, bk: int, unroll: int, min_blocks: int, exact: bool = False) -> Launch:
    # unroll / min_blocks: the occupancy knobs of 07_float4.cu, chosen on the H200
    # with scripts/tune.py among those that compile without spills.
    defines = {"BM": bm, "BK": bk, "UNROLL_K": unroll, "MIN_BLOCKS": min_blocks}
    return _vec4("07_float4.cu", "float4_tiled", (bm // 8) * (bm // 4), bm, bk, 1, defines, exact)


def double_buffer_launch(bm: int) -> Launch:
    return Launch("08_double_buffer.cu", "double_buffer", ((bm // 8) * (bm // 4), 1), (bm, bm),
                  {"BM": bm}, when=VEC4, step=16, buffers=2)


def _warptile(bk: int, min_blocks: int, exact: bool) -> Launch:
    # bk / min_blocks: the knobs of 11_warptile.cu, chosen on the H200 with scripts/tune_h200.sh
    # among settings that compile without spills under NVRTC 13.0 and 13.5.
    return _vec4("11_warptile.cu", "warptile", 256, 128, bk, 2, {"BK": bk, "MIN_BLOCKS": min_blocks}, exact)


def _padded(launch: Launch) -> Launch:
    """The same kernel on any shape: operands copied into 16-byte rows, C copied back."""
    return dataclasses.replace(launch, when=None, host=PaddedOperands())


def _mma_tf32(vec: int, stages: int = 3) -> Launch:
    defines = {"VEC": vec, "STAGES": stages}
    if vec == 4:
        return Launch("12_mma_tf32.cu", "mma_tf32", (256, 1), (128, 128), defines, when=VEC4,
                      needs=Needs.SM80, smem=_mma_smem, step=32)
    # VEC 1 (any shape, 4-byte copies) is still mma.sync fed by cp.async: sm_80's too.
    return Launch("12_mma_tf32.cu", "mma_tf32", (256, 1), (128, 128), defines, needs=Needs.SM80,
                  smem=_mma_smem, step=32)


def _mma_smem(defines) -> int:
    """Per stage A 128×(32+4) and B 32×(128+8) floats: the padded layout of 12_mma_tf32.cu."""
    return defines["STAGES"] * (128 * 36 + 32 * 136) * 4


_HOPPER_TILE = (128, 256)


def _wgmma_tma(stages: int = 4) -> Launch:
    return Launch("13_wgmma_tma.cu", "wgmma_tma", (256, 1), _HOPPER_TILE, {"STAGES": stages},
                  needs=Needs.SM90A, smem=hopper.dynamic_smem(_HOPPER_TILE, 2), step=hopper.STEP,
                  host=hopper.TmaOperands(a="round"))


def _warp_specialised(source: str, tile: tuple[int, int], defines: dict, b: str,
                      a_in_place: bool) -> Launch:
    """A persistent producer/consumer wgmma kernel (384 threads): A read by TMA where it lies,
    or from the padded copy its pre-pass makes (rounded for TF32, as it is for 3xTF32, which
    splits A itself). ``b``: Bᵀ rounded, or split into the 3xTF32 planes."""
    entry = source.removesuffix(".cu").split("_", 1)[1]
    common = dict(needs=Needs.SM90A, persistent=True, step=hopper.STEP,
                  smem=hopper.dynamic_smem(tile, 2, b_planes=2 if b == "split" else 1))
    if a_in_place:
        # TMA reads A in place: its rows must be describable (16-byte aligned, N % 4 == 0).
        return Launch(source, entry, (384, 1), tile, defines, when=hopper.A_IN_PLACE,
                      host=hopper.TmaOperands(a="in place", b=b), **common)
    copy = "pad" if b == "split" else "round"
    return Launch(source, entry, (384, 1), tile, defines, host=hopper.TmaOperands(a=copy, b=b), **common)


def _wgmma_ws(stages: int = 4, a_in_place: bool = True) -> Launch:
    defines = {"STAGES": stages, "A_FROM_REGS": 1, "INFLIGHT": 0, "CLUSTER": 2}
    return _warp_specialised("14_wgmma_ws.cu", _HOPPER_TILE, defines, "round", a_in_place)


def _wgmma_3xtf32(stages: int = 4, a_in_place: bool = True) -> Launch:
    # A 128×128 tile: with Bᵀ's two planes a stage is 48 KB, so the pipeline stays 4 deep.
    return _warp_specialised("15_wgmma_3xtf32.cu", (128, 128), {"STAGES": stages}, "split", a_in_place)


def _wgmma_swap(stages: int = 4, cluster: int = 2, pipe: int = 2) -> tuple[Launch, Launch]:
    """A and B read where they lie (no pre-pass) where TMA can describe their rows, else padded copies."""
    tile = (256, 128)
    fast = Launch("17_wgmma_swap.cu", "wgmma_swap", (384, 1), tile,
                  {"STAGES": stages, "CLUSTER": cluster, "PIPE": pipe},
                  # hopper.A_IN_PLACE and B_IN_PLACE at once (a launch declares one Requires)
                  when=Requires(n=4, k=4, align=16, operands="AB"), needs=Needs.SM90A, persistent=True,
                  step=hopper.STEP, smem=hopper.dynamic_smem(tile, 2), host=hopper.SwappedOperands())
    return fast, dataclasses.replace(fast, when=None, host=hopper.SwappedOperands(padded=True))


def _bigtile_smem(d) -> int:
    """STAGES copies of the A (64·WARPS_M × BK) and B (BK × 64·WARPS_N) tiles, unpadded; with
    TMA_COPY, an 8-byte mbarrier per stage after them and 128 bytes to align the stages."""
    tiles = d["STAGES"] * 64 * (d["WARPS_M"] + d["WARPS_N"]) * d["BK"] * 4
    return tiles + (d["STAGES"] * 8 + 128 if d.get("TMA_COPY") else 0)


def _bigtile_derive(d) -> dict:
    """A warp per 64×64 block of C, WARPS_M × WARPS_N of them per block; A_T: Aᵀ by a pre-pass,
    PAD_B: B's padded copy too (any shape). The 16-byte path without PAD_B needs K % 4 == 0 and
    aligned rows: of B and C with Aᵀ (ours, aligned), of A too without."""
    if d.get("PAD_B") and not d.get("A_T"):
        raise ValueError("bigtile: PAD_B needs A_T (the Aᵀ host is the one that pads B)")
    if d.get("SPLIT") and not d.get("A_T"):
        raise ValueError("bigtile: SPLIT needs A_T (the Aᵀ host is the one that splits)")
    host = TransposedA(pad_b=bool(d.get("PAD_B")), split=bool(d.get("SPLIT"))) if d.get("A_T") else None
    if d.get("PAD_B") or d.get("VEC") == 1:
        when = None
    else:
        when = Requires(k=4, align=16, operands="BC") if d.get("A_T") else VEC4
    if d.get("TMA_COPY") and not d.get("A_T"):
        raise ValueError("bigtile: TMA_COPY needs A_T (the Aᵀ host is the one that encodes the descriptors)")
    return {"block": (32 * d["WARPS_M"] * d["WARPS_N"], 1), "tile": (64 * d["WARPS_M"], 64 * d["WARPS_N"]),
            "step": d["BK"], "host": host, "when": when,
            # TMA_COPY: cp.async.bulk.tensor and mbarriers, sm_90's; else cp.async, sm_80's
            "needs": Needs.SM90 if d.get("TMA_COPY") else Needs.SM80}


def _bigtile(pad_b: bool, j_outer: int = 2, warps_m: int = 2, warps_n: int = 2, bk: int = 16,
             stages: int = 4, min_blocks: int = 2, split: bool = False, fetch_ba: bool = False,
             tma: bool = False) -> Launch:
    """bigtile reading Aᵀ (a pre-pass) and B by 16-byte copies: B as it lies where K % 4 == 0 and
    B and C are aligned, else B's padded copy (a second pre-pass), for any shape."""
    # J_OUTER 2 (the FMAs of one index column by column, down then up) was chosen on the H200
    # (scripts/tune.py, 2026-11-30); `gemmlab tune bigtile` searches the rest.
    defines = {"WARPS_M": warps_m, "WARPS_N": warps_n, "BK": bk, "STAGES": stages,
               "MIN_BLOCKS": min_blocks, "VEC": 4, "A_T": 1, "J_OUTER": j_outer, "PAD_B": int(pad_b)}
    if split:  # only then: SPLIT 0 is the macro's default, and bigtile's launches keep their cubins
        defines["SPLIT"] = 1
    if fetch_ba:  # likewise: B's fragments loaded before A's (16_bigtile.md), a tuned knob
        defines["FETCH_BA"] = 1
    if tma:  # likewise: both tiles by TMA on per-stage mbarriers (16_bigtile_tma.md)
        defines["TMA_COPY"] = 1
    return Launch("16_bigtile.cu", "bigtile", smem=_bigtile_smem, derive=_bigtile_derive,
                  defines=defines, **_bigtile_derive(defines))


#: The `small` kernel's 16-byte path: rows of A and B whole float4s, A and B aligned (C is
#: stored 16 bytes at a time only where its rows allow it).
SMALL_VEC4 = Requires(n=4, k=4, align=16, operands="AB")


def _small_derive(d) -> dict:
    """4×4 outputs per thread of a BM×BN tile in STAGES shared stages (rows padded by 4 floats);
    VEC 4 needs SMALL_VEC4, VEC 1 any shape. cp.async: sm_80's."""
    return {"block": ((d["BM"] // 4) * (d["BN"] // 4), 1), "tile": (d["BM"], d["BN"]), "step": d["BK"],
            "when": SMALL_VEC4 if d["VEC"] == 4 else None, "buffers": d["STAGES"], "pad": 4,
            "needs": Needs.SM80}


def small_launch(vec: int, bm: int = 32, bn: int = 64, bk: int = 16, stages: int = 4, chains: int = 2,
                 min_blocks: int = 3) -> Launch:
    """The `small` kernel (18_small.cu): A and B in place, split-K over grid z (cuda/splitgrid.py)."""
    defines = {"BM": bm, "BN": bn, "BK": bk, "STAGES": stages, "CHAINS": chains, "VEC": vec,
               "MIN_BLOCKS": min_blocks}
    return Launch("18_small.cu", "small", defines=defines, host=SplitGrid(), derive=_small_derive,
                  **_small_derive(defines))


def _cu(stem: str) -> tuple[str, ...]:
    return (f"kernels/cuda/{stem}.cu",)


def _md(stem: str) -> str:
    return f"kernels/cuda/{stem}.md"


FP32, TF32, FP32X3 = Precision.FP32, Precision.TF32, Precision.FP32X3
CUDA, TRITON, TORCH = Family.CUDA, Family.TRITON, Family.TORCH
_ALWAYS, _SM80, _SM90, _HOPPER = Needs.ANY, Needs.SM80, Needs.SM90, Needs.SM90A

IMPLEMENTATIONS: tuple[Implementation, ...] = (
    Implementation(
        "naive", CUDA, 1, FP32, _ALWAYS,
        "one thread per output, dot product straight from global memory",
        _md("01_naive"), _cu("01_naive"),
        launches=(Launch("01_naive.cu", "naive", (16, 16), (16, 16)),),
    ),
    Implementation(
        "naive-fma", CUDA, 2, FP32, _ALWAYS,
        "the naive kernel accumulating with fmaf",
        _md("02_naive_fma"), _cu("02_naive_fma"),
        launches=(Launch("02_naive_fma.cu", "naive_fma", (16, 16), (16, 16)),),
    ),
    Implementation(
        "smem-16", CUDA, 3, FP32, _ALWAYS,
        "16×16 tiles of A and B staged in shared memory",
        _md("03_smem16"), _cu("03_smem16"),
        launches=(
            Launch("03_smem16.cu", "smem16", (16, 16), (16, 16), {"EXACT_TILES": 1},
                   when=whole_tiles(16, 16, 16), step=16, buffers=1),
            Launch("03_smem16.cu", "smem16", (16, 16), (16, 16), step=16, buffers=1),
        ),
    ),
    Implementation(
        "row-4", CUDA, 4, FP32, _ALWAYS,
        "16×64 tile, four outputs per thread along a row",
        _md("04_row4"), _cu("04_row4"),
        launches=(Launch("04_row4.cu", "row4", (16, 16), (16, 64), step=16, buffers=1),),
    ),
    Implementation(
        "tiling-1d", CUDA, 5, FP32, _ALWAYS,
        "64×64 block tile, 16 outputs per thread down a column",
        _md("05_tiling1d"), _cu("05_tiling1d"),
        launches=(Launch("05_tiling1d.cu", "tiling1d", (64, 4), (64, 64), step=16, buffers=1),),
    ),
    Implementation(
        "tiling-2d", CUDA, 6, FP32, _ALWAYS,
        "64×64 block tile, an 8×4 register micro-tile per thread",
        _md("06_tiling2d"), _cu("06_tiling2d"),
        launches=(TILING2D,),
    ),
    Implementation(
        "float4", CUDA, 7, FP32, _ALWAYS,
        "2D tiling with 16-byte loads and stores, BK=32",
        _md("07_float4"), _cu("07_float4"),
        launches=(float4_launch(64, 32, 32, 2, exact=True), float4_launch(64, 32, 32, 2), TILING2D),
    ),
    Implementation(
        "float4-bk16", CUDA, 7, FP32, _ALWAYS,
        "control: float4 with BK=16",
        _md("07_float4"), _cu("07_float4"),
        launches=(float4_launch(64, 16, 16, 5, exact=True), float4_launch(64, 16, 2, 6), TILING2D),
    ),
    Implementation(
        "float4-128", CUDA, 7, FP32, _ALWAYS,
        "control: float4 with a 128×128 tile, BK=16, 512 threads",
        _md("07_float4"), _cu("07_float4"),
        launches=(float4_launch(128, 16, 16, 1, exact=True), float4_launch(128, 16, 16, 1), TILING2D),
    ),
    Implementation(
        "double-buffer-64", CUDA, 8, FP32, _ALWAYS,
        "register prefetch + two shared buffers, 64×64 tile",
        _md("08_double_buffer"), _cu("08_double_buffer"),
        launches=(double_buffer_launch(64), TILING2D),
    ),
    Implementation(
        "double-buffer-128", CUDA, 8, FP32, _ALWAYS,
        "register prefetch + two shared buffers, 128×128 tile",
        _md("08_double_buffer"), _cu("08_double_buffer"),
        launches=(double_buffer_launch(128), TILING2D),
    ),
    Implementation(
        "cp-async", CUDA, 9, FP32, _ALWAYS,
        "the copy engine moves tiles global→shared (cp.async), 128×128",
        _md("09_cp_async"), _cu("09_cp_async"),
        launches=(
            Launch("09_cp_async.cu", "cp_async", (512, 1), (128, 128), when=VEC4, needs=_SM80,
                   step=16, buffers=2),
            TILING2D,
        ),
    ),
    Implementation(
        "wmma-tf32", CUDA, 10, TF32, _ALWAYS,
        "tensor cores through WMMA, inputs rounded to TF32",
        _md("10_wmma_tf32"), _cu("10_wmma_tf32"),
        launches=(
            Launch("10_wmma_tf32.cu", "wmma_tf32", (512, 1), (128, 128),
                   when=Requires(m=128, n=32, k=128, align=32), needs=_SM80, step=32, buffers=1, pad=4),
            float4_launch(64, 32, 32, 2),
            TILING2D,
        ),
    ),
    Implementation(
        "triton", TRITON, 11, FP32, _ALWAYS,  # Triton refuses GPUs it does not support itself
        "one program per 64×64 tile, grouped order, IEEE FP32 dot, masks",
        "kernels/triton/matmul.md", ("kernels/triton/matmul.py",),
        _triton(rows=64, cols=64, red=32, group=8, warps=4, stages=3, precision="ieee"),
    ),
    Implementation(
        "torch", TORCH, 12, FP32, _ALWAYS,
        "torch.matmul(A, B, out=C): cuBLAS SGEMM, TF32 off",
        "kernels/torch/matmul.md", ("kernels/torch/matmul.py",),
        _torch,
    ),
    Implementation(
        "triton-tf32x3", TRITON, 13, FP32X3, _SM80,
        "Triton on tensor cores, three TF32 products per FP32 product",
        "kernels/triton/matmul.md", ("kernels/triton/matmul.py",),
        _triton(rows=128, cols=128, red=32, group=8, warps=8, stages=3, precision="split3",
                promote=True),
    ),
    Implementation(
        "warptile", CUDA, 14, FP32, _ALWAYS,
        "strict FP32 past the notes: A transposed in shared memory, warp tiles, 8×8 per thread",
        _md("11_warptile"), _cu("11_warptile"),
        launches=(_warptile(16, 2, exact=True), _warptile(8, 2, exact=False),
                  _padded(_warptile(8, 2, exact=False))),
    ),
    Implementation(
        "triton-presplit", TRITON, 15, FP32X3, _SM80,
        "3xTF32 with each operand split once into TF32 planes before the product",
        "kernels/triton/presplit.md", ("kernels/triton/presplit.py", "kernels/triton/matmul.py"),
        _triton_presplit(rows=128, cols=128, red=32, group=8, warps=8, stages=3, transpose_b=True,
                         steps=1, promote=True),
    ),
    Implementation(
        "torch-tf32", TORCH, 12, TF32, _ALWAYS,
        "torch.matmul with TF32 on: cuBLAS on the tensor cores, the tf32 yardstick",
        "kernels/torch/matmul.md", ("kernels/torch/matmul.py",),
        _torch_tf32,
    ),
    Implementation(
        "mma-tf32", CUDA, 16, TF32, _SM80,
        "tensor cores through mma.sync m16n8k8, fed by a 3-stage cp.async pipeline",
        _md("12_mma_tf32"), _cu("12_mma_tf32"),
        launches=(_mma_tf32(4), _mma_tf32(1)),
    ),
    Implementation(
        "wgmma-tma", CUDA, 17, TF32, _HOPPER,
        "Hopper: TMA copies tiles, an mbarrier pipeline, wgmma reads shared memory",
        _md("13_wgmma_tma"), ("kernels/cuda/13_wgmma_tma.cu", "kernels/cuda/hopper.cuh",
                              "kernels/cuda/hopper_prepass.cu"),
        launches=(_wgmma_tma(),),
    ),
    Implementation(
        "wgmma-ws", CUDA, 18, TF32, _HOPPER,
        "Hopper: a producer warpgroup and two consumers, setmaxnreg, a persistent grid",
        _md("14_wgmma_ws"), ("kernels/cuda/14_wgmma_ws.cu", "kernels/cuda/hopper.cuh",
                             "kernels/cuda/hopper_prepass.cu"),
        launches=(_wgmma_ws(a_in_place=True), _wgmma_ws(a_in_place=False)),
    ),
    Implementation(
        "wgmma-3xtf32", CUDA, 19, FP32X3, _HOPPER,
        "FP32-accurate on Hopper tensor cores: 3 TF32 wgmma products per step, promoted in FP32",
        _md("15_wgmma_3xtf32"), ("kernels/cuda/15_wgmma_3xtf32.cu", "kernels/cuda/hopper.cuh",
                                 "kernels/cuda/hopper_prepass.cu"),
        launches=(_wgmma_3xtf32(a_in_place=True), _wgmma_3xtf32(a_in_place=False)),
    ),
    Implementation(
        "bigtile", CUDA, 20, FP32, _SM80,
        "strict FP32: 8×16 outputs per thread, Aᵀ and B by a 4-stage cp.async pipeline",
        _md("16_bigtile"), ("kernels/cuda/16_bigtile.cu", "kernels/cuda/hopper_prepass.cu", "kernels/cuda/pad.cu"),
        launches=(_bigtile(pad_b=False), _bigtile(pad_b=True)),
    ),
    Implementation(
        "splitk", CUDA, 21, FP32, _SM80,
        "strict FP32: bigtile with each tile's reduction split where its tiles leave SMs idle, any N",
        _md("16_bigtile_splitk"), ("kernels/cuda/16_bigtile.cu", "kernels/cuda/splitk.cuh",
                                   "kernels/cuda/hopper_prepass.cu", "kernels/cuda/pad.cu"),
        launches=(_bigtile(pad_b=False, bk=8, stages=3, split=True), _bigtile(pad_b=True, bk=8, stages=3, split=True)),
    ),
    Implementation(
        "wgmma-swap", CUDA, 22, TF32, _HOPPER,
        "Hopper without a pre-pass: C as Cᵀ = Bᵀ·Aᵀ, B gathered into registers, TMA rounds to TF32",
        _md("17_wgmma_swap"), ("kernels/cuda/17_wgmma_swap.cu", "kernels/cuda/hopper.cuh",
                               "kernels/cuda/hopper_prepass.cu"),
        launches=_wgmma_swap(),
    ),
    Implementation(
        "tma", CUDA, 23, FP32, _SM90,
        "strict FP32: splitk's kernel with both tiles by TMA on per-stage mbarriers, one thread issuing",
        _md("16_bigtile_tma"), ("kernels/cuda/16_bigtile.cu", "kernels/cuda/splitk.cuh", "kernels/cuda/hopper.cuh",
                                "kernels/cuda/hopper_prepass.cu", "kernels/cuda/pad.cu"),
        launches=(_bigtile(pad_b=False, bk=16, stages=3, split=True, fetch_ba=True, tma=True),
                  _bigtile(pad_b=True, bk=16, stages=3, split=True, fetch_ba=True, tma=True)),
    ),
    Implementation(
        "small", CUDA, 24, FP32, _SM80,
        "strict FP32 for little work: one launch, no pre-pass, 32×64 tiles, cp.async stages, split-K in a tree",
        _md("18_small"), ("kernels/cuda/18_small.cu", "kernels/cuda/splitk.cuh"),
        launches=(small_launch(4), small_launch(1)),
    ),
)

# `default`: per shape class, the winner of the GPU's tune record, after every rung (gemmlab.tune.default).
IMPLEMENTATIONS += (tuned_default.implementation(IMPLEMENTATIONS),)

REGISTRY: dict[str, Implementation] = {impl.name: impl for impl in IMPLEMENTATIONS}

#: The implementation every benchmark compares against.
BASELINE = "torch"
#: The yardstick of the `tf32` rungs, compared against when it is in the same run.
TF32_BASELINE = "torch-tf32"


#: Names that stand for the best implementation of a kind on the device at hand: the
#: first of each list that runs there. `accurate`: the fastest FP32-accurate (fp32x3)
#: rung, in the order the committed H200 records measured them (results/h200-*.json).
ALIASES: dict[str, tuple[str, ...]] = {"accurate": ("wgmma-3xtf32", "triton-presplit")}


class UnknownImplementation(KeyError):
    def __str__(self) -> str:
        return (f"unknown implementation {self.args[0]!r}; known: {', '.join(REGISTRY)}, "
                f"and the alias{'es' if len(ALIASES) > 1 else ''} {', '.join(ALIASES)}")


def _device() -> torch.device:
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def resolve(name: str) -> str:
    """An alias's implementation on this device (the last choice if none runs); a name as it is."""
    choices = ALIASES.get(name)
    if choices is None:
        return name
    return next((c for c in choices if REGISTRY[c].can_run_on(_device())[0]), choices[-1])


def aliases_of(name: str) -> list[str]:
    """The aliases that stand for this implementation here."""
    return [alias for alias in ALIASES if resolve(alias) == name]


def by_rung() -> list[Implementation]:
    """Every implementation in ladder order: by rung number, registry order within one (the
    baselines share torch's rung, and the registry lists torch-tf32 beside the TF32 rungs)."""
    return sorted(IMPLEMENTATIONS, key=lambda impl: impl.rung)


def get(name: str) -> Implementation:
    try:
        return REGISTRY[resolve(name)]
    except KeyError:
        raise UnknownImplementation(name) from None


def select(names: list[str] | None) -> list[Implementation]:
    return [get(n) for n in names] if names else list(IMPLEMENTATIONS)
