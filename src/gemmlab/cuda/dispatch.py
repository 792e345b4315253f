"""The launch model of a CUDA rung and its dispatcher: which launch runs for this call, and how.

A rung is an ordered list of `Launch` entries; the first whose precondition
holds for the call runs, and the last must hold always (the fallback).

Each call follows one lifecycle, after CUTLASS's host adapters:

1. **can implement** — `Launch.applies`: compute capability and the precondition;
2. **workspace** — `Launch.workspace_bytes(m, n, k)`: scratch the call needs
   (a transposed operand, a padded copy), allocated once per device and stream
   and grown on demand;
3. **initialise** — `Launch.kernel_calls(call, workspace)`: the kernels to run in order,
   each with its grid and its full argument list (pointers, sizes, TMA
   descriptors);
4. **run** — each kernel call is launched on torch's current stream.

The plain ladder kernels need none of that: they take ``(A, B, C, M, N, K)``,
own a ``tile`` of C per block, use static shared memory, and run as one kernel
call on a grid of ``ceil(K / cols) × ceil(M / rows)`` blocks. A `Launch` says only
what differs from that: dynamic shared memory (``smem``), a cluster shape,
a persistent grid, or a `Host` that plans pre-passes and extra parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from . import driver as cl
from .compiler import CompiledModule, compile_source, device_arch
from .needs import Needs, When

if TYPE_CHECKING:  # torch is imported where a call needs it: listing the registry does not
    import torch


@dataclass(frozen=True)
class Kernel:
    """One entry point of one source, with the macros it is built with and its block geometry."""

    source: str
    entry: str
    block: tuple[int, int]
    defines: Mapping[str, int] = field(default_factory=dict)
    smem: int = 0  # dynamic shared memory, bytes (static shared memory is the compiler's)
    cluster: tuple[int, int, int] = (1, 1, 1)
    needs: Needs = Needs.ANY  # the strongest feature its code uses (cuda/needs.py)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1]

    @property
    def label(self) -> str:
        """`entry[MACRO=v,…]`: how reports and the sanitizer name this kernel."""
        defines = ",".join(f"{key}={v}" for key, v in self.defines.items())
        return self.entry + (f"[{defines}]" if defines else "")

    @property
    def key(self) -> tuple:
        return (self.source, self.entry, tuple(sorted(self.defines.items())))

    def compile(self, arch: str | None = None) -> CompiledModule:
        return compile_source(self.source, arch=arch, defines=dict(self.defines))


@dataclass(frozen=True)
class Call:
    a: torch.Tensor
    b: torch.Tensor
    c: torch.Tensor
    m: int
    n: int
    k: int

    def gemm_args(self) -> tuple:
        return (self.a.data_ptr(), self.b.data_ptr(), self.c.data_ptr(),
                cl.i32(self.m), cl.i32(self.n), cl.i32(self.k))


@dataclass(frozen=True)
class KernelCall:
    """One kernel launch of a call: what runs, on how many blocks, with which arguments."""

    kernel: Kernel
    grid: tuple[int, int, int]
    args: tuple


class Host(Protocol):
    """The host side of a launch that needs more than (A, B, C, M, N, K) on a tile grid."""

    def kernels(self, launch: Launch) -> tuple[Kernel, ...]:
        """Every kernel the plan may call besides the launch's own (pre-passes)."""

    def workspace_bytes(self, launch: Launch, m: int, n: int, k: int) -> int: ...

    def kernel_calls(self, launch: Launch, call: Call, workspace: torch.Tensor) -> list[KernelCall]: ...


#: The mark a rung's label gives its fallback launch (registry's `launch_label`): where the launch
#: sits in the rung's list, not what it builds.
FALLBACK_MARK = "fallback"


def same_build(label: str | None, other: str | None) -> bool:
    """Two launch labels name one build: equal but for the fallback mark. None (no kernel) matches
    nothing."""
    def build(x: str) -> str:
        return x.replace(f" ({FALLBACK_MARK})", "").replace(f" {FALLBACK_MARK})", ")")
    return bool(label and other) and build(label) == build(other)


@dataclass(frozen=True)
class Launch:
    source: str
    entry: str
    block: tuple[int, int]
    tile: tuple[int, int]  # (rows of C, columns of C) per block, or per tile of a persistent grid
    defines: Mapping[str, int] = field(default_factory=dict)
    when: When | None = None  # None: always (a fallback)
    #: What the launch's own kernel uses of the GPU; its pre-passes declare their own (`all_needs`).
    needs: Needs = Needs.ANY
    #: Dynamic shared memory in bytes, or a function of the macros (it grows with STAGES, say).
    smem: int | Callable[[Mapping[str, int]], int] = 0
    #: Blocks per cluster along x, y, z; by default the kernel's CLUSTER macro along x, else none.
    cluster: tuple[int, int, int] | None = None
    persistent: bool = False  # one block per SM walks the tiles, instead of one block per tile
    host: Host | None = None
    #: The reduction depth (BK): how much of N one step's tiles of A (rows×depth) and B (depth×cols) cover.
    depth: int = 0
    #: Copies of those two tiles in static shared memory (0: none, or dynamic shared memory);
    #: each row padded by ``pad`` floats, or (A's, B's) where the two differ. Tests check the
    #: compiler's figure against it.
    buffers: int = 0
    pad: int | tuple[int, int] = 0
    #: Static shared bytes beside the tiles: a block's own scratch (`thin`'s partial sums).
    scratch: int = 0
    #: Where other fields follow from the macros (bigtile: block, tile and depth from its warp
    #: layout, its host from A_T): those fields as a function of the macros (`with_defines`).
    derive: Callable[[Mapping[str, int]], Mapping[str, object]] | None = None
    #: When it runs within its rung ("whole-tiles", "vec4", "b-padded", …), unique within the
    #: rung: what tune records name a launch by (`gemmlab.launches`).
    name: str = ""

    def with_defines(self, changes: Mapping[str, int]) -> Launch:
        """The same launch with some macros changed, and what follows from them re-derived."""
        defines = dict(self.defines) | dict(changes)
        derived = self.derive(defines) if self.derive else {}
        return replace(self, defines=defines, **derived)

    @property
    def kernel(self) -> Kernel:
        smem = self.smem(self.defines) if callable(self.smem) else self.smem
        cluster = self.cluster or (int(self.defines.get("CLUSTER", 1)), 1, 1)
        return Kernel(self.source, self.entry, self.block, self.defines, smem, cluster, self.needs)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1]

    @property
    def all_needs(self) -> Needs:
        """What the launch needs of the GPU, its pre-passes included."""
        return Needs.of(*(kernel.needs for kernel in self.kernels()))

    @property
    def precondition(self) -> str:
        """The precondition in words, rendered from `when` and `all_needs`; "always" for a fallback."""
        text = str(self.when) if self.when else "always"
        if self.all_needs is not Needs.ANY:
            text += ", " + str(self.all_needs)
        return text

    @property
    def static_smem(self) -> int:
        """Static shared bytes the tiles imply: buffers × (A rows×depth + B depth×cols), padded rows;
        and the block's scratch beside them."""
        rows, cols = self.tile
        pad_a, pad_b = self.pad if isinstance(self.pad, tuple) else (self.pad, self.pad)
        return self.buffers * (rows * (self.depth + pad_a) + self.depth * (cols + pad_b)) * 4 + self.scratch

    def kernels(self) -> tuple[Kernel, ...]:
        """The main kernel first, then whatever pre-passes the host may run."""
        return (self.kernel,) + (self.host.kernels(self) if self.host else ())

    def tiles(self, m: int, k: int) -> tuple[int, int]:
        rows, cols = self.tile
        return -(-k // cols), -(-m // rows)

    def grid(self, m: int, k: int) -> tuple[int, int, int]:
        across, down = self.tiles(m, k)
        if not self.persistent:
            return (across, down, 1)
        # One block per SM at most, rounded down to whole clusters; the kernel strides over tiles.

        x, y, z = self.kernel.cluster
        size = x * y * z
        sms = cl.sms()
        blocks = min(across * down, sms)
        return (max(size, blocks // size * size), 1, 1)

    def compile(self, arch: str | None = None) -> CompiledModule:
        return self.kernel.compile(arch)

    def applies(self, a, b, c, m, n, k) -> bool:
        import torch

        return self.holds(torch.cuda.get_device_capability(a.device), a, b, c, m, n, k)

    def holds(self, cc: tuple[int, int], a, b, c, m, n, k) -> bool:
        """Whether this launch runs the call on a GPU of compute capability `cc`."""
        return self.all_needs.runs_on(cc) and (self.when is None or bool(self.when(a, b, c, m, n, k)))

    def workspace_bytes(self, m: int, n: int, k: int) -> int:
        return self.host.workspace_bytes(self, m, n, k) if self.host else 0

    def kernel_calls(self, call: Call, workspace: torch.Tensor | None) -> list[KernelCall]:
        if self.host:
            return self.host.kernel_calls(self, call, workspace)
        return [KernelCall(self.kernel, self.grid(call.m, call.k), call.gemm_args())]


def _raw_stream(device: int) -> int:
    """torch's current stream on `device` as its CUstream handle (`Stream.cuda_stream`)."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(device) if raw is not None else torch.cuda.current_stream(device).cuda_stream


@dataclass(frozen=True)
class _Captured:
    """A plan's launches as one CUDA graph: `run` replays them all on torch's current stream."""

    graph: object  # torch.cuda.CUDAGraph

    def run(self) -> None:
        self.graph.replay()


class CudaSolver:
    """Callable ``solve`` for one rung: select a launch, compile once, plan, launch.

    A call with the same pointers, shape, device and stream as an earlier one runs the same
    kernels with the same arguments (the choice depends on nothing else), so its prepared
    launches are kept and replayed: at 1024³ the Python planning would otherwise take longer
    than the kernels, and the GPU would wait on it. From a plan's second call on, its launches
    are one CUDA graph (`_Captured`): one replay instead of a driver call per launch, a fraction
    of the host time (experiments/README.md#host-overhead).
    """

    PLANS = 64  # prepared calls kept; the oldest goes first
    GRAPHS = True  # capture a plan's launches once it is called again

    def __init__(self, launches: tuple[Launch, ...]):
        if not launches or launches[-1].when is not None:
            raise ValueError("a rung's last launch must be an unconditional fallback")
        self.launches = launches
        self._loaded: dict[tuple, object] = {}
        self._workspace: dict[tuple[int, int], torch.Tensor] = {}
        self._plans: dict[tuple, list[cl.Prepared] | list[_Captured]] = {}
        self._retired: list = []  # plans dropped during a caller's capture, released after it
        self._in_graphs: set[tuple[int, int]] = set()  # scratch a caller's capture has used
        self._held: list[torch.Tensor] = []  # scratch replaced after a caller's capture used it: kept
        self._capture_streams: dict[tuple[int, int], torch.cuda.Stream] = {}

    def select(self, a, b, c, m, n, k) -> Launch:
        return next(x for x in self.launches if x.applies(a, b, c, m, n, k))

    def load(self, kernel: Kernel):
        import torch

        arch = device_arch()
        key = (kernel.key, arch, torch.cuda.current_device())  # a loaded kernel belongs to one device
        loaded = self._loaded.get(key)
        if loaded is None:
            loaded = cl.get_kernel(kernel.compile(arch), kernel.entry, kernel.smem)
            self._loaded[key] = loaded
        return loaded

    @staticmethod
    def _workspace_key(device: torch.device, stream: int) -> tuple[int, int]:
        """Scratch is kept per device and stream (the stream's raw handle)."""
        return (device.index or 0, stream)

    def workspace(self, nbytes: int, device: torch.device) -> torch.Tensor | None:
        """Scratch on the current stream, kept between calls: later calls on this stream are ordered after."""
        if nbytes == 0:
            return None
        import torch

        key = self._workspace_key(device, torch.cuda.current_stream(device).cuda_stream)
        capturing = torch.cuda.is_current_stream_capturing()
        ws = self._workspace.get(key)
        if ws is None or ws.numel() < nbytes:
            if ws is not None:
                # Prepared calls may point into the old scratch: none of them may run again. Inside a
                # caller's capture they are kept aside, not dropped: dropping a plan destroys its CUDA
                # graph, and destroying a graph during a capture in torch's default (global) mode
                # invalidates that capture (seen on the H200: a first call inside a caller's capture).
                if capturing:
                    self._retired.extend(self._plans.values())
                self._plans.clear()
                if key in self._in_graphs:
                    # A caller's graph holds launches that read and write this scratch, and replays them
                    # for as long as it lives, which this solver cannot see: freed, the memory could go
                    # to another tensor that every replay would then overwrite. So it is never given back,
                    # and its successor at least doubles, so that few are ever held.
                    self._held.append(ws)
                    self._in_graphs.discard(key)
                    nbytes = max(nbytes, 2 * ws.numel())
            ws = self._workspace[key] = torch.empty(nbytes, dtype=torch.uint8, device=device)
        if capturing:
            self._in_graphs.add(key)
        return ws

    def __call__(self, a, b, c, m, n, k) -> None:
        # The device and stream a launch goes to are torch's current ones (cuda/driver.py); the raw
        # stream handle is asked for without making a Stream object (a few µs on every call).
        import torch

        device = torch.cuda.current_device()
        key = (a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k, device, _raw_stream(device))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plan(a, b, c, m, n, k)
            # A plan made inside a caller's capture points at split-K counters their graph owns
            # (handoff.counters): it runs this once, into their graph, and is not kept.
            if not torch.cuda.is_current_stream_capturing():
                self._retired.clear()
                if len(self._plans) >= self.PLANS:
                    del self._plans[next(iter(self._plans))]
                self._plans[key] = plan
        elif torch.cuda.is_current_stream_capturing():
            # The caller captures a graph of their own: the launches go into theirs, as they are
            # (a graph's replay cannot be captured).
            if isinstance(plan[0], _Captured):
                plan = self._plan(a, b, c, m, n, k)
        elif self.GRAPHS and not isinstance(plan[0], _Captured):
            plan = self._plans[key] = [self._capture(a, b, c, m, n, k, key[-1])]  # called again: worth it
        for prepared in plan:
            prepared.run()

    def _capture(self, a, b, c, m, n, k, stream: int) -> _Captured:
        """The call's launches captured as one CUDA graph, to be replayed on torch's current stream
        (`stream`, its raw handle).

        Capture needs a stream of its own (the current one may be the legacy default stream, which
        cannot capture), and a plan's launches name the stream they were prepared on: so the plan
        is prepared again on a capture stream kept for `stream`, with that stream's scratch and
        split-K counters (both keyed by the stream's handle). The capture stream is the driver's,
        made for this (`driver.private_stream`): a pooled torch stream could be another caller's
        stream, or another capture stream, whose work would share that scratch and those counters.
        So only replays on `stream` use them, and they stay ordered as a plan's own do; the scratch
        is marked as used on `stream`, so that torch does not hand it out again while a replay
        there may still read it."""
        import torch

        device = torch.cuda.current_device()
        target = torch.cuda.current_stream(device)
        side = self._capture_streams.get((device, stream))
        if side is None:
            side = self._capture_streams[(device, stream)] = cl.private_stream()
        with torch.cuda.stream(side):
            plan = self._plan(a, b, c, m, n, k)
        ws = self._workspace.get(self._workspace_key(a.device, side.cuda_stream))
        if ws is not None:
            ws.record_stream(target)
        side.synchronize()  # counters zeroed on the capture stream before the first replay
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.stream(side):
            graph.capture_begin(capture_error_mode="thread_local")
            try:
                for prepared in plan:
                    prepared.run()
            except BaseException:
                try:  # close the capture, but report what broke it
                    graph.capture_end()
                except Exception:
                    pass
                raise
            graph.capture_end()
        return _Captured(graph)

    def _plan(self, a, b, c, m, n, k) -> list[cl.Prepared]:
        spec = self.select(a, b, c, m, n, k)
        workspace = self.workspace(spec.workspace_bytes(m, n, k), a.device)
        plan = []
        for run in spec.kernel_calls(Call(a, b, c, m, n, k), workspace):
            kernel = self.load(run.kernel)
            grid = run.grid
            if spec.persistent and run.kernel == spec.kernel:
                grid = self._resident_grid(kernel, run)
            plan.append(cl.prepare(kernel, grid, run.kernel.block, run.kernel.smem, *run.args,
                                   cluster=run.kernel.cluster))
        return plan

    @staticmethod
    def _resident_grid(kernel, run: KernelCall) -> tuple[int, int, int]:
        """A persistent grid no larger than what the GPU holds at once, in whole clusters."""
        k = run.kernel
        size = k.cluster[0] * k.cluster[1] * k.cluster[2]
        fit = cl.resident_blocks(kernel, k.block, k.smem, k.cluster)
        blocks = min(run.grid[0], fit) // size * size
        return (max(blocks, size), 1, 1)


def walk(launches: tuple[Launch, ...], m: int, n: int, k: int, cc: tuple[int, int]) -> list[tuple[Launch, bool]]:
    """`launches` in order up to the one a call of that shape runs on a GPU of capability `cc`, each
    with whether it holds there (`Launch.holds`, without a GPU): the operands are contiguous and
    16-byte aligned, as torch allocates them, and on the meta device, so that nothing is allocated."""
    import torch

    a, b, c = (torch.empty(r, q, device="meta") for r, q in ((m, n), (n, k), (m, k)))
    out = []
    for x in launches:
        holds = x.holds(cc, a, b, c, m, n, k)
        out.append((x, holds))
        if holds:
            break
    return out
