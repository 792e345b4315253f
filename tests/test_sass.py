"""The machine code proves each rung uses what it claims."""

from __future__ import annotations

import pytest

from gemmlab import launches, registry
from gemmlab.cuda import sass as sass_mod
from gemmlab.cuda.compiler import HOPPER_ARCH
from gemmlab.cuda.sass import disassemble, instruction_mix


def mix(name: str, which: int = 0) -> dict[str, int]:
    """The SASS mix of launch `which` (0: the fastest path, -1: the fallback)."""
    launch = registry.get(name).launches[which]
    sass = disassemble(launch.compile(HOPPER_ARCH).cubin)
    return instruction_mix(sass[launch.entry])


@pytest.mark.parametrize("name", [i.name for i in registry.IMPLEMENTATIONS if i.family == "cuda"])
def test_no_local_memory(name):
    for i, _ in enumerate(registry.get(name).launches):
        assert mix(name, i)["LDL/STL"] == 0


@pytest.mark.parametrize("name", ["smem-16", "float4", "float4-bk16", "float4-128", "warptile"])
def test_whole_tile_fast_path_drops_bounds_checks(name):
    exact, checked = registry.get(name).launches[:2]
    assert exact.defines.get("EXACT_TILES") == 1 and "EXACT_TILES" not in checked.defines

    def count(launch, prefix):
        ops = disassemble(launch.compile(HOPPER_ARCH).cubin)[launch.entry]
        return sum(op.startswith(prefix) for op in ops)

    # Bounds checks are integer compares (ISETP) feeding predicates.
    assert count(exact, "ISETP") < count(checked, "ISETP")


@pytest.mark.parametrize("name", ["naive", "naive-fma"])
def test_naive_uses_no_shared_memory_but_ffma(name):
    m = mix(name)
    assert m["LDS"] == 0 and m["BAR"] == 0 and m["FFMA"] > 0 and m["LDG"] > 0


@pytest.mark.parametrize("name", ["smem-16", "row-4", "tiling-1d", "tiling-2d"])
def test_tiled_rungs_read_shared_memory(name):
    m = mix(name)
    assert m["LDS"] > 0 and m["BAR"] >= 2 and m["HMMA"] == 0


@pytest.mark.parametrize(
    "name", ["float4", "float4-bk16", "float4-128", "double-buffer-64", "double-buffer-128", "warptile"]
)
def test_float4_rungs_move_16_bytes(name):
    m = mix(name)
    assert m["LDG.128"] > 0 and m["LDS.128"] > 0 and m["STG.128"] > 0
    assert m["LDG"] == m["LDG.128"], "every global load should be 128-bit"


def test_cp_async_uses_the_copy_engine():
    m = mix("cp-async")
    assert m["LDGSTS"] >= 2 and m["LDG"] == 0 and m["LDS.128"] > 0


def test_wmma_uses_tensor_cores():
    m = mix("wmma-tf32")
    assert m["HMMA"] >= 16 and m["FFMA"] == 0 and m["HGMMA"] == 0


def test_fallback_is_scalar_2d_tiling():
    m = mix("float4", -1)
    assert m["LDG.128"] == 0 and m["FFMA"] > 0


def test_warptile_reads_shared_memory_16_bytes_at_a_time():
    """With A transposed, every operand read in the inner loop is an LDS.128: 16 FFMA per load."""
    for launch in (0, 1):
        m = mix("warptile", launch)
        assert m["LDS"] == m["LDS.128"] > 0
        assert m["FFMA"] >= 16 * m["LDS.128"]


@pytest.mark.parametrize("name", ["bigtile", "splitk"])
def test_bigtile_issues_128_ffma_per_six_16_byte_reads(name):
    """8×16 outputs per thread: 6 LDS.128 per 128 FFMA; both tiles by cp.async, nothing by LDG
    (splitk's hand-off, after the loop, is its only LDG: a slot's 32 float4 and the flag's
    acquire load, in the loop over the parts it adds)."""
    for which in (0, 1):
        m = mix(name, which)
        assert m["FFMA"] >= 21 * m["LDS.128"] > 0
        assert m["LDGSTS"] > 0 and m["LDG"] <= (32 + 1 if name == "splitk" else 0) and m["HMMA"] == 0


@pytest.mark.parametrize("name", ["bigtile", "splitk"])
def test_bigtile_stores_unaligned_rows_after_a_quad_transpose(name):
    """Launch 1 (B's padded copy, any K) stores C's rows that are not 16-byte aligned after a
    4×4 transpose within each quad: 2 rounds of 2 SHFL.BFLY per float4 of a thread's 32, i.e.
    128; launch 0 (K % 4 == 0) stores float4 only and keeps no trace of that path."""
    def shuffles(which):
        launch = registry.get(name).launches[which]
        ops = disassemble(launch.compile(HOPPER_ARCH).cubin)[launch.entry]
        return sum(op.startswith("SHFL.BFLY") for op in ops)

    assert registry.get(name).launches[1].defines["PAD_B"] == 1
    assert shuffles(1) == 128 and shuffles(0) == 0


@pytest.mark.parametrize(("which", "stages"), [(0, 3), (1, 4)])
def test_bigtile_tma_copy_knob_loads_both_tiles_by_tma(which, stages):
    """TMA_COPY 1 (experiments/bigtile-tma): both tiles by cp.async.bulk.tensor, no
    cp.async left, no local memory. The kernel initialises one 8-byte mbarrier per stage (each
    `mbarrier.init` is a SYNCS.EXCH.64), and the shared memory the launch asks for holds them past
    the tiles the same knobs ask for without TMA, with at most 128 bytes more to align the stages."""
    knobs = {"BK": 16, "STAGES": stages, "FETCH_BA": 1}
    base = registry.get("splitk").launches[which]
    launch = base.with_defines(knobs | {"TMA_COPY": 1})
    ops = disassemble(launch.compile(HOPPER_ARCH).cubin)[launch.entry]
    m = instruction_mix(ops)
    assert m["UTMALDG"] > 0 and m["LDGSTS"] == 0 and m["LDL/STL"] == 0 and m["FFMA"] >= 21 * m["LDS.128"]
    barriers = sum(op.startswith("SYNCS.EXCH.64") for op in ops)
    assert barriers == stages
    beyond_tiles = launch.kernel.smem - base.with_defines(knobs | {"TMA_COPY": 0}).kernel.smem
    assert 8 * barriers <= beyond_tiles <= 8 * barriers + 128


@pytest.mark.parametrize("which", [0, -1])
def test_mma_sync_rung_uses_hmma_fed_by_the_copy_engine(which):
    m = mix("mma-tf32", which)
    assert m["HMMA"] >= 16 and m["LDGSTS"] > 0 and m["HGMMA"] == 0 and m["UTMALDG"] == 0


@pytest.mark.parametrize("name", ["wgmma-tma", "wgmma-ws", "wgmma-3xtf32", "wgmma-swap"])
def test_wgmma_rungs_use_hgmma_and_tma(name):
    for which, _ in enumerate(registry.get(name).launches):
        m = mix(name, which)
        assert m["HGMMA"] >= 4 and m["UTMALDG"] >= 2 and m["HMMA"] == 0
        assert m["LDG"] == 0, "operands reach shared memory through TMA only"


def test_swapped_rung_gathers_its_register_operand_and_rounds_nothing_itself():
    """wgmma-swap: per stage one TMA copy of A and four of B, four wgmmas, each fed by four
    shared loads of B straight into its register operand and each waited for only down to PIPE
    pending (one WARPGROUP.DEPBAR per wgmma, one at the tile's end), which ptxas did not undo
    by serialising them (its C7513 remark, which INFLIGHT 1 of an earlier version drew).
    The copy engine rounds (TFLOAT32 descriptors): no floating-point instruction in the kernel,
    where wgmma-ws's rounding of A (cvt.rna) compiles to FSETP-guarded integer arithmetic."""
    m = mix("wgmma-swap")
    assert m["HGMMA"] == 4 and m["LDS"] == 4 * m["HGMMA"] and m["UTMALDG"] == 5 and m["SETMAXREG"] >= 2
    launch = registry.get("wgmma-swap").launches[0]
    assert launch.defines["PIPE"] == 2
    module = launch.compile(HOPPER_ARCH)
    ops = disassemble(module.cubin)[launch.entry]
    assert ops.count("WARPGROUP.DEPBAR.LE") == m["HGMMA"] + 1
    assert "C7513" not in module.log and "serialized" not in module.log
    assert not [op for op in ops if op.startswith(("FSETP", "FADD", "FMUL", "FFMA", "F2F", "FRND"))]
    assert any(op.startswith("FSETP") for op in disassemble(
        registry.get("wgmma-ws").launches[0].compile(HOPPER_ARCH).cubin)["wgmma_ws"])


def test_warp_specialised_rung_trades_registers():
    assert mix("wgmma-ws")["SETMAXREG"] >= 2
    assert mix("wgmma-tma")["SETMAXREG"] == 0


def test_pairs_arrive_on_each_others_barriers_without_a_memory_barrier():
    """wgmma-ws runs in 2-block clusters; a consumer's remote arrive with cluster-scope release
    compiled to MEMBAR.ALL.CTA + MEMBAR.ALL.GPU before it, every step (1.86 ms against 1.08).
    The only memory barriers left are those of the kernel's two cluster-wide syncs."""
    launch = registry.get("wgmma-ws").launches[0]
    assert launch.kernel.cluster == (2, 1, 1)
    ops = disassemble(launch.compile(HOPPER_ARCH).cubin)[launch.entry]
    assert sum(op.startswith("MEMBAR") for op in ops) <= 4, [op for op in ops if op.startswith("MEMBAR")]


def test_cluster_knob_multicasts_b():
    import dataclasses

    launch = registry.get("wgmma-ws").launches[0]
    pair = dataclasses.replace(launch, defines=dict(launch.defines) | {"CLUSTER": 2})
    assert pair.kernel.cluster == (2, 1, 1)
    ops = disassemble(pair.compile(HOPPER_ARCH).cubin)[pair.entry]
    assert any(op.startswith("UTMALDG") and "MULTICAST" in op for op in ops)


def test_3xtf32_issues_three_products_per_step_and_promotes_in_fp32():
    m = mix("wgmma-3xtf32")
    assert m["HGMMA"] == 3 * 4 and m["UTMALDG"] == 3  # A, Bᵀhi, Bᵀlo
    ops = disassemble(registry.get("wgmma-3xtf32").launches[0].compile(HOPPER_ARCH).cubin)["wgmma_3xtf32"]
    assert sum(op.startswith("FADD") for op in ops) >= 64  # the fresh tile added to the accumulator


@pytest.mark.parametrize("name", [i.name for i in registry.IMPLEMENTATIONS
                                  if i.family == "cuda" and i.launches[0].block[0] == 384])
def test_setmaxnreg_claims_fit_in_the_blocks_registers(name):
    """A warp-specialised block (one producer warpgroup, two consumers) is launched with
    384 × (its entry's registers); `setmaxnreg.inc` beyond that waits forever (wgmma-fused hung
    so on the H200 with 80 + 2 · 216 > 3 · 168)."""
    from gemmlab.bench.inspect import setmaxnreg

    launch = registry.get(name).launches[0]
    module = launch.compile(HOPPER_ARCH)
    regs = module.resources[launch.entry].registers
    claims = setmaxnreg(module.cubin, launch.entry)
    assert claims and None not in claims.values(), claims
    assert claims["producer"] + 2 * claims["consumer"] <= 3 * regs, (claims, regs)


# ---- the schedule figures (sass.schedule) ------------------------------------------------------


def listing(*instructions: tuple[int, str, int]) -> list[str]:
    """cuobjdump's two lines per instruction, for (address, text, stall cycles)."""
    out = []
    for address, text, stall in instructions:
        out.append(f"        /*{address:04x}*/                   {text} ;  /* 0x000000000000000f */")
        out.append(f"                                                     /* 0x{stall << 41:016x} */")
    return out


def test_bank_conflicts_count_reads_the_reuse_cache_does_not_serve():
    code = sass_mod._instructions(listing(
        (0x00, "FFMA R10, R2.reuse, R4, R10", 1),  # R2, R4, R10 all in bank 0: two extra reads
        (0x10, "FFMA R13, R2, R5, R13", 1),        # R2 from the reuse cache; R5, R13 in bank 1: one
        (0x20, "IADD3 R1, R1, 0x1, RZ", 1),        # not an FFMA: the cache is not carried over it
        (0x30, "FFMA R11, R2, R7, R11", 1),        # R2, R7, R11: banks 0, 1, 1: one
    ))
    assert sass_mod.bank_conflicts(code) == (3, 4)
    # four banks: R2 and R10 (bank 2), R5 and R13 (bank 1), R7 and R11 (bank 3): one each
    assert sass_mod.bank_conflicts(code, banks=4) == (3, 3)


def test_main_loop_is_the_longest_backward_branch_and_its_stalls_are_summed():
    code = sass_mod._instructions(listing(
        (0x00, "MOV R1, 0x0", 1),
        (0x10, "LDS.128 R4, [R2]", 4),
        (0x20, "LDS.128 R8, [R2+0x10]", 1),
        (0x30, "FFMA R12, R4, R8, R12", 2),
        (0x40, "@!P0 BRA 0x10", 5),      # the loop: 0x10 … 0x40
        (0x50, "@P1 BRA 0x30", 1),       # a shorter one
        (0x60, "EXIT", 1),
    ))
    loop = sass_mod.main_loop(code)
    assert [i[0] for i in loop] == [0x10, 0x20, 0x30, 0x40] and sum(i[3] for i in loop) == 12


def test_bigtile_schedule_figures_are_read_from_its_sass():
    launch = registry.get("splitk").launches[0]
    figures = sass_mod.schedule(launch.compile(HOPPER_ARCH).cubin)[launch.entry]
    assert 0 < figures["FFMA bank conflicts"] < 1
    # the main loop: one BK step's 128 FFMA per reduction index, and its stall cycles
    assert figures["loop instructions"] > 128 * launch.depth
    assert figures["loop stall cycles"] >= figures["loop instructions"]
    assert 0 <= figures["loop LDS stalled 4+"] <= 6 * launch.depth


def _opcodes(name: str, which: int = 0) -> list[str]:
    launch = registry.get(name).launches[which]
    return disassemble(launch.compile(HOPPER_ARCH).cubin)[launch.entry]


def test_small_sums_each_step_from_zero_then_adds_it_to_its_running_sum():
    """Blocked sums (small.md, fourth hypothesis): per step of BK 16, each of a thread's 16
    outputs takes one FMUL (the step's first product, rounded alone), 15 FFMAs and one FADD onto
    the running sum; no other multiply in the kernel."""
    launch = next(x for x in registry.get("small").launches if x.name == "vec4")
    assert launch.defines["BK"] == 16 and launch.defines["CHAINS"] == 2
    ops = _opcodes("small", registry.get("small").launches.index(launch))
    fmul = sum(op.startswith("FMUL") for op in ops)
    ffma = sum(op.startswith("FFMA") for op in ops)
    fadd = sum(op.startswith("FADD") for op in ops)
    assert fmul == 16 and ffma == 15 * 16 and fadd >= 16, (fmul, ffma, fadd)


@pytest.mark.parametrize("widths", launches.COPY_WIDTHS)
@pytest.mark.parametrize("rung", ["small", "mma-split"])
def test_tile_copies_of_each_width_move_what_their_width_says(rung, widths):
    """tile_copy.cuh's VEC_A and VEC_B (experiments/small-hoist): a thread copies BM·BK / (threads
    · VEC_A) pieces of A and BK·BN / (threads · VEC_B) of B a step (at `small`'s 32×64 tile and BK
    16, 4 / VEC_A and 8 / VEC_B; at `mma-split`'s 64×64, 8 / VEC_A and 8 / VEC_B), at STAGES (4)
    copy sites, each piece one LDGSTS of its width (.128: 16 bytes, .64: 8, plain: 4); no local
    memory."""
    from collections import Counter

    any_launch = next(x for x in registry.get(rung).launches if x.name == "any")
    launch = any_launch.with_defines({"VEC_A": widths[0], "VEC_B": widths[1]})
    ops = disassemble(launch.compile(HOPPER_ARCH).cubin)[launch.entry]
    suffix = {4: ".128", 2: ".64", 1: ""}
    got = Counter(o for o in ops if o.startswith("LDGSTS"))
    want = Counter()
    (bm, bn), bk = launch.tile, launch.depth
    for width, pieces in ((widths[0], bm * bk // (launch.threads * widths[0])),
                          (widths[1], bk * bn // (launch.threads * widths[1]))):
        name = next(o for o in got if o.endswith(suffix[width]) and (width == 1) == (o == "LDGSTS.E"))
        want[name] += 4 * pieces
    assert got == want, (got, want)
    assert not any(o.startswith(("LDL", "STL")) for o in ops)


def test_short_reads_its_tiles_once_behind_one_barrier_and_stores_16_bytes():
    """short.md: plain loads (no cp.async: any GPU), one barrier, per n two 16-byte reads of A
    and one of B for 32 FMAs, 16-byte stores."""
    m = mix("short")
    assert m["BAR"] == 1 and m["LDGSTS"] == 0 and m["HMMA"] == 0 and m["STG.128"] > 0
    assert m["FFMA"] * 3 == m["LDS.128"] * 32, m


def test_gemv_streams_a_by_16_byte_loads_without_shared_tiles():
    """gemv.md: A read 16 bytes a lane (LDG.128 in both paths, 4 FFMA each), no cp.async, no
    shared tiles (one float a row of the block for the butterfly's results), no local memory."""
    m = mix("gemv")
    launch = registry.get("gemv").launches[0]
    assert launch.entry == "gemv" and launch.when.cols == 1
    assert m["LDGSTS"] == 0 and m["HMMA"] == 0 and m["LDL/STL"] == 0
    assert m["LDG.128"] >= 12 and m["FFMA"] >= 4 * 12, m
