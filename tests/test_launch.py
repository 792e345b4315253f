"""The launch model on the CPU: parameter packing, plain kernel calls, the wgmma host's plan."""

from __future__ import annotations

import ctypes
import dataclasses

import numpy as np
import pytest
import torch

from gemmlab import launches, registry
from gemmlab.cuda import hopper
from gemmlab.cuda.dispatch import Call
from gemmlab.cuda.driver import TensorMap, pack
from gemmlab.policy import tensor, twins


def test_pack_gives_each_argument_its_declared_width():
    raw = bytes(range(128))
    pointers, keep = pack([0x1234_5678_9ABC, np.int32(-7), np.float32(2.5), TensorMap(raw)])
    assert ctypes.c_uint64.from_address(pointers[0]).value == 0x1234_5678_9ABC
    assert ctypes.c_int32.from_address(pointers[1]).value == -7
    assert ctypes.c_float.from_address(pointers[2]).value == 2.5
    assert pointers[3] % 64 == 0 and ctypes.string_at(pointers[3], 128) == raw
    assert len(keep) == 4


@pytest.mark.parametrize("bad", [True, 1.5, "x", None])
def test_pack_refuses_untyped_arguments(bad):
    with pytest.raises(TypeError):
        pack([bad])


def _call(m, n, k):
    a, b, c = torch.empty(m, n), torch.empty(n, k), torch.empty(m, k)
    return Call(a, b, c, m, n, k)


@pytest.mark.parametrize("impl", [i for i in registry.IMPLEMENTATIONS if i.family == "cuda" and (
    i.chapter.number in (1, 2) or i.name in ("wmma-tf32", "warptile"))],
                         ids=lambda i: i.name)
def test_ladder_launches_are_one_plain_kernel_call(impl):
    """Every ladder launch without a host runs one kernel, (A, B, C, M, N, K), static shared
    memory, no cluster (warptile's padded fallback has its own test below)."""
    call = _call(129, 33, 257)
    for launch in (x for x in impl.launches if x.host is None):
        (run,) = launch.kernel_calls(call, None)
        assert run.kernel == launch.kernel and run.kernel.smem == 0 and run.kernel.cluster == (1, 1, 1)
        rows, cols = launch.tile
        assert run.grid == (-(-257 // cols), -(-129 // rows), 1)
        assert run.args[:3] == (call.a.data_ptr(), call.b.data_ptr(), call.c.data_ptr())
        assert [int(x) for x in run.args[3:]] == [129, 33, 257]
        assert launch.workspace_bytes(129, 33, 257) == 0


@pytest.fixture
def fake_maps(monkeypatch):
    """Record the descriptors the host asks for instead of calling the driver."""
    asked = []

    def matrix_map(address, rows, cols, pitch, box_rows, box_cols, swizzle):
        asked.append((address, rows, cols, pitch, box_rows, box_cols, swizzle))
        return TensorMap(bytes(128))

    monkeypatch.setattr(hopper, "matrix_map", matrix_map)
    return asked


PLANS = [  # rung, launch, the kernels its plan runs in order
    ("wgmma-tma", 0, ["transpose_tf32", "round_rows_tf32", "wgmma_tma"]),
    ("wgmma-ws", 0, ["transpose_tf32", "wgmma_ws"]),
    ("wgmma-ws", 1, ["transpose_tf32", "round_rows_tf32", "wgmma_ws"]),
    ("wgmma-3xtf32", 0, ["clear_flag", "transpose_split_tf32", "wgmma_3xtf32", "special_fp32"]),
    ("wgmma-3xtf32", 1, ["clear_flag", "transpose_split_tf32", "pad_rows", "wgmma_3xtf32",
                         "special_fp32"]),
]


@pytest.mark.parametrize("name,which,kinds", PLANS, ids=lambda x: str(x))
def test_wgmma_host_plans_prepasses_and_descriptors(fake_maps, name, which, kinds):
    launch = registry.get(name).launches[which]
    m, n, k = 300, 257, 301
    ld = hopper.pitch(n)
    call = _call(m, n, k)
    copies_a = "round_rows_tf32" in kinds or "pad_rows" in kinds
    planes = 2 if "transpose_split_tf32" in kinds else 1
    workspace = torch.empty(launch.workspace_bytes(m, n, k), dtype=torch.uint8)
    assert workspace.numel() >= planes * k * ld * 4 + (m * ld * 4 if copies_a else 0)
    if launch.persistent:
        launch = dataclasses.replace(launch, persistent=False)  # its grid asks the GPU
    runs = launch.kernel_calls(call, workspace)
    assert [s.kernel.entry for s in runs] == kinds
    for s in runs:
        assert s.kernel in launch.kernels(), s.kernel.entry  # compiled and inspected too
    lo, hi = workspace.data_ptr(), workspace.data_ptr() + workspace.numel()
    a_map, *b_maps = fake_maps
    assert len(b_maps) == planes
    assert (a_map[0] != call.a.data_ptr()) == copies_a
    assert a_map[1:] == (m, n, (ld if copies_a else n) * 4, launch.tile[0], hopper.DEPTH, 128)
    for b_map in b_maps:
        assert lo <= b_map[0] and b_map[0] + k * ld * 4 <= hi
        assert b_map[1:] == (k, n, ld * 4, launch.tile[1] // launch.kernel.cluster[0], hopper.DEPTH, 128)
    if copies_a:
        assert lo <= a_map[0] and a_map[0] + m * ld * 4 <= hi
    regions = sorted([b[0] for b in b_maps] + ([a_map[0]] if copies_a else []))
    assert all(b - a >= k * ld * 4 for a, b in zip(regions, regions[1:], strict=False)), "overlap"
    main = next(s for s in runs if s.kernel.entry == launch.entry)
    gemm = main.args[:-1] if planes == 2 else main.args
    assert gemm[-4] == call.c.data_ptr() and [int(x) for x in gemm[-3:]] == [m, n, k]
    if planes == 2:  # 3xTF32's flag, at the workspace's start: the main kernel raises it for A
        special = next(s for s in runs if s.kernel.entry == "special_fp32")
        assert main.args[-1] == special.args[0] == workspace.data_ptr()


@pytest.mark.parametrize("which,n,k", [(0, 257, 301), (1, 257, 301), (1, 257, 300), (1, 260, 301)])
def test_swapped_host_reads_a_and_b_as_they_lie_through_rounding_descriptors(monkeypatch, which, n, k):
    """wgmma-swap: no pre-pass on its fast path (TMA reads A and B where they are); its fallback
    copies, as they are into rows of pitch() floats, only the operands whose rows TMA cannot
    describe (N, K not multiples of 4). Both descriptors are TFLOAT32 (the copy engine rounds):
    A's box is the tile's rows by one reduction step, B's one step by 32 columns."""
    asked = []

    def matrix_map(address, rows, cols, pitch, box_rows, box_cols, swizzle, tf32=False):
        asked.append((address, rows, cols, pitch, box_rows, box_cols, swizzle, tf32))
        return TensorMap(bytes(128))

    monkeypatch.setattr(hopper, "matrix_map", matrix_map)
    launch = dataclasses.replace(registry.get("wgmma-swap").launches[which], persistent=False)
    m = 300
    call = _call(m, n, k)
    size = launch.workspace_bytes(m, n, k)
    workspace = torch.empty(size, dtype=torch.uint8) if size else None
    runs = launch.kernel_calls(call, workspace)
    copy_a, copy_b = which == 1 and n % 4 != 0, which == 1 and k % 4 != 0
    assert [s.kernel.entry for s in runs] == ["pad_rows"] * (copy_a + copy_b) + ["wgmma_swap"]
    assert all(s.kernel in launch.kernels() for s in runs)
    assert [s.args[0] for s in runs[:-1]] == [t.data_ptr() for t, c in ((call.a, copy_a), (call.b, copy_b)) if c]
    a_map, b_map = asked
    lda, ldb = hopper.pitch(n) if copy_a else n, hopper.pitch(k) if copy_b else k
    rows = launch.tile[0] // launch.kernel.cluster[0]
    assert a_map[1:] == (m, n, lda * 4, rows, hopper.DEPTH, 128, True)
    assert b_map[1:] == (n, k, ldb * 4, hopper.DEPTH, hopper.SWAP_BOX, 128, True)
    assert (a_map[0] == call.a.data_ptr()) != copy_a and (b_map[0] == call.b.data_ptr()) != copy_b
    if which == 1:
        lo, hi = workspace.data_ptr(), workspace.data_ptr() + workspace.numel()
        for copied, got, nbytes in ((copy_a, a_map[0], m * lda * 4), (copy_b, b_map[0], n * ldb * 4)):
            assert not copied or lo <= got and got + nbytes <= hi
        if copy_a and copy_b:
            assert a_map[0] + m * lda * 4 <= b_map[0], "overlap"
    else:
        assert size == 0
    assert runs[-1].args[2] == call.c.data_ptr() and [int(x) for x in runs[-1].args[3:]] == [m, n, k]


def test_swapped_fast_path_needs_describable_a_and_b():
    when = registry.get("wgmma-swap").launches[0].when
    c = torch.empty(64, 8)
    assert when(torch.empty(64, 260), torch.empty(260, 8), c, 64, 260, 8)
    assert not when(torch.empty(64, 259), torch.empty(259, 8), c, 64, 259, 8)
    assert not when(torch.empty(64, 260), torch.empty(260, 7), torch.empty(64, 7), 64, 260, 7)
    shifted = torch.empty(260 * 8 + 1)[1:].view(260, 8)
    assert not when(torch.empty(64, 260), shifted, c, 64, 260, 8)


@pytest.mark.parametrize("name", ["wgmma-ws", "wgmma-3xtf32"])
def test_wgmma_fast_path_needs_a_describable_a(name):
    when = registry.get(name).launches[0].when
    a, b, c = torch.empty(64, 260), torch.empty(260, 8), torch.empty(64, 8)
    assert when(a, b, c, 64, 260, 8)
    assert not when(torch.empty(64, 259), torch.empty(259, 8), c, 64, 259, 8)
    shifted = torch.empty(64 * 260 + 1)[1:].view(64, 260)
    assert not when(shifted, b, c, 64, 260, 8)


def test_padded_host_copies_in_runs_padded_and_copies_back():
    """warptile's fallback: A (M×N) and B (N×K) into rows of pitch(N) and pitch(K) floats, the
    kernel on the padded problem, then C's M×K copied back out of the padded C."""
    from gemmlab.cuda import pad

    launch = registry.get("warptile").launches[-1]
    assert launch.when is None and isinstance(launch.host, pad.PaddedOperands)
    m, n, k = 300, 257, 301
    n4, k4 = 260, 304
    call = _call(m, n, k)
    workspace = torch.empty(launch.workspace_bytes(m, n, k), dtype=torch.uint8)
    base = workspace.data_ptr()
    copy_a, copy_b, main, back = launch.kernel_calls(call, workspace)
    a, b, c = main.args[:3]
    assert [int(x) for x in main.args[3:]] == [m, n4, k4] and main.kernel == launch.kernel
    assert main.grid == (-(-k4 // 128), -(-m // 128), 1)
    assert copy_a.args[:2] == (call.a.data_ptr(), a) and [int(x) for x in copy_a.args[2:]] == [m, n, n, m, n4]
    assert copy_b.args[:2] == (call.b.data_ptr(), b) and [int(x) for x in copy_b.args[2:]] == [n, k, k, n4, k4]
    assert back.args[:2] == (c, call.c.data_ptr()) and [int(x) for x in back.args[2:]] == [m, k, k4, m, k]
    # Each padded buffer is 16-byte aligned and inside the workspace, and none overlaps the next.
    spans = [(a, m * n4 * 4), (b, n4 * k4 * 4), (c, m * k4 * 4)]
    for (start, size), (following, _) in zip(spans, spans[1:] + [(base + workspace.numel(), 0)], strict=True):
        assert start % 16 == 0 and start + size <= following


def test_transposed_host_writes_at_and_pads_b_only_when_asked():
    """bigtile: every call first writes Aᵀ (N rows of pitch(M)); its fallback also copies B into
    rows of pitch(K), and the kernel reads those in place of A and B; C is the caller's."""
    from gemmlab.cuda import pad, transposed

    fast, fallback = registry.get("bigtile").launches
    assert fast.when is not None and fallback.when is None
    assert fast.host == transposed.TransposedA() and fallback.host == transposed.TransposedA(pad_b=True)
    m, n, k = 301, 257, 299
    m4, k4 = 304, 300
    call = _call(m, n, k)
    for launch, kernels in ((fast, [transposed.TRANSPOSE_FP32]), (fallback, [transposed.TRANSPOSE_FP32, pad.PAD_COPY])):
        workspace = torch.empty(launch.workspace_bytes(m, n, k), dtype=torch.uint8)
        runs = launch.kernel_calls(call, workspace)
        assert [s.kernel for s in runs[:-1]] == kernels and runs[-1].kernel == launch.kernel
        at = workspace.data_ptr()
        t = runs[0]
        assert t.args[:2] == (call.a.data_ptr(), at) and [int(x) for x in t.args[2:]] == [m, n, m4]
        assert t.grid == (-(-n // 64), -(-m4 // 64), 1)
        main = runs[-1]
        assert main.args[0] == at and main.args[2] == call.c.data_ptr()
        assert [int(x) for x in main.args[3:]] == [m, n, k]
        assert main.grid == (-(-k // 128), -(-m // 128), 1)
        if launch is fast:
            assert main.args[1] == call.b.data_ptr() and workspace.numel() >= n * m4 * 4
        else:
            copy = runs[1]
            b = main.args[1]
            assert copy.args[:2] == (call.b.data_ptr(), b) and [int(x) for x in copy.args[2:]] == [n, k, k, n, k4]
            # Aᵀ and the padded B do not overlap, B is 16-byte aligned, both inside the workspace.
            assert b % 16 == 0 and b >= at + n * m4 * 4 and b + n * k4 * 4 <= at + workspace.numel()


def test_bigtile_macros_decide_host_and_precondition():
    """What follows from bigtile's macros is re-derived with them: the padded-B host, the
    16-byte precondition only where B is read as it lies, and no build the kernel lost."""
    from gemmlab.cuda import transposed

    fast, fallback = registry.get("bigtile").launches
    assert fallback.with_defines({"PAD_B": 0}).when == fast.when
    assert fast.with_defines({"PAD_B": 1}).when is None
    assert fast.with_defines({"PAD_B": 1}).host == transposed.TransposedA(pad_b=True)
    for arm in ({"A_T": 0}, {"J_OUTER": 3}):  # taken out of the kernel: experiments/bigtile-arms
        with pytest.raises(ValueError, match="A_T 1 and J_OUTER 2 only"):
            fast.with_defines(arm)
    assert fast.with_defines({"WARPS_M": 4}).block == (256, 1) and fast.with_defines({"WARPS_M": 4}).tile == (256, 128)


def test_at_odd_shapes_no_part_sums_a_chain_longer_than_the_bound():
    """handoff.fewest: where N or K is not a multiple of 4, parts of at most LONGEST_CHAIN elements
    of the reduction (accuracy against cuBLAS, experiments/accuracy); elsewhere the time model alone,
    so the performance shape stays one chain (the same bits as cuBLAS); a host with no bound (0)
    splits for time alone."""
    from gemmlab.cuda import handoff

    chain = handoff.LONGEST_CHAIN
    assert handoff.fewest(6144, 4096) == 1 and handoff.fewest(4958, 7592) == -(-4958 // chain)
    assert handoff.fewest(4096, 4095) == -(-4096 // chain) and handoff.fewest(4958, 7592, 0) == 1
    assert handoff.fewest(chain, 3) == 1 and handoff.fewest(chain + 1, 3) == 2
    # 5075×4958×7592: 40 × 60 tiles of 128×128 on 264 slots, BK 16.
    k_tiles = -(-4958 // 16)
    split = handoff.parts(2400, k_tiles, 264, 16, handoff.fewest(4958, 7592))
    assert split >= handoff.fewest(4958, 7592) and -(-4958 // split) <= chain
    # The bound never asks past SPLIT_MIN_N (SPLIT_MIN_N_IDLE where the tiles leave slots idle) or
    # the counters: the policy's limits still hold.
    assert handoff.parts(70000, 4, 264, 16, 50) == 1 and handoff.parts(1, 3, 264, 16, 50) == 1
    assert handoff.parts(1, 10, 264, 16, 50) == 10 // handoff.min_k_tiles(16, idle=True)


def test_split_k_policy_splits_where_tiles_leave_slots_idle_long_reductions_too():
    """handoff.parts: parts that fill idle slots (also a mostly empty last wave), none under
    SPLIT_MIN_N elements of the reduction (SPLIT_MIN_N_IDLE where the tiles are fewer than the
    slots), however long the reduction; the perf shape's 7.8 waves are not worth splitting."""
    from gemmlab.cuda import handoff

    p = handoff.parts
    assert p(tiles=64, k_tiles=128, slots=264, depth=8) == 4  # 1024³ on an H200
    assert p(tiles=64, k_tiles=64, slots=264, depth=16) == 4  # the same with BK 16
    assert 16 < p(tiles=6, k_tiles=256, slots=264, depth=8) <= 32  # capped by SPLIT_MIN_N_IDLE: 2048 / 64
    assert p(tiles=4, k_tiles=16, slots=264, depth=16) == 4  # 256³: N = 256 holds four parts of 64
    # 1024×200×1024 in small's 32×64 tiles: a wave and more, so parts keep 128 (13 k-tiles: none);
    # 15×226×292: 5 tiles, so parts of 64 (15 k-tiles: 3).
    assert p(tiles=512, k_tiles=13, slots=396, depth=16) == 1 and p(tiles=5, k_tiles=15, slots=396, depth=16) == 3
    assert p(tiles=16, k_tiles=512, slots=264, depth=16) == 16  # a long reduction over 16 tiles
    assert p(tiles=300, k_tiles=64, slots=264, depth=16) > 1  # 1.14 waves: the second mostly empty
    assert p(tiles=256, k_tiles=128, slots=264, depth=16) == 1  # 2048³: one full wave
    assert p(tiles=2048, k_tiles=192, slots=264, depth=32) == 1  # the performance shape
    assert p(tiles=1, k_tiles=1, slots=264, depth=8) == 1 and p(tiles=0, k_tiles=128, slots=264, depth=8) == 1
    for depth in (8, 16, 32):
        for slots in (132, 264, 1056):
            for tiles in (1, 2, 7, 64, 131, 263, 264, 265, 1000, 5000):
                for k_tiles in (1, 16, 100, 1024):
                    parts = p(tiles, k_tiles, slots, depth)
                    # Never a part shorter than SPLIT_MIN_N (SPLIT_MIN_N_IDLE where the tiles leave
                    # slots idle), never more counters than the buffer.
                    assert parts == 1 or k_tiles // parts >= handoff.min_k_tiles(depth, tiles < slots) - 1
                    assert 1 <= parts <= handoff.MAX_PARTS and tiles * parts <= max(tiles, handoff.COUNTERS)
                    # Never modeled slower than not splitting.
                    assert handoff.modeled_time(tiles, k_tiles, slots, depth, parts) <= \
                        handoff.modeled_time(tiles, k_tiles, slots, depth, 1)


def test_a_tail_plan_splits_only_the_last_waves_tiles_and_only_where_it_models_faster():
    """handoff.tail_plan (bigtile's SPLIT 2): every tile in `parts`' parts, unless the tiles left
    over after whole waves, split into more parts, model at least MARGIN faster. Every tile in one
    kind or the other, no part under the accuracy floor, the counters within the buffer."""
    from gemmlab.cuda import handoff

    plan, parts, Plan = handoff.tail_plan, handoff.parts, handoff.TailPlan
    # 1348×248×6274 on 132 SMs in tma-warp's 64×64 tiles (8 blocks an SM): two waves of whole tiles, and
    # the 66 left in 4 parts of 64, where SPLIT 1 splits all 2178 tiles in two (51 k-tiles against 44).
    assert plan(2178, 16, 1056, 16) == Plan(2178, 2112, 1, 4) and parts(2178, 16, 1056, 16) == 2
    assert handoff.plan_time(Plan(2178, 2112, 1, 4), 16, 1056, 16) == 44
    assert handoff.plan_time(Plan(2178, 2178, 2, 2), 16, 1056, 16) == handoff.modeled_time(2178, 16, 1056, 16, 2) == 51
    # The performance shape (3072 tiles of 128×128 on 264 slots, 11.6 waves) and 2048³ (one wave): as SPLIT 1.
    assert plan(3072, 384, 264, 16) == Plan(3072, 3072, 1, 1) and plan(256, 128, 264, 16) == Plan(256, 256, 1, 1)
    # Fewer tiles than slots: no whole wave to keep, so SPLIT 1's parts (1024³: 4).
    assert plan(64, 128, 264, 8) == Plan(64, 64, 4, 4)
    # Slots and counters only for the tiles that split (none for a lead of whole tiles, none for no tile).
    assert Plan(2178, 2112, 1, 4).slot_count == 264 and Plan(40, 13, 3, 5).slot_count == 39 + 27 * 5
    assert Plan(40, 17, 4, 1).slot_count == 68 and not Plan(40, 0, 3, 1).split and Plan(40, 0, 3, 2).slot_count == 80
    for depth in (8, 16, 32):
        for slots in (264, 1056):
            for tiles in (1, 7, 263, 265, 300, 550, 1100, 2178, 5000):
                for k_tiles in (1, 8, 16, 40, 400):
                    for least in (1, 3):
                        got = plan(tiles, k_tiles, slots, depth, least)
                        uniform = parts(tiles, k_tiles, slots, depth, least)
                        same = Plan(tiles, tiles, uniform, uniform)
                        time = handoff.plan_time(got, k_tiles, slots, depth)
                        assert 0 <= got.lead <= tiles and got.tiles == tiles
                        assert got.blocks == got.lead * got.lead_parts + got.tail * got.tail_parts <= handoff.COUNTERS
                        floor = min(least, max(1, k_tiles // handoff.min_k_tiles(depth, True)))
                        assert got.lead_parts >= min(floor, uniform) and (got.tail == 0 or got.tail_parts >= floor)
                        if got != same:  # a tail split: the whole waves kept, the rest under a wave
                            assert -got.lead * got.lead_parts % slots < got.lead_parts and got.tail < slots
                            assert time <= handoff.plan_time(same, k_tiles, slots, depth) * (1 - handoff.MARGIN)
                        split = [(n, p) for n, p in ((got.lead, got.lead_parts), (got.tail, got.tail_parts)) if p > 1]
                        assert got.slot_count == sum(n * p for n, p in split) and got.split == (got.slot_count > 0)


def test_default_runs_every_split_bigtile_launch_on_a_line_of_blocks():
    """`default` (experiments/tail-split: the twins were faster wherever their plan split a tail):
    each split bigtile launch of its record is its tail twin, under the same precondition; every
    other launch as the record builds it; the rungs keep SPLIT 1."""
    from gemmlab.policy import default

    record = default.launches_from(default.plan()[0], launches.RUNGS[default.BUILTIN])
    shipped = registry.get("default").launches
    assert len(shipped) == len(record)
    turned = 0
    for plain, ran in zip(record, shipped, strict=True):
        if plain.source == "bigtile.cu" and plain.defines.get("SPLIT") == 1:
            assert ran.defines == dict(plain.defines) | {"SPLIT": 2} and ran.when == plain.when
            turned += 1
        else:
            assert ran == plain
    assert turned > 0
    for rung in ("splitk", "tma", "tma-warp"):
        assert all(x.defines.get("SPLIT") != 2 for x in launches.RUNGS[rung])


def test_a_tail_twin_is_its_launch_on_a_line_of_blocks(monkeypatch):
    """twins.tail_twin (bigtile's SPLIT 2, experiments/tail-split): the launch's kernel, tile,
    step, precondition and pre-passes, on the Aᵀ host's line of blocks; scratch for one slot a
    block where some tile splits; refused for a launch without the Aᵀ host."""
    from gemmlab.cuda import driver as cl
    from gemmlab.cuda import handoff, transposed
    from gemmlab.policy import default

    monkeypatch.setattr(cl, "sm_count", lambda index: 132)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    record = default.launches_from(default.plan()[0], launches.RUNGS[default.BUILTIN])
    bigtiles = [x for x in record if x.source == "bigtile.cu" and x.host is not None]
    assert bigtiles
    for plain in bigtiles:
        twin = twins.tail_twin(plain)
        assert twin.defines == dict(plain.defines) | {"SPLIT": 2} and twin.name == f"tail-{plain.name}"
        assert (twin.when, twin.tile, twin.depth, twin.block) == (plain.when, plain.tile, plain.depth, plain.block)
        assert twin.host == transposed.TransposedA(pad_b=plain.host.pad_b, split=True, tail=True)
        assert twin.kernels()[1:] == plain.kernels()[1:]  # the same pre-passes
    tma_warp = next(x for x in bigtiles if x.tile == (64, 64) and x.host.pad_b)
    twin = twins.tail_twin(tma_warp)
    assert twin.host.plan(twin, 1348, 248, 6274) == handoff.TailPlan(2178, 2112, 1, 4)
    operands = twin.host.operand_bytes(1348, 248, 6274)
    slot = handoff.slot_floats(twin.threads, transposed.ACCUMULATORS) * 4
    # Slots only for the 66 tiles that split: the whole waves' tiles use none.
    assert twin.workspace_bytes(1348, 248, 6274) == transposed.up(operands) + 66 * 4 * slot
    # As SPLIT 1 where it splits every tile alike; nothing saved where no tile splits.
    assert twin.workspace_bytes(829, 4858, 193) == tma_warp.workspace_bytes(829, 4858, 193)
    assert twin.workspace_bytes(8, 8, 8) == transposed.up(twin.host.operand_bytes(8, 8, 8))
    assert "the last wave's tiles in more parts" in twin.host.label
    with pytest.raises(ValueError, match="not a bigtile launch"):
        twins.tail_twin(launches.TILING2D)
    # Not rebuilt from its knobs: that builds SPLIT 0 or 1.
    with pytest.raises(ValueError, match="tail_twin"):
        twins.split_twin(twin)
    with pytest.raises(ValueError, match="SPLIT is 0, 1"):
        tma_warp.with_defines({"SPLIT": 3})


def test_the_swapped_wgmma_split_twins_split_where_the_clusters_are_few(monkeypatch):
    """launches.wgmma_swap_split_launches (wgmma_swap.cu's SPLIT, experiments/swap-split):
    parts by handoff.parts over the tiles a cluster takes as one, for the clusters the GPU holds
    (66 on 132 SMs); a slot of 256 × 128 floats for each part of each block's tile, after any
    padded operands, only where the call splits; the shipped launches unchanged."""
    from gemmlab.cuda import driver as cl
    from gemmlab.cuda import handoff, hopper

    monkeypatch.setattr(cl, "sm_count", lambda index: 132)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    shipped = launches.wgmma_swap_launches()
    for plain, split in zip(shipped, launches.wgmma_swap_split_launches(), strict=True):
        assert split.defines == dict(plain.defines) | {"SPLIT": 1} and split.when == plain.when
        assert split.host == hopper.SwappedOperands(padded=plain.host.padded, split=True)
        assert plain.host.parts(plain, 1024, 8192, 1024) == 1 and "SPLIT" not in plain.defines
        # 1024×8192×1024: 4 × 4 cluster tiles (256 × 2·128) for 66 clusters, 256 steps of 32
        assert split.host.parts(split, 1024, 8192, 1024) == handoff.parts(16, 256, 66, 32) == 4
        for shape in ((8192, 6144, 4096), (2048, 2048, 2048), (541, 57, 1338)):
            assert split.host.parts(split, *shape) == 1
            assert split.workspace_bytes(*shape) == plain.workspace_bytes(*shape)
        slot = hopper.CONSUMERS * hopper.SWAP_ACCUMULATORS * 4
        operands = plain.workspace_bytes(1024, 8192, 1024)
        saved = 32 * 4 * slot  # the 32 blocks' own tiles, 4 parts each
        assert split.workspace_bytes(1024, 8192, 1024) == (hopper.up(operands) + saved if operands else saved)
        assert split.host.label and not plain.host.label


def test_the_3xtf32_split_twins_split_where_the_tiles_leave_sms_idle(monkeypatch):
    """launches.wgmma_3xtf32_split_launches (wgmma_3xtf32.cu's SPLIT, experiments/3x-split):
    parts by handoff.parts over the 128×128 tiles, for one block an SM (132), with no bound on a
    part's chain; a slot of 256 × 64 floats for each part of each tile after the rest of the
    workspace, only where the call splits; the shipped launches unchanged; split-K only with the
    3xTF32 planes."""
    from gemmlab.cuda import driver as cl
    from gemmlab.cuda import handoff, hopper

    monkeypatch.setattr(cl, "sm_count", lambda index: 132)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    shipped = launches.RUNGS["wgmma-3xtf32"]
    for plain, split in zip(shipped, launches.wgmma_3xtf32_split_launches(), strict=True):
        assert split.defines == dict(plain.defines) | {"SPLIT": 1} and split.when == plain.when
        assert split.host == dataclasses.replace(plain.host, split=True) and not plain.host.split
        assert plain.host.parts(plain, 512, 4096, 512) == 1 and "SPLIT" not in plain.defines
        # 512×4096×512: 16 tiles for 132 SMs, 128 steps of 32
        assert split.host.parts(split, 512, 4096, 512) == handoff.parts(16, 128, 132, 32) == 8
        # an odd N and K: still no floor of parts (3xTF32 promotes every step)
        assert split.host.parts(split, 105, 7416, 699) == handoff.parts(6, 232, 132, 32) > handoff.fewest(7416, 699)
        for shape in ((8192, 6144, 4096), (2048, 2048, 2048), (541, 57, 1338)):
            assert split.host.parts(split, *shape) == 1
            assert split.workspace_bytes(*shape) == plain.workspace_bytes(*shape)
        slot = hopper.CONSUMERS * hopper.ACCUMULATORS_3X * 4
        rest = plain.workspace_bytes(512, 4096, 512)
        assert split.workspace_bytes(512, 4096, 512) == hopper.up(rest) + 16 * 8 * slot
        assert split.host.label and not plain.host.label
    with pytest.raises(ValueError, match="split-K"):
        hopper.TmaOperands(a="round", b="round", split=True)


def _first(chain, m: int, n: int, k: int):
    """The launch of `chain` a call of that shape runs (CPU tensors: the shape's preconditions)."""
    a, b, c = torch.empty(m, n), torch.empty(n, k), torch.empty(m, k)
    return next(x for x in chain if x.when is None or x.when(a, b, c, m, n, k))


@pytest.mark.parametrize("rung,twin,plain", [("tf32", "split-in-place", "in-place"),
                                              ("3xtf32", "split-a-in-place", "a-in-place")])
def test_the_tensor_dispatchers_split_where_the_tiles_are_few_in_one_wave(monkeypatch, rung, twin, plain):
    """`tf32` and `3xtf32` run their Hopper kernel's split twin where it splits in one wave
    (`handoff.OneWave`, from `SPLIT_OUTPUTS`), the unsplit kernel where the tiles fill the GPU or a
    split would take more than one wave, and neither over a reduction shorter than HOPPER_MIN_N
    (on 132 SMs; aligned operands)."""
    from gemmlab.cuda import driver as cl
    from gemmlab.cuda import handoff

    monkeypatch.setattr(cl, "sm_count", lambda index: 132)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)

    def picked(m, n, k):
        return _first(registry.get(rung).launches, m, n, k).name

    assert picked(1024, 8192, 1024) == picked(512, 4096, 512) == twin
    assert picked(2048, 2048, 2048) == picked(8192, 6144, 4096) == picked(1448, 2048, 1448) == plain
    assert picked(3000, 600, 700) == plain  # 144 tiles, or 36 cluster tiles for 66 clusters: no one wave
    assert picked(541, 57, 1338) not in (twin, plain)
    wave = next(x for x in registry.get(rung).launches if x.name == twin).when.parts[-1]
    assert isinstance(wave, handoff.OneWave) and wave.parts(1448, 2048, 1448, 132) == 1
    assert wave.units(1024, 1024) * wave.parts(1024, 8192, 1024, 132) <= 132 // wave.cluster


@pytest.mark.parametrize("rung,hopper_rung,narrow,cols", [("tf32", "wgmma-swap", "wgmma_swap", 256),
                                                          ("3xtf32", "wgmma-3xtf32", "wgmma_3xtf32", 128)])
def test_the_tensor_chains_run_the_hopper_kernels_from_three_quarters_of_their_width_and_split_in_long_parts(
        monkeypatch, rung, hopper_rung, narrow, cols):
    """`tf32` and `3xtf32` (experiments/width-parts): the Hopper launches where C is at least three
    quarters of their blocks side by side wide, not below; their split twins only where each part
    is at least `SPLIT_LEAST` long (934×949×282 splits wgmma-swap's in parts of 141)."""
    from gemmlab.cuda import driver as cl
    from gemmlab.cuda import hopper

    monkeypatch.setattr(cl, "sm_count", lambda index: 132)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    chain = registry.get(rung).launches
    assert tensor.WIDTH_FLOOR == (3, 4)
    assert _first(chain, 8192, 1024, cols * 3 // 4).entry == narrow  # many row tiles, C 3/4 of the blocks
    assert _first(chain, 8192, 1024, cols * 3 // 4 - 4).entry != narrow
    assert _first(chain, 1024, 8192, 1024).name.startswith("split")
    twin = next(x for x in chain if x.name.startswith("split"))
    least = tensor.SPLIT_LEAST[hopper_rung]
    m, n, k = 934, 949, 282
    parts = hopper.one_wave(twin).parts(m, n, k, 132)
    assert parts > 1 and -(-n // parts) < least  # the twin would split here, in parts too short
    assert not _first(chain, m, n, k).name.startswith("split")
    assert "each part at least" in str(twin.when) and f">= {least}" in twin.when.cpp()


def test_splitk_scratch_holds_the_saved_parts_only_when_it_splits(monkeypatch):
    """The workspace is the operands, plus one 64 KB slot per part only where a shape is split."""
    from gemmlab.cuda import driver as cl
    from gemmlab.cuda import pad

    monkeypatch.setattr(cl, "sm_count", lambda index: 132)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    fast = registry.get("splitk").launches[0]
    host = fast.host
    for (m, n, k), parts in (((8192, 6144, 4096), 1), ((1024, 1024, 1024), 4), ((300, 2048, 200), 29)):
        assert host.parts(fast, m, n, k) == parts
        saved = (-(-m // 128)) * (-(-k // 128)) * parts if parts > 1 else 0
        expect = pad.up(host.operand_bytes(m, n, k)) + saved * 128 * 128 * 4
        assert fast.workspace_bytes(m, n, k) == expect


def test_splitk_is_bigtile_with_split_and_bigtile_keeps_its_macros():
    """splitk's launches are bigtile's file with SPLIT 1 and the split host; bigtile's own leave
    SPLIT undefined, so their cubins are the ones they were measured with."""
    from gemmlab.cuda import transposed

    for plain, split in zip(registry.get("bigtile").launches, registry.get("splitk").launches, strict=True):
        assert "SPLIT" not in plain.defines and split.defines["SPLIT"] == 1
        assert split.source == plain.source and split.host == transposed.TransposedA(pad_b=plain.host.pad_b, split=True)
        assert split.when == plain.when


def test_needs_by_feature_sm90a_on_that_gpu_alone_the_others_floors():
    """wgmma and setmaxnreg exist in sm_90a alone: that need runs on 9.0 exactly and builds for
    sm_90a only; TMA's sm_90 and cp.async's sm_80 are floors (later GPUs, later targets)."""
    from gemmlab.cuda.needs import Needs, cc_of

    A, S90, S80 = Needs.SM90A, Needs.SM90, Needs.SM80
    assert A.runs_on((9, 0)) and not A.runs_on((10, 0)) and not A.runs_on((8, 9)) and not A.runs_on((12, 0))
    assert S90.runs_on((9, 0)) and S90.runs_on((10, 0)) and not S90.runs_on((8, 9))
    assert S80.runs_on((9, 0)) and S80.runs_on((12, 0)) and not S80.runs_on((7, 5))
    assert A.builds_for("sm_90a") and not A.builds_for("sm_90") and not A.builds_for("sm_100a")
    assert S90.builds_for("sm_90") and S90.builds_for("sm_100a") and not S90.builds_for("sm_80")
    assert Needs.ANY.builds_for("sm_75") and not S80.builds_for("sm_75")
    assert Needs.of(S80, A, Needs.ANY) is A and Needs.of() is Needs.ANY
    assert [n.bit for n in Needs] == [0, 1, 2, 4]
    assert A.short == "sm_90a only" and S80.short == "sm_80+"
    assert cc_of("sm_90a") == (9, 0) and cc_of("sm_120") == (12, 0) and cc_of("sm_100f") == (10, 0)
    swap = registry.get("wgmma-swap")
    assert swap.needs is A and "sm_90a only" in swap.launches[0].precondition
    # TMA is sm_90's: the tma rung runs on any Hopper or later GPU, not only on sm_90a builds.
    assert registry.get("tma").needs is S90 and registry.get("tma").launches[0].all_needs is S90
    # A launch needs what its pre-passes need too: the TF32 transpose is sm_80's.
    assert registry.get("wgmma-tma").launches[0].kernels()[1].needs is S80


def test_a_plain_prepared_launch_is_one_ctypes_call_with_the_configs_numbers(monkeypatch):
    # cuda.bindings' cuLaunchKernelEx cost 7–9 µs of host time a launch on the H200's host
    # (experiments/host-overhead); a launch without a cluster goes through libcuda's cuLaunchKernel
    # by ctypes, with the numbers the driver config holds, and its parameter array.
    from cuda.bindings import driver as cu

    from gemmlab.cuda import driver as cl

    calls = []
    monkeypatch.setattr(cl, "_launcher", lambda: lambda *a: calls.append(a) or 0)
    pointers, keep = pack((0x1000, np.int32(7)))
    config = cu.CUlaunchConfig()
    kernel = type("K", (), {"name": "k", "handle": 0xABC})()
    plain = (0xABC, 3, 2, 1, 128, 1, 1, 4096, 0x55)
    cl.Prepared(kernel, config, pointers, keep, plain).run()
    assert calls == [(*plain, ctypes.addressof(pointers), None)]
    # A failing launch says which kernel and the driver's name for the error, in one line.
    monkeypatch.setattr(cl, "_launcher", lambda: lambda *a: 1)
    with pytest.raises(RuntimeError, match="launching k failed: CUDA_ERROR_INVALID_VALUE"):
        cl.Prepared(kernel, config, pointers, keep, plain).run()


def test_a_cluster_launch_keeps_cuLaunchKernelEx(monkeypatch):
    from cuda.bindings import driver as cu

    from gemmlab.cuda import driver as cl

    monkeypatch.setattr(cl, "_launcher", lambda: pytest.fail("a cluster launch has no plain form"))
    seen = []
    monkeypatch.setattr(cu, "cuLaunchKernelEx", lambda *a: seen.append(a) or (cu.CUresult.CUDA_SUCCESS,))
    pointers, keep = pack((0x1000,))
    kernel = type("K", (), {"name": "k", "handle": 0xABC})()
    cl.Prepared(kernel, cu.CUlaunchConfig(), pointers, keep, None).run()
    assert len(seen) == 1 and seen[0][1] == 0xABC


def test_default_turns_smalls_tile_where_the_output_is_narrow():
    """Where the record's winner is `small`, `default` runs its 64×32 twin at a narrow output
    (K ≤ NARROW_COLS over M·N ≥ NARROW_A) and the winner itself elsewhere; a tiled class has no
    twin (its K is a multiple of 128)."""

    from gemmlab.policy import default

    chain = default.launches()

    def runs(m, n, k):
        return _first(chain, m, n, k)

    narrow = runs(2047, 1000, launches.NARROW_COLS - 1)
    assert narrow.name == "micro-odd narrow" and narrow.tile == (64, 32)
    assert runs(2048, 1000, 16).name == "micro-aligned narrow"
    # M·N under NARROW_A: the winner's own 32×64, here its twin of 16-byte copies of A (N = 200)
    own = runs(2047, 200, 31)
    assert own.name == "micro-odd a4b1" and own.tile == (32, 64)
    assert runs(2047, 1001, launches.NARROW_COLS + 1).name == "micro-odd"
    assert not any(x.name.endswith("tiled narrow") for x in chain)
    assert all(x.defines["BM"] == 64 and x.defines["BN"] == 32 for x in chain if x.name.endswith(" narrow"))


def test_thins_savers_are_the_kernels_slot_threads():
    """The host sizes each part's slot by `thin_savers` (threads, sums each); the kernel lays the
    slots out by its SLOT_ROWS and SLOT_COLS and the sums it hands the tree (thin.cu): numbers
    written twice, checked here, with the launches' COLS and ROWS."""
    import re
    from pathlib import Path

    text = (Path(launches.__file__).parent / "kernels" / "cuda" / "thin.cu").read_text()
    macros = dict(re.findall(r"^#define (\w+) (.+?)\s*$", text, flags=re.M))
    assert "combine<THIN * COLS, SLOT_ROWS," in text and "combine<THIN, SLOT_COLS," in text
    assert int(re.search(r"#define THIN (\d+)", text).group(1)) == launches.THIN
    assert int(macros["WARPS"]) == launches.THIN_WARPS
    for width in (1, 2, 4):
        rows, cols = launches.thin_launch("rows", width), launches.thin_launch("cols", width)
        env = {"WARPS": launches.THIN_WARPS, "ROWS": cols.defines["ROWS"], "COLS": rows.defines["COLS"],
               "THIN": launches.THIN}
        slot = {name: eval(macros[name], {}, env) for name in ("SLOT_ROWS", "SLOT_COLS")}  # noqa: S307
        assert (slot["SLOT_ROWS"], env["THIN"] * width) == launches.thin_savers("rows", width)
        assert (slot["SLOT_COLS"], env["THIN"]) == launches.thin_savers("cols", width)
        assert (rows.host.savers, rows.host.accumulators) == launches.thin_savers("rows", width)
        assert (cols.host.savers, cols.host.accumulators) == launches.thin_savers("cols", width)
        assert rows.tile == (launches.THIN, 32 * width) and cols.tile == (launches.THIN_WARPS * width, launches.THIN)


@pytest.mark.parametrize("impl", [i for i in registry.IMPLEMENTATIONS if i.launches], ids=lambda i: i.name)
def test_where_a_rung_says_it_runs_its_fallback_runs(impl):
    """`can_run_on` reads the rung's `needs`; dispatch takes the first launch whose own needs hold,
    and the fallback's precondition always holds. So on every GPU the rung says it runs on, the
    fallback must run too: else a shape no faster launch takes finds no launch at all."""
    fallback = impl.launches[-1]
    assert fallback.when is None
    assert fallback.all_needs <= impl.needs, (impl.name, str(fallback.all_needs), str(impl.needs))


def test_default_puts_width_twins_only_where_the_class_lets_them_run():
    """`launches.width_twins` before a 4-byte `small` winner: in an odd-n class (N % 4 != 0) none
    copies A 16 bytes at a time, in an odd class (K % 4 != 0) none copies B so; each other pair
    of widths is there, in COPY_WIDTHS' order, ahead of the winner."""
    from gemmlab.policy import default

    chain = default.launches()
    for layout, banned in (("odd-n", "VEC_A"), ("odd", "VEC_B")):
        twins = [x for x in chain if x.name.startswith(f"micro-{layout} a")]
        widths = [(x.defines["VEC_A"], x.defines["VEC_B"]) for x in twins]
        want = [w for w in launches.COPY_WIDTHS[1:-1] if w[0 if banned == "VEC_A" else 1] != 4]
        assert widths == want, (layout, widths)
        winner = next(i for i, x in enumerate(chain) if x.name == f"micro-{layout}")
        assert all(chain.index(x) < winner for x in twins)


@pytest.mark.parametrize("sms", [16, 100, 132, 160])
def test_default_lists_a_thin_launch_in_every_class_a_thin_shape_can_fall_in(sms):
    """`spaces._thin_reaches` drops a `thin` launch only from classes none of its shapes reach:
    shapes with M ≤ its rows (or K ≤ its columns) and the other sides up to problem.MAX_DIM fall in
    a class it keeps, on any SM count; on the H200's 132 SMs that is micro alone."""
    import random

    from gemmlab import problem
    from gemmlab.policy.classes import SIZES, ShapeClass, classify
    from gemmlab.policy.spaces import _thin_reaches

    rng = random.Random(sms)
    most = problem.MAX_DIM
    for launch in twins.default_thin_launches():
        rows, cols = launch.when.rows, launch.when.cols
        for _ in range(300):
            big = [most, rng.randint(1, most), most - rng.randint(0, 64)]
            rng.shuffle(big)
            m, n, k = (rng.randint(1, rows), big[0], big[1]) if rows else (big[0], big[1], rng.randint(1, cols))
            assert _thin_reaches(launch, classify(m, n, k, sms), sms), (launch.name, (m, n, k), sms)
        kept = [size for size in SIZES if _thin_reaches(launch, ShapeClass(size, "odd"), sms)]
        if sms == 132:
            assert kept == ["micro"], (launch.name, kept)
