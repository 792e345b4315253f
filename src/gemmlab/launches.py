"""Every CUDA rung's launches (`RUNGS`, fast path first, fallback last) and the builders that make
them from their knobs, which the registry, the tuner's spaces and `default` share: a launch is
declared once, here. Tune records name a launch by its `name` (unique within its rung), never
by position, so reordering a rung cannot change what a record means.
"""

from __future__ import annotations

import dataclasses

from .cuda import hopper
from .cuda.dispatch import Launch
from .cuda.handoff import SplitGrid
from .cuda.needs import VEC4, Needs, When, all_of, whole_tiles
from .cuda.pad import PaddedOperands
from .cuda.transposed import TransposedA

# The scalar, bounds-checked 2D-tiled kernel: every later rung's fallback.
TILING2D = Launch("tiling2d.cu", "tiling2d", (128, 1), (64, 64), depth=16, buffers=1, name="any")


def _vec4(source: str, entry: str, threads: int, size: int, bk: int, buffers: int, defines: dict,
          exact: bool) -> Launch:
    """A float4 kernel with a size×size tile: its whole-tile fast path (EXACT_TILES) or its checked one."""
    block, tile = (threads, 1), (size, size)
    if exact:
        return Launch(source, entry, block, tile, defines | {"EXACT_TILES": 1},
                      when=whole_tiles(size, bk, size), depth=bk, buffers=buffers, name="whole-tiles")
    return Launch(source, entry, block, tile, defines, when=VEC4, depth=bk, buffers=buffers, name="vec4")


def float4_launch(bm: int, bk: int, unroll: int, min_blocks: int, exact: bool = False) -> Launch:
    # unroll / min_blocks: occupancy knobs, tuned among builds without spills (float4.md)
    defines = {"BM": bm, "BK": bk, "UNROLL_K": unroll, "MIN_BLOCKS": min_blocks}
    return _vec4("float4.cu", "float4_tiled", (bm // 8) * (bm // 4), bm, bk, 1, defines, exact)


def double_buffer_launch(bm: int) -> Launch:
    return Launch("double_buffer.cu", "double_buffer", ((bm // 8) * (bm // 4), 1), (bm, bm),
                  {"BM": bm}, when=VEC4, depth=16, buffers=2, name="vec4")


def warptile_launch(bk: int, min_blocks: int, exact: bool) -> Launch:
    # bk / min_blocks: tuned among builds without spills under NVRTC 13.0 and 13.5 (warptile.md)
    return _vec4("warptile.cu", "warptile", 256, 128, bk, 2, {"BK": bk, "MIN_BLOCKS": min_blocks}, exact)


def padded(launch: Launch) -> Launch:
    """The same kernel on any shape: operands copied into 16-byte rows, C copied back."""
    return dataclasses.replace(launch, when=None, host=PaddedOperands(), name="padded")


def _mma_smem(defines) -> int:
    """Per stage A 128×(32+4) and B 32×(128+8) floats: the padded layout of mma_tf32.cu."""
    return defines["STAGES"] * (128 * 36 + 32 * 136) * 4


def mma_tf32_launch(vec: int, stages: int = 3) -> Launch:
    defines = {"VEC": vec, "STAGES": stages}
    if vec == 4:
        return Launch("mma_tf32.cu", "mma_tf32", (256, 1), (128, 128), defines, when=VEC4,
                      needs=Needs.SM80, smem=_mma_smem, depth=32, name="vec4")
    # VEC 1 (any shape, 4-byte copies) is still mma.sync fed by cp.async: sm_80's too.
    return Launch("mma_tf32.cu", "mma_tf32", (256, 1), (128, 128), defines, needs=Needs.SM80,
                  smem=_mma_smem, depth=32, name="any")


_HOPPER_TILE = (128, 256)


def wgmma_tma_launch(stages: int = 4) -> Launch:
    return Launch("wgmma_tma.cu", "wgmma_tma", (256, 1), _HOPPER_TILE, {"STAGES": stages},
                  needs=Needs.SM90A, smem=hopper.dynamic_smem(_HOPPER_TILE, 2), depth=hopper.DEPTH,
                  host=hopper.TmaOperands(a="round"), name="any")


def _warp_specialised(source: str, entry: str, tile: tuple[int, int], defines: dict, b: str,
                      a_in_place: bool) -> Launch:
    """A persistent producer/consumer wgmma kernel: A read by TMA where it lies, else from its
    pre-pass's padded copy (rounded for TF32; 3xTF32 splits A itself). ``b``: Bᵀ "round" or "split"."""
    common = dict(needs=Needs.SM90A, persistent=True, depth=hopper.DEPTH,
                  smem=hopper.dynamic_smem(tile, 2, b_planes=2 if b == "split" else 1))
    if a_in_place:
        # TMA reads A in place: its rows must be describable (16-byte aligned, N % 4 == 0).
        return Launch(source, entry, (384, 1), tile, defines, when=hopper.A_IN_PLACE,
                      host=hopper.TmaOperands(a="in place", b=b), name="a-in-place", **common)
    copy = "pad" if b == "split" else "round"
    return Launch(source, entry, (384, 1), tile, defines, host=hopper.TmaOperands(a=copy, b=b),
                  name="a-copied", **common)


def wgmma_ws_launch(stages: int = 4, a_in_place: bool = True) -> Launch:
    defines = {"STAGES": stages, "A_FROM_REGS": 1, "INFLIGHT": 0, "CLUSTER": 2}
    return _warp_specialised("wgmma_ws.cu", "wgmma_ws", _HOPPER_TILE, defines, "round", a_in_place)


def wgmma_3xtf32_launch(stages: int = 4, a_in_place: bool = True) -> Launch:
    # A 128×128 tile: with Bᵀ's two planes a stage is 48 KB, so the pipeline stays 4 deep.
    return _warp_specialised("wgmma_3xtf32.cu", "wgmma_3xtf32", (128, 128), {"STAGES": stages}, "split",
                             a_in_place)


def wgmma_3xtf32_split_launches() -> tuple[Launch, Launch]:
    """wgmma-3xtf32's launches with split-K on the persistent grid (SPLIT 1), named "split-…";
    `3xtf32` runs them where they split in one wave (experiments/README.md#3x-split)."""
    return tuple(dataclasses.replace(x.with_defines({"SPLIT": 1}), when=x.when, name=f"split-{x.name}",
                                     host=dataclasses.replace(x.host, split=True))
                 for x in RUNGS["wgmma-3xtf32"])


def wgmma_swap_launches(stages: int = 4, cluster: int = 2, pipe: int = 2) -> tuple[Launch, Launch]:
    """A and B read where they lie (no pre-pass) where TMA can describe their rows, else padded copies."""
    tile = (256, 128)
    fast = Launch("wgmma_swap.cu", "wgmma_swap", (384, 1), tile,
                  {"STAGES": stages, "CLUSTER": cluster, "PIPE": pipe},
                  # hopper.A_IN_PLACE and B_IN_PLACE at once (a launch declares one When)
                  when=When(n=4, k=4, align=16, operands="AB"), needs=Needs.SM90A, persistent=True,
                  depth=hopper.DEPTH, smem=hopper.dynamic_smem(tile, 2), host=hopper.SwappedOperands(),
                  name="in-place")
    return fast, dataclasses.replace(fast, when=None, host=hopper.SwappedOperands(padded=True), name="padded")


def wgmma_swap_split_launches() -> tuple[Launch, Launch]:
    """wgmma-swap's launches with split-K on the persistent grid (SPLIT 1), named "split-…";
    `tf32` runs them where they split in one wave (experiments/README.md#swap-split)."""
    return tuple(dataclasses.replace(x.with_defines({"SPLIT": 1}), when=x.when, name=f"split-{x.name}",
                                     host=dataclasses.replace(x.host, split=True))
                 for x in wgmma_swap_launches())


def _bigtile_smem(d) -> int:
    """STAGES copies of the A (64·WARPS_M × BK) and B (BK × 64·WARPS_N) tiles, unpadded; with
    TMA_COPY, an 8-byte mbarrier per stage after them and 128 bytes to align the stages."""
    tiles = d["STAGES"] * 64 * (d["WARPS_M"] + d["WARPS_N"]) * d["BK"] * 4
    return tiles + (d["STAGES"] * 8 + 128 if d.get("TMA_COPY") else 0)


def bigtile_derive(d) -> dict:
    """A warp per 64×64 block of C, WARPS_M × WARPS_N of them per block; A as Aᵀ by a pre-pass
    (A_T 1, J_OUTER 2: what the kernel builds; the arms that lost are experiments/bigtile-arms),
    PAD_B: B's padded copy too (any shape). The 16-byte path without PAD_B needs K % 4 == 0 and
    aligned rows of B and C (Aᵀ is ours, aligned)."""
    if d.get("A_T") != 1 or d.get("J_OUTER") != 2:
        raise ValueError(f"bigtile builds A_T 1 and J_OUTER 2 only, not {d.get('A_T')} and {d.get('J_OUTER')} "
                         "(the others: experiments/bigtile-arms/arms.patch)")
    if d.get("SPLIT", 0) not in (0, 1, 2):
        raise ValueError("bigtile: SPLIT is 0, 1 (every tile in as many parts) or 2 (a line of blocks)")
    host = TransposedA(pad_b=bool(d.get("PAD_B")), split=bool(d.get("SPLIT")), tail=d.get("SPLIT") == 2)
    when = None if d.get("PAD_B") or d.get("VEC") == 1 else When(k=4, align=16, operands="BC")
    return {"block": (32 * d["WARPS_M"] * d["WARPS_N"], 1), "tile": (64 * d["WARPS_M"], 64 * d["WARPS_N"]),
            "depth": d["BK"], "host": host, "when": when,
            # TMA_COPY: cp.async.bulk.tensor and mbarriers, sm_90's; else cp.async, sm_80's
            "needs": Needs.SM90 if d.get("TMA_COPY") else Needs.SM80}


def bigtile_launch(pad_b: bool, j_outer: int = 2, warps_m: int = 2, warps_n: int = 2, bk: int = 16,
                   stages: int = 4, min_blocks: int = 2, split: bool = False, fetch_ba: bool = False,
                   tma: bool = False, vec: int = 4) -> Launch:
    """bigtile reading Aᵀ (a pre-pass) and B by 16-byte copies: B as it lies where K % 4 == 0 and
    B and C are aligned ("b-in-place"), else B's padded copy, a second pre-pass, for any shape
    ("b-padded"); with `vec` 1, B as it lies by 4-byte copies, any shape ("b-scalar")."""
    if vec == 1 and (pad_b or tma):
        raise ValueError("bigtile: 4-byte copies of B read it as it lies, by cp.async (no PAD_B, no TMA_COPY)")
    # J_OUTER 2: the FMAs of one index column by column, down then up (bigtile.md).
    defines = {"WARPS_M": warps_m, "WARPS_N": warps_n, "BK": bk, "STAGES": stages,
               "MIN_BLOCKS": min_blocks, "VEC": vec, "A_T": 1, "J_OUTER": j_outer, "PAD_B": int(pad_b)}
    if split:  # only then: SPLIT 0 is the macro's default, and bigtile's launches keep their cubins
        defines["SPLIT"] = 1
    if fetch_ba:  # likewise: B's fragments loaded before A's (bigtile.md), a tuned knob
        defines["FETCH_BA"] = 1
    if tma:  # likewise: both tiles by TMA on per-stage mbarriers (bigtile_tma.md)
        defines["TMA_COPY"] = 1
    name = "b-scalar" if vec == 1 else "b-padded" if pad_b else "b-in-place"
    return Launch("bigtile.cu", "bigtile", smem=_bigtile_smem, derive=bigtile_derive,
                  defines=defines, name=name, **bigtile_derive(defines))


def bigtile_knobs(d) -> dict:
    """The arguments of `bigtile_launch` that rebuild a launch of defines `d`, but `pad_b` and `vec`."""
    if d.get("SPLIT") == 2:  # bigtile_launch builds SPLIT 0 or 1: a twin of it would lose the line
        raise ValueError("bigtile: a tail twin (SPLIT 2) is made by tail_twin, not rebuilt from its knobs")
    return {"j_outer": d["J_OUTER"], "warps_m": d["WARPS_M"], "warps_n": d["WARPS_N"], "bk": d["BK"],
            "stages": d["STAGES"], "min_blocks": d["MIN_BLOCKS"], "split": bool(d.get("SPLIT")),
            "fetch_ba": bool(d.get("FETCH_BA")), "tma": bool(d.get("TMA_COPY"))}


#: Blocks of one warp an SM for `tma-warp`: as many as fit an SM's shared memory at 3 stages of
#: BK 16, so as many warps as two 128×128 blocks (bigtile_warp.md).
TMA_WARP_BLOCKS = 8


def tma_warp_launch(pad_b: bool, bk: int = 16, stages: int = 3, fetch_ba: bool = True) -> Launch:
    """tma's kernel in blocks of one warp: a 64×64 tile (WARPS_M = WARPS_N = 1), TMA_WARP_BLOCKS an SM."""
    return bigtile_launch(pad_b, warps_m=1, warps_n=1, bk=bk, stages=stages, min_blocks=TMA_WARP_BLOCKS, split=True,
                          fetch_ba=fetch_ba, tma=True)


def tma_warp_launches() -> tuple[Launch, Launch]:
    return tma_warp_launch(pad_b=False), tma_warp_launch(pad_b=True)


#: The `small` kernel's 16-byte path: rows of A and B whole float4s, A and B aligned (C is
#: stored 16 bytes at a time only where its rows allow it).
SMALL_VEC4 = When(n=4, k=4, align=16, operands="AB")


#: Every (VEC_A, VEC_B) pair, the shortest hoisted main loop first: the order a launch list tries
#: them in, each under `copy_widths` (small.md's sixth hypothesis).
COPY_WIDTHS = ((4, 4), (2, 4), (4, 2), (2, 2), (1, 4), (4, 1), (1, 2), (2, 1), (1, 1))


def copy_widths(vec_a: int, vec_b: int) -> When | None:
    """Where copies of `vec_a` floats of A's rows and `vec_b` of B's are whole and aligned
    (tile_copy.cuh): N and K multiples of them, each such operand aligned to the wider copy;
    SMALL_VEC4 itself for 4 and 4, none for 1 and 1."""
    if (vec_a, vec_b) == (4, 4):
        return SMALL_VEC4
    wide = "".join(x for x, v in (("A", vec_a), ("B", vec_b)) if v > 1)
    return When(n=vec_a, k=vec_b, align=4 * max(vec_a, vec_b), operands=wide) if wide else None


def _small_derive(d) -> dict:
    """TM×TN outputs a thread (4×4 unless set) of a BM×BN tile, rows padded by 4 floats; the
    copy widths' precondition is `copy_widths`'. cp.async: sm_80's."""
    threads = (d["BM"] // d.get("TM", 4)) * (d["BN"] // d.get("TN", 4))
    return {"block": (threads, 1), "tile": (d["BM"], d["BN"]), "depth": d["BK"],
            "when": copy_widths(d.get("VEC_A", d["VEC"]), d.get("VEC_B", d["VEC"])), "buffers": d["STAGES"],
            "pad": 4, "needs": Needs.SM80}


def small_launch(vec: int, bm: int = 32, bn: int = 64, bk: int = 16, stages: int = 4, chains: int = 2,
                 min_blocks: int = 3, tm: int = 4, tn: int = 4,
                 widths: tuple[int, int] | None = None) -> Launch:
    """The `small` kernel (small.cu), split-K over grid z; VEC 4 "vec4", VEC 1 "any"; `widths`:
    floats a copy of A's tile and of B's, in place of VEC's (named "aXbY")."""
    defines = {"BM": bm, "BN": bn, "BK": bk, "STAGES": stages, "CHAINS": chains, "VEC": vec,
               "MIN_BLOCKS": min_blocks}
    if (tm, tn) != (4, 4):  # only then: 4×4 is the macros' default, and the shipped cubins stay
        defines |= {"TM": tm, "TN": tn}
    name = "vec4" if vec == 4 else "any"
    if widths and widths != (vec, vec):  # likewise
        defines |= {"VEC_A": widths[0], "VEC_B": widths[1]}
        name = f"a{widths[0]}b{widths[1]}"
    return Launch("small.cu", "small", defines=defines, host=SplitGrid(accumulators=tm * tn), derive=_small_derive,
                  name=name, **_small_derive(defines))


#: The kernels whose tiles tile_copy.cuh copies, and so whose copies may be of any width.
COPIERS = ("small.cu", "mma_split.cu")


def width_twins(launch: Launch) -> tuple[Launch, ...]:
    """A 4-byte `small` or `mma-split` launch's twins that copy each operand as wide as its rows
    allow (COPY_WIDTHS between the all-16-byte and all-4-byte ends): where N or K is even the loop
    is shorter (small.md). `mma-split` ships without them until a run says they pay."""
    if launch.source not in COPIERS or launch.defines["VEC"] != 1 or "VEC_A" in launch.defines:
        return ()
    out = []
    for a, b in COPY_WIDTHS[1:-1]:
        twin = launch.with_defines({"VEC_A": a, "VEC_B": b})
        out.append(dataclasses.replace(twin, name=f"a{a}b{b}-{launch.name}" if launch.name != "any" else f"a{a}b{b}",
                                       when=all_of(twin.when, launch.when)))
    return tuple(out)


#: Narrow outputs: C of at most NARROW_COLS columns over at least NARROW_A elements of A, where
#: `small`'s 32×64 tile leaves most columns empty and a 64×32 tile paid (small.md, third hypothesis).
NARROW_COLS = 32
NARROW_A = 1 << 19


def narrow(launch: Launch) -> Launch:
    """A `small` launch on a 64×32 tile, its other knobs as they are, for narrow outputs ("narrow-…")."""
    turned = launch.with_defines({"BM": 64, "BN": 32})
    when = dataclasses.replace(turned.when or When(), cols=NARROW_COLS, a_elements=NARROW_A)
    return dataclasses.replace(turned, when=when, name=f"narrow-{launch.name}")


#: The most rows or columns of C the `thin` kernels take (thin.cu's THIN): a thread keeps one
#: sum per row (or column).
THIN = 8
THIN_WARPS = 8  # a `thin` block's warps (thin.cu's WARPS)
#: What one load of the short operand serves (thin.cu's COLS and ROWS), by the long operand's size:
#: (width, at least this many of its elements). Wider means fewer blocks, which small shapes pay
#: for in latency (thin.md, version 3; experiments/README.md#thin-v3).
THIN_WIDTHS = {"rows": ((4, 1 << 22), (2, 1 << 20), (1, 0)), "cols": ((4, 1 << 20), (1, 0))}


def thin_blocks(which: str, width: int) -> int:
    """Blocks an SM a thin kernel is built for: 3 for thin_rows at width 4, which spills at 4 (thin.md)."""
    return 3 if (which, width) == ("rows", 4) else 4


def thin_savers(which: str, width: int) -> tuple[int, int]:
    """The threads whose sums a `thin` block saves for the split-K tree (thin.cu's SLOT_ROWS and
    SLOT_COLS), and how many each: warp 0, THIN·width (rows); a thread for each of the block's
    THIN_WARPS·width rows, THIN (cols)."""
    return (32, THIN * width) if which == "rows" else (THIN_WARPS * width, THIN)


def thin_launch(which: str, width: int | None = None, blocks: int | None = None) -> Launch:
    """A `thin` kernel (thin.cu): "rows" where M ≤ THIN, "cols" where K ≤ THIN, split-K across
    blocks; THIN_WIDTHS' widest width and `thin_blocks` unless given. Plain loads and sm_70's
    atomics, below every target CUDA 13 builds for: any GPU."""
    rows = which == "rows"
    width = width or THIN_WIDTHS[which][0][0]
    savers, sums = thin_savers(which, width)
    defines = {"THIN": THIN, "MIN_BLOCKS": blocks or thin_blocks(which, width), ("COLS" if rows else "ROWS"): width}
    least = dict(THIN_WIDTHS[which]).get(width, 0)  # the long operand's elements this width needs
    when = When(rows=THIN, b_elements=least) if rows else When(cols=THIN, a_elements=least)
    return Launch("thin.cu", f"thin_{which}", (32 * THIN_WARPS, 1),
                  (THIN, 32 * width) if rows else (THIN_WARPS * width, THIN),
                  defines, when=when,
                  host=SplitGrid(accumulators=sums, savers=savers), depth=THIN_WARPS if rows else 32,
                  # no tiles in shared memory, only the sums: every warp's (rows), a warp's rows' (cols)
                  scratch=(THIN_WARPS * sums * 32 if rows else savers * THIN) * 4,
                  name=f"thin-{which}" if width == 1 else f"thin-{which}-x{width}")


#: The `thin` kernels: what the rung runs first.
THIN_LAUNCHES = tuple(thin_launch(which, width) for which in ("cols", "rows") for width, _ in THIN_WIDTHS[which])

#: The longest reduction the `short` kernel takes (short.cu's SHORT_N): A's rows and B's columns
#: of a 64×128 tile of C at once in shared memory (25 KB at 32).
SHORT_N = 32


def short_launch(min_blocks: int = 3) -> Launch:
    """The `short` kernel (short.cu), where N ≤ SHORT_N: A's rows and B's columns loaded whole, one
    FMA chain an output. Plain loads and stores: any GPU."""
    defines = {"SHORT_N": SHORT_N, "MIN_BLOCKS": min_blocks}
    return Launch("short.cu", "short_n", (256, 1), (64, 128), defines, when=When(reduction=SHORT_N),
                  # A's tile n-major (SHORT_N rows of 64 + 4 floats) and B's (SHORT_N rows of 128),
                  # not the step-by-step buffers `static_smem` counts
                  scratch=SHORT_N * (64 + 4 + 128) * 4, name="short")


def gemv_launch(rows: int = 2, min_blocks: int = 4) -> Launch:
    """The `gemv` kernel (gemv.cu), where K = 1: 8 warps over 8·`rows` rows of C, split-K across
    blocks. A lane's chain is at most N / 32 long, below `handoff.LONGEST_CHAIN` at every N: no
    split for accuracy (chain 0). Any GPU."""
    defines = {"ROWS": rows, "MIN_BLOCKS": min_blocks}
    return Launch("gemv.cu", "gemv", (256, 1), (8 * rows, 1), defines, when=When(cols=1),
                  host=SplitGrid(accumulators=4, savers=8 * rows // 4, chain=0), depth=128,
                  scratch=8 * rows * 4,  # one sum a row of the block
                  name="gemv")


def _mma_split_derive(d) -> dict:
    """Four warps on a 64×64 tile; A's rows padded by 4 floats and B's by 8 for conflict-free
    fragment reads; copy widths as `small`'s. mma.sync: sm_80's."""
    return {"block": (128, 1), "tile": (64, 64), "depth": d["BK"],
            "when": copy_widths(d.get("VEC_A", d["VEC"]), d.get("VEC_B", d["VEC"])),
            "buffers": d["STAGES"], "pad": (4, 8), "needs": Needs.SM80}


def mma_split_launch(vec: int, bk: int = 16, stages: int = 4, min_blocks: int = 4) -> Launch:
    """The `mma-split` kernel (mma_split.cu): TF32 mma.sync, split-K over grid z."""
    defines = {"BK": bk, "STAGES": stages, "VEC": vec, "MIN_BLOCKS": min_blocks}
    return Launch("mma_split.cu", "mma_split", defines=defines, host=SplitGrid(accumulators=32, chain=0),
                  derive=_mma_split_derive, name="vec4" if vec == 4 else "any", **_mma_split_derive(defines))


def _one(source: str, entry: str, block: tuple[int, int], tile: tuple[int, int], **more) -> Launch:
    """A rung of one launch, which runs at any shape."""
    return Launch(source, entry, block, tile, name="any", **more)


#: Each CUDA rung's launches by its registry name, fast path(s) first, the fallback last.
RUNGS: dict[str, tuple[Launch, ...]] = {
    "naive": (_one("naive.cu", "naive", (16, 16), (16, 16)),),
    "naive-fma": (_one("naive_fma.cu", "naive_fma", (16, 16), (16, 16)),),
    "smem-16": (
        Launch("smem16.cu", "smem16", (16, 16), (16, 16), {"EXACT_TILES": 1},
               when=whole_tiles(16, 16, 16), depth=16, buffers=1, name="whole-tiles"),
        _one("smem16.cu", "smem16", (16, 16), (16, 16), depth=16, buffers=1),
    ),
    "row-4": (_one("row4.cu", "row4", (16, 16), (16, 64), depth=16, buffers=1),),
    "tiling-1d": (_one("tiling1d.cu", "tiling1d", (64, 4), (64, 64), depth=16, buffers=1),),
    "tiling-2d": (TILING2D,),
    "float4": (float4_launch(64, 32, 32, 2, exact=True), float4_launch(64, 32, 32, 2), TILING2D),
    "float4-bk16": (float4_launch(64, 16, 16, 5, exact=True), float4_launch(64, 16, 2, 6), TILING2D),
    "float4-128": (float4_launch(128, 16, 16, 1, exact=True), float4_launch(128, 16, 16, 1), TILING2D),
    "double-buffer-64": (double_buffer_launch(64), TILING2D),
    "double-buffer-128": (double_buffer_launch(128), TILING2D),
    "cp-async": (
        Launch("cp_async.cu", "cp_async", (512, 1), (128, 128), when=VEC4, needs=Needs.SM80,
               depth=16, buffers=2, name="vec4"),
        TILING2D,
    ),
    "wmma-tf32": (
        Launch("wmma_tf32.cu", "wmma_tf32", (512, 1), (128, 128),
               when=When(m=128, n=32, k=128, align=32), needs=Needs.SM80, depth=32, buffers=1, pad=4,
               name="whole-tiles"),
        float4_launch(64, 32, 32, 2),
        TILING2D,
    ),
    "warptile": (warptile_launch(16, 2, exact=True), warptile_launch(8, 2, exact=False),
                 padded(warptile_launch(8, 2, exact=False))),
    "mma-tf32": (mma_tf32_launch(4), mma_tf32_launch(1)),
    "wgmma-tma": (wgmma_tma_launch(),),
    "wgmma-ws": (wgmma_ws_launch(a_in_place=True), wgmma_ws_launch(a_in_place=False)),
    "wgmma-3xtf32": (wgmma_3xtf32_launch(a_in_place=True), wgmma_3xtf32_launch(a_in_place=False)),
    "bigtile": (bigtile_launch(pad_b=False), bigtile_launch(pad_b=True)),
    "splitk": (bigtile_launch(pad_b=False, bk=8, stages=3, split=True),
               bigtile_launch(pad_b=True, bk=8, stages=3, split=True)),
    "wgmma-swap": wgmma_swap_launches(),
    "tma": (bigtile_launch(pad_b=False, bk=16, stages=3, split=True, fetch_ba=True, tma=True),
            bigtile_launch(pad_b=True, bk=16, stages=3, split=True, fetch_ba=True, tma=True)),
    "small": (narrow(small_launch(4)), narrow(small_launch(1)), small_launch(4), *width_twins(small_launch(1)),
              small_launch(1)),
    "mma-split": (mma_split_launch(4), mma_split_launch(1)),
    "tma-warp": tma_warp_launches(),
    "thin": THIN_LAUNCHES,
    "short": (short_launch(),),
    "gemv": (gemv_launch(),),
}
# Where neither side of C is thin, `small`'s launches; where the reduction is not short, too.
RUNGS["thin"] += RUNGS["small"]
RUNGS["short"] += RUNGS["small"]
RUNGS["gemv"] += RUNGS["thin"]  # where K > 1: thin's kernels, then small's


def named(rung: str, name: str) -> Launch:
    """The launch `name` of `rung` (KeyError, saying which names it has, if none)."""
    for launch in RUNGS[rung]:
        if launch.name == name:
            return launch
    raise KeyError(f"{rung} has no launch {name!r} (its launches: {', '.join(x.name for x in RUNGS[rung])})")
