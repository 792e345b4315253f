"""Split-K for the strict-FP32 kernels (bigtile's SPLIT knob, the `small` rung): how many parts,
and the scratch and counters the parts meet in (`kernels/cuda/splitk.cuh`).

Where a shape's tiles leave resident blocks idle, or fill a last wave mostly empty, each tile's
reduction is split into contiguous parts (grid z) that meet in a pairwise tree: no part waits on
another, and the adds come in a fixed order, so a call gives the same bits every time.

A blocked sum is closer to the exact product than one chain, so long reductions split too.
Where N or K is not a multiple of 4 (cuBLAS sums those in another order) no part's chain is
longer than `LONGEST_CHAIN`; aligned shapes split for time alone, keeping cuBLAS's bits where
their tiles fill the GPU (kernels/cuda/bigtile_splitk.md, experiments/README.md#accuracy).

`parts` models a call's time in waves of blocks, each a part's k-tiles plus a fixed cost, plus a
tree level per halving. The exported file's `split_parts` and `split_least` are the same rules
in C++ (tests run both).

`SplitGrid` is the host of a launch that splits so with its operands in place (the `small`, `thin`
and `mma-split` kernels): the tile grid with a third dimension, the parts, and two more arguments
than ``(A, B, C, M, N, K)``, the scratch for the parts' sums and the counters.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

from . import driver as cl
from .dispatch import Call, Kernel, KernelCall, Launch

#: The shortest reduction a part keeps, in elements of N (16 k-tiles of BK 8).
SPLIT_MIN_N = 128
#: The same where there are fewer tiles than slots: a shorter part fills SMs that would wait, where
#: in a full wave it only slowed the call (experiments/README.md#split-min).
SPLIT_MIN_N_IDLE = 64
#: The most parts a tile's reduction is split into.
MAX_PARTS = 64
#: The model's costs, in elements of N of one block: a part's fixed cost, and one tree level's.
FIXED_N = 32
LEVEL_N = 16
#: A split must model at least this much faster than the fewer parts it replaces.
MARGIN = 0.05
#: Counters per buffer: at least tiles × parts of any split grid (`parts` never asks for more).
COUNTERS = 1 << 17
#: The longest FFMA chain a part sums where N or K is not a multiple of 4, in elements of N: 8 parts
#: of a reduction of about 5,000, the fewest tried that beat cuBLAS against the float64 product at
#: every odd shape (experiments/README.md#accuracy). 0 where a host does not bound it.
LONGEST_CHAIN = 640


def min_k_tiles(depth: int, idle: bool = False) -> int:
    """The fewest k-tiles (reduction tiles of `depth`, BK, elements) a part keeps: SPLIT_MIN_N's worth, or
    SPLIT_MIN_N_IDLE's where the unsplit tiles leave slots `idle`."""
    return max(1, -(-(SPLIT_MIN_N_IDLE if idle else SPLIT_MIN_N) // depth))


def modeled_time(tiles: int, k_tiles: int, slots: int, depth: int, p: int) -> float:
    """A grid of `tiles` × `p` blocks on `slots` resident blocks, in k-tiles."""
    waves = -(-tiles * p // slots)
    per_part = -(-k_tiles // p) + FIXED_N / depth
    return waves * per_part + (LEVEL_N / depth) * (p - 1).bit_length()  # levels: ceil(log2 p)


def fewest(n: int, k: int, chain: int = LONGEST_CHAIN) -> int:
    """The least parts a reduction of `n` is split into for accuracy: none past `chain` elements
    where N or K is not a multiple of 4 (the module's note), 1 elsewhere or where `chain` is 0."""
    if not chain or not (n % 4 or k % 4):
        return 1
    return -(-n // chain)


def parts(tiles: int, k_tiles: int, slots: int, depth: int, least: int = 1) -> int:
    """How many parts each tile's `k_tiles` k-tiles of `depth` elements are split into, for
    `slots` resident blocks: from `least` (`fewest`) up, as far as SPLIT_MIN_N (SPLIT_MIN_N_IDLE
    where there are fewer tiles than slots), MAX_PARTS and the counters allow, the fewest whose
    modeled time is within MARGIN of the best."""
    if tiles < 1 or slots < 1:
        return 1
    limit = max(1, min(MAX_PARTS, k_tiles // min_k_tiles(depth, tiles < slots), COUNTERS // tiles))
    low = max(1, min(least, limit))
    times = [modeled_time(tiles, k_tiles, slots, depth, p) for p in range(low, limit + 1)]
    best = min(times)
    return next(p for p, t in enumerate(times, start=low) if t <= best * (1 + MARGIN))


@dataclass(frozen=True)
class TailPlan:
    """Split-K on a line of blocks whose tiles need not all have as many parts (bigtile's SPLIT 2):
    the first `lead` of `tiles` tiles in `lead_parts` parts each, the rest (the tail) in
    `tail_parts`. One block a part, the lead's blocks first, each kind part by part. Only a tile
    in several parts uses scratch slots and counters: lead tile t's from t·lead_parts, the tail's
    after the lead's where those split, else from 0."""

    tiles: int
    lead: int
    lead_parts: int
    tail_parts: int

    @property
    def tail(self) -> int:
        return self.tiles - self.lead

    @property
    def blocks(self) -> int:
        return self.lead * self.lead_parts + self.tail * self.tail_parts

    @property
    def lead_slots(self) -> int:
        """The lead tiles' scratch slots and counters: one a block where they split, else none."""
        return self.lead * self.lead_parts if self.lead_parts > 1 else 0

    @property
    def slot_count(self) -> int:
        """Scratch slots, and counters, the call uses: one a block of the tiles that split."""
        return self.lead_slots + (self.tail * self.tail_parts if self.tail_parts > 1 else 0)

    @property
    def split(self) -> bool:
        """Some tile has more than one part."""
        return self.slot_count > 0


def plan_time(plan: TailPlan, k_tiles: int, slots: int, depth: int) -> float:
    """`modeled_time` of a plan: its lead tiles' waves, then its tail's (the tail's blocks start as
    the lead's leave; modeled as after them, which is exact where the lead fills whole waves)."""
    lead = modeled_time(plan.lead, k_tiles, slots, depth, plan.lead_parts) if plan.lead else 0.0
    tail = modeled_time(plan.tail, k_tiles, slots, depth, plan.tail_parts) if plan.tail else 0.0
    return lead + tail


@lru_cache(maxsize=1024)  # pure in its numbers, and its search is slow Python (bigtile_splitk.md)
def tail_plan(tiles: int, k_tiles: int, slots: int, depth: int, least: int = 1) -> TailPlan:
    """The parts of a line of blocks (bigtile's SPLIT 2): every tile in `parts` parts (as SPLIT 1),
    unless a tail split models at least MARGIN faster: the whole waves' tiles in `least` parts (or
    `parts`'), the tiles left over in the parts that make their wave shortest, since otherwise they
    hold their wave's idle slots for a whole tile's time (experiments/README.md#tail-split)."""
    uniform = parts(tiles, k_tiles, slots, depth, least)
    best = TailPlan(tiles, tiles, uniform, uniform)
    if tiles < 1 or slots < 1:
        return best
    bar = plan_time(best, k_tiles, slots, depth) * (1 - MARGIN)
    limit = max(1, min(MAX_PARTS, k_tiles // min_k_tiles(depth, True)))
    low = max(1, min(least, limit))
    found = None
    for lead_parts in sorted({low, uniform}):
        waves = tiles * lead_parts // slots
        lead = waves * slots // lead_parts
        if waves == 0 or lead >= tiles:
            continue
        for tail_parts in range(low, limit + 1):
            plan = TailPlan(tiles, lead, lead_parts, tail_parts)
            if plan.blocks > COUNTERS:
                break
            time = plan_time(plan, k_tiles, slots, depth)
            if time <= bar and (found is None or time < found[0]):
                found = (time, plan)
    return found[1] if found else best


def _cpp_policy(tiles: str, k_tiles: str, slots: str, depth: int, chain: int) -> str:
    """The arguments the exported file's split_parts and split_tail_plan share, in their order."""
    return (f"{tiles}, {k_tiles}, {slots}, {min_k_tiles(depth)}, {min_k_tiles(depth, True)}, {MAX_PARTS}, "
            f"{COUNTERS}, {FIXED_N / depth!r}, {LEVEL_N / depth!r}, {MARGIN!r}, split_least(N, K, {chain})")


def split_call(tiles: str, k_tiles: str, slots: str, depth: int, chain: int = LONGEST_CHAIN) -> str:
    """`parts(..., fewest(N, K, chain))` as a C++ expression of the exported file's `split_parts`
    and `split_least` (export/host_runtime.cuh), for `tiles` over `k_tiles` k-tiles of `depth` elements
    on `slots` (C++ expressions, all three; N and K are the solve's)."""
    return f"split_parts({_cpp_policy(tiles, k_tiles, slots, depth, chain)})"


def tail_call(tiles: str, k_tiles: str, slots: str, depth: int, chain: int = LONGEST_CHAIN) -> str:
    """`tail_plan(..., fewest(N, K, chain))` as a C++ statement of the exported file's
    `split_tail_plan`: it sets the ints `lead`, `lead_parts` and `tail_parts` (declared before it)."""
    return f"split_tail_plan({_cpp_policy(tiles, k_tiles, slots, depth, chain)}, &lead, &lead_parts, &tail_parts);"


@dataclass(frozen=True)
class OneWave:
    """The parts of a persistent split-K kernel (wgmma_swap.cu's and wgmma_3xtf32.cu's SPLIT):
    `parts` for the units a cluster of `cluster` blocks takes as one (tiles of `tile`, rows of C by
    columns, `cluster` of them side by side), over reductions of `depth` elements, one block an SM;
    as a launch precondition (`When`'s trio), that the call splits. Never more units than one
    wave of clusters: splits over more lost to the unsplit kernels even where `parts` modeled them
    faster (wgmma_swap.md, wgmma_3xtf32.md). The SM count is this GPU's, at the call."""

    tile: tuple[int, int]
    depth: int
    cluster: int = 1
    #: As a precondition, also that each part is at least this many elements of the reduction
    #: (parts of fewer lost to the unsplit chain: experiments/README.md#width-parts). 0: no least part.
    least: int = 0

    def units(self, m: int, k: int) -> int:
        rows, cols = self.tile
        return -(-m // rows) * -(-k // (cols * self.cluster))

    def parts(self, m: int, n: int, k: int, sms: int) -> int:
        slots, units = sms // self.cluster, self.units(m, k)
        found = parts(units, -(-n // self.depth), slots, self.depth)
        # the counters are the blocks' (a cluster's tiles each have their own)
        return max(1, min(found, slots // units, COUNTERS // (units * self.cluster)))

    def __call__(self, a, b, c, m: int, n: int, k: int) -> bool:
        from . import driver as cl

        parts = self.parts(m, n, k, cl.sms())
        return parts > 1 and -(-n // parts) >= self.least

    def __str__(self) -> str:
        rows, cols = self.tile
        least = f", each part at least {self.least} long" if self.least else ""
        return (f"split-K pays in one wave: {rows}×{cols * self.cluster} tiles leave clusters of {self.cluster} "
                f"idle (cuda/handoff.OneWave > 1 part{least})")

    def cpp_units(self) -> str:
        """`units` as a C++ expression over M and K (the exported file's)."""
        rows, cols = self.tile
        return f"ceil_div(M, {rows}) * ceil_div(K, {cols * self.cluster})"

    def cpp_parts(self, units: str | None = None) -> str:
        """`parts` as a C++ expression over M, N, K and sm_count() (the exported file's); `units`: a
        C++ name already holding `cpp_units()`, else that expression."""
        units = units or f"({self.cpp_units()})"
        slots = f"(sm_count() / {self.cluster})"
        found = split_call(units, f"ceil_div(N, {self.depth})", slots, self.depth, 0)
        return (f"std::max(1, std::min(std::min({found}, {slots} / {units}), "
                f"{COUNTERS} / ({units} * {self.cluster})))")

    def cpp(self) -> str:
        if not self.least:
            return f"{self.cpp_parts()} > 1"
        # The parts named once, in a lambda called where it stands (the precondition is an expression).
        return f"[&] {{ const int parts = {self.cpp_parts()}; return parts > 1 && ceil_div(N, parts) >= {self.least}; }}()"


def slot_floats(threads: int, per_thread: int) -> int:
    """One block's partial sums: `per_thread` accumulators for each of its threads."""
    return threads * per_thread


_counters: dict[tuple[int, int], torch.Tensor] = {}
_in_graphs: list[torch.Tensor] = []  # counters made inside callers' captures: their graphs' for good


def counters(device: torch.device, count: int) -> torch.Tensor:
    """The zeroed hand-off counters of torch's current stream on `device`, for `count` of them.

    One buffer per device and stream, made once: every counter a call raises is lowered by the
    part that arrives last, so the buffer is zero again after every call, and calls on one
    stream are ordered. Inside a caller's graph capture, a fresh one that their graph zeroes.
    """
    if count > COUNTERS:
        raise ValueError(f"{count} split-K counters asked for; the buffer holds {COUNTERS}")
    import torch

    index = torch.cuda.current_device() if device.index is None else device.index
    if torch.cuda.is_current_stream_capturing():
        # Inside a caller's graph capture the zeroing is captured, not run: a buffer made here is
        # zeroed by each replay of their graph and belongs to it, so it is not shared with others.
        # Nor is it freed: their graph replays into it for as long as it lives, which is not seen here.
        buf = torch.zeros(max(count, 1), dtype=torch.int32, device=torch.device("cuda", index))
        _in_graphs.append(buf)
        return buf
    key = (index, torch.cuda.current_stream(index).cuda_stream)
    buf = _counters.get(key)
    if buf is None:
        buf = _counters[key] = torch.zeros(COUNTERS, dtype=torch.int32, device=torch.device("cuda", index))
    return buf


@dataclass(frozen=True)
class SplitPays:
    """A launch precondition: `parts` splits the shape's tiles of `tile` (rows of C, columns) over
    reductions of `depth` elements, on `sms` SMs of `blocks` resident blocks each (`When`'
    trio: calling decides, `str()` says it, `cpp()` is the exported file's test).

    `default` puts a split-K twin of an unsplit winner before it under this: where the tiles
    fill whole waves the winner runs as it was timed, where a last wave would leave slots idle
    the same kernel splits. The SM count is the tune record's, as `InClass`'s is.
    """

    tile: tuple[int, int]
    depth: int
    blocks: int
    sms: int
    chain: int = LONGEST_CHAIN  # the host's bound (`fewest`)

    def parts(self, m: int, n: int, k: int) -> int:
        rows, cols = self.tile
        return parts(-(-m // rows) * -(-k // cols), -(-n // self.depth), self.sms * self.blocks, self.depth,
                     fewest(n, k, self.chain))

    def __call__(self, a, b, c, m: int, n: int, k: int) -> bool:
        return self.parts(m, n, k) > 1

    def __str__(self) -> str:
        rows, cols = self.tile
        return (f"split-K pays: {rows}×{cols} tiles on {self.sms} SMs × {self.blocks} blocks leave slots idle, "
                f"or N or K is odd and N > {self.chain} (cuda/handoff.parts > 1)")

    def cpp(self) -> str:
        rows, cols = self.tile
        return split_call(f"ceil_div(K, {cols}) * ceil_div(M, {rows})", f"ceil_div(N, {self.depth})",
                          str(self.sms * self.blocks), self.depth, self.chain) + " > 1"


#: Accumulators per thread of the `small` kernel (4×4): what a split part saves.
ACCUMULATORS = 16


def policy(launch: Launch, m: int, n: int, k: int, chain: int = LONGEST_CHAIN) -> tuple[int, ...]:
    """What the split policy is given: tiles, k-tiles, resident slots (MIN_BLOCKS blocks
    per SM), the depth, and the least parts (`fewest`)."""
    slots = cl.sms() * int(launch.defines["MIN_BLOCKS"])
    across, down = launch.tiles(m, k)
    return across * down, -(-n // launch.depth), slots, launch.depth, fewest(n, k, chain)


@dataclass(frozen=True)
class SplitGrid:
    """Host of a launch whose kernel splits the reduction over grid z and reads A and B in place;
    each part saves `accumulators` floats a thread (`small` 16, `mma-split` 32)."""

    accumulators: int = ACCUMULATORS
    #: The threads whose sums a part saves, the block's first (`thin`'s sums sit in a few); 0: all.
    savers: int = 0
    #: The longest chain a part sums where N or K is odd (`fewest`); 0: unbounded (TF32).
    chain: int = LONGEST_CHAIN
    label = "split-K where the tiles leave SMs idle"

    def slot_floats(self, launch: Launch) -> int:
        """Floats of one part's saved sums (its slot in the scratch)."""
        return slot_floats(self.savers or launch.threads, self.accumulators)

    def parts(self, launch: Launch, m: int, n: int, k: int) -> int:
        return parts(*policy(launch, m, n, k, self.chain))

    def kernels(self, launch: Launch) -> tuple[Kernel, ...]:
        return ()

    def workspace_bytes(self, launch: Launch, m: int, n: int, k: int) -> int:
        across, down = launch.tiles(m, k)
        parts = self.parts(launch, m, n, k)
        saved = across * down * parts if parts > 1 else 0
        return saved * self.slot_floats(launch) * 4

    def kernel_calls(self, launch: Launch, call: Call, workspace: torch.Tensor | None) -> list[KernelCall]:
        m, n, k = call.m, call.n, call.k
        across, down, _ = launch.grid(m, k)
        parts = self.parts(launch, m, n, k)
        work = workspace.data_ptr() if workspace is not None else 0
        flags = counters(call.a.device, across * down * parts if parts > 1 else 0).data_ptr()
        return [KernelCall(launch.kernel, (across, down, parts), (*call.gemm_args(), work, flags))]
