"""What the book says about an implementation, each figure from where it is held: the registry, a
committed record (`results/h200-*.json`) or `gemmlab inspect`. Nothing here is typed by hand.

The site and `gemmlab diff` both read these, so the two never disagree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .. import committed, problem
from ..bench import results
from ..cuda.sass import MIX
from ..measure.device import peak_for
from ..precision import Precision
from ..registry import Implementation
from ..ui.errors import UsageError
from . import chapters

#: The committed records the book reads, in results/ (git ignores the rest of it): `committed` finds them.
RECORDS_GLOB = "h200-*.json"
#: What each precision class is measured against, and in which ratio field of a record.
YARDSTICK = {Precision.FP32: ("cuBLAS FP32", "ratio_vs_cublas"),
             Precision.TF32: ("cuBLAS TF32", "ratio_vs_cublas_tf32"),
             Precision.FP32X3: ("cuBLAS FP32", "ratio_vs_cublas")}
#: The SASS counts worth a line of their own on a page and in `diff`, in that order: the
#: instruction mix `inspect` counts, then its schedule's figures but the stalled shared loads.
SASS_SHOWN = (*MIX, "FFMA bank conflicts", "loop instructions", "loop stall cycles")


@dataclass
class Records:
    """The records the book reads, by kind; `paths` says which file each came from."""

    ladder: dict | None = None  # a bench record at one shape
    buffering: dict | None = None
    sweep: dict | None = None  # fixed shapes
    random: dict | None = None  # random shapes: the newest draw
    #: Every random draw, newest first: a rung's figures come from the newest that timed it (the
    #: strict draws and the tensor ones are runs of their own).
    randoms: list[dict] = field(default_factory=list)
    paths: dict[str, Path] = field(default_factory=dict)

    def kinds(self) -> list[str]:
        return [k for k in ("ladder", "sweep", "random", "buffering") if getattr(self, k) is not None]


def record_kind(record: dict) -> str:
    kind = results.kind(record)
    if kind == "sweep":
        return "random" if record.get("random") else "sweep"
    return "buffering" if kind == "buffering" else "ladder"


def load_records(paths: list[Path]) -> Records:
    """Each file read and classified; the newest of a kind wins. A file that is not a record is a
    usage error, named."""
    found = Records()
    for path in sorted(paths):
        try:
            record = json.loads(path.read_text())
            kind = record_kind(record)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, results.SchemaError, AttributeError) as exc:
            raise UsageError(f"{path} is not a results record: {exc}") from None
        if kind == "random":
            found.randoms.append(record)
            found.paths[f"random-{len(found.randoms)}"] = path
        held = getattr(found, kind)
        if held is None or record["date"] > held["date"]:
            setattr(found, kind, record)
            found.paths[kind] = path
    found.randoms.sort(key=lambda r: r["date"], reverse=True)
    return found


def default_record_paths() -> list[Path]:
    """The committed records, where `committed` finds them: the checkout gemmlab runs from, else the
    copy an installed wheel carries, so that figures show wherever a command runs."""
    return committed.records(RECORDS_GLOB)


def no_records_line() -> str:
    """What a command says where it found no committed record: where it looked."""
    where = (committed.root() / "results" / RECORDS_GLOB).resolve()
    return f"no committed records found (looked for {where}): figures are left out"


def clock(record: dict) -> float | None:
    """The SM clock's median while the record (or one sweep point) was timed, in MHz."""
    clocks = record.get("clocks_during_timing") or {}
    return (clocks.get("sm_clock_mhz") or {}).get("median")


def limit_at_clock(record: dict, precision: Precision, mhz: float | None) -> float | None:
    """The precision's ceiling (TFLOP/s) at the clock the timing ran at: the record's peak, which
    is at the device's maximum clock, scaled by the recorded clock."""
    peaks = record.get("peaks_tflops") or {}
    if not peaks.get("fp32"):
        return None
    peak = peak_for(precision, peaks)
    top = (record.get("device") or {}).get("max_sm_clock_mhz")
    if peak is None or not top or not mhz:
        return peak
    return peak * mhz / top


def row(record: dict | None, name: str) -> dict | None:
    if not record:
        return None
    return next((r for r in record["results"] if r["name"] == name and "median_ms" in r), None)


def ladder_figures(records: Records, impl: Implementation) -> dict | None:
    """The implementation's figures in the ladder record: time, TFLOP/s, ratio to its yardstick,
    and the share of its precision's limit at the clock the run recorded."""
    r = row(records.ladder, impl.name)
    if r is None:
        return None
    record = records.ladder
    mhz = clock(record)
    limit = limit_at_clock(record, impl.precision, mhz)
    yardstick, field_name = YARDSTICK[impl.precision]
    return {"shape": record["shape"], "device": record["device"]["name"], "date": record["date"],
            "median_ms": r["median_ms"], "min_ms": r["min_ms"], "max_ms": r["max_ms"],
            "tflops": r["tflops"], "yardstick": yardstick, "ratio": r.get(field_name),
            "ratio_fp32": r.get("ratio_vs_cublas"), "clock_mhz": mhz, "limit_tflops": limit,
            "of_limit": r["tflops"] / limit if limit else None, "passed": r["passed"],
            "rel_fro": (r.get("figures") or {}).get("rel_fro"), "kernel": r.get("kernel"),
            "iters": record["iters"], "warmup": record["warmup"]}


def sweep_points(record: dict | None, impl: Implementation) -> list[dict]:
    """Each sweep point where the implementation ran: its label, shape, time, TFLOP/s, ratio to its
    yardstick, the clock, and whether it passed."""
    if not record or impl.name not in record.get("names", []):
        return []
    _, field_name = YARDSTICK[impl.precision]
    out = []
    for p in record["points"]:
        r = row(p, impl.name)
        if r is not None:
            out.append({"label": p["label"], "shape": p["shape"], "median_ms": r["median_ms"],
                        "tflops": r["tflops"], "ratio": r.get(field_name), "clock_mhz": clock(p),
                        "passed": r["passed"]})
    return out


def random_summary(records: Records, impl: Implementation) -> dict | None:
    """The summary of the implementation (geometric mean, 10th percentile, lowest, worst large shape)
    in the newest random draw that timed it, with the draw's size and seed and its yardstick's name."""
    for i, record in enumerate(records.randoms):
        found = (record.get("summary") or {}).get(impl.name)
        if isinstance(found, dict) and "geomean" in found:
            return found | {"n": record["random"]["n"], "seed": record["random"]["seed"],
                            "yardstick": YARDSTICK[impl.precision][0],
                            "anchor": "random" if i == 0 else f"random-{i + 1}"}  # its section on the sweep page
    return None


def at_shape(impl: Implementation, shape: tuple[int, int, int]) -> dict:
    """The launch `impl` runs at `shape` on this GPU (without one: on the GPU its tune record is
    for), the precondition that chose it, and the launches passed over before it."""
    from .. import runtime
    from ..cuda import dispatch, driver
    from ..policy import default as tuned_default

    out = {"name": impl.name, "shape": list(shape)}
    if not impl.launches:
        return out | {"launch": None, "why": f"a {impl.family} implementation: it picks no CUDA launch"}
    here = runtime.has_gpu()
    if here:
        import torch

        gpu, sms, cc = torch.cuda.get_device_name(), driver.sms(), torch.cuda.get_device_capability()
    else:
        found = tuned_default.plan()[0]  # the record's GPU is the one source of what to plan for
        if found is None:
            return out | {"launch": None, "why": "no GPU here, and no tune record to say which GPU to plan for"}
        gpu, sms = found["gpu"]["name"], found["gpu"]["sm_count"]
        cc = tuple(int(x) for x in found["gpu"]["compute_capability"].split("."))
    with driver.assumed_sms(sms):
        walked = dispatch.walk(impl.launches, *shape, cc)
    ran, holds = walked[-1]
    return out | {"gpu": gpu, "sms": sms, "here": here, "launch": ran.name if holds else None,
                  "kernel": impl.launch_label(ran) if holds else None,
                  "rule": (str(ran.when) if ran.when else "none: the last launch, which runs at any shape")
                  if holds else None, "passed_over": [x.name for x, _ in walked[:-1]]}


def main_launch(impl: Implementation):
    """The launch a page draws and a diff compares: the first, its fast path, for a rung of one idea;
    for a dispatcher whose chain opens with another rung's launch (`default`, `tf32`, `3xtf32`, a
    prelude first), the one it runs at the performance shape on the record's GPU."""
    first = impl.launches[0]
    if Path(first.kernel.source).name == Path(impl.sources[0]).name:
        return first
    name = at_shape(impl, problem.PERF_SHAPE)["launch"]
    return next((x for x in impl.launches if x.name == name), first)


def main_row(impl: Implementation, inspected: list[dict] | None) -> dict | None:
    """`inspect`'s row of `main_launch`'s kernel (the first kernel's where that one is not there)."""
    label = impl.launch_label(main_launch(impl))
    kernels = [r for r in inspected or [] if not r["pre_pass"]]
    return next((r for r in kernels if r["kernel"] == label), kernels[0] if kernels else None)


def geometry(impl: Implementation) -> list[dict]:
    """Each launch's shape as the registry declares it: what the diagrams are drawn from."""
    out = []
    for launch in impl.launches:
        kernel = launch.kernel
        out.append({"name": launch.name, "label": impl.launch_label(launch), "entry": launch.entry,
                    "threads": launch.threads, "block": list(launch.block), "tile": list(launch.tile),
                    "depth": launch.depth, "buffers": launch.buffers, "pad": launch.pad,
                    "dynamic_smem": kernel.smem, "static_smem": launch.static_smem,
                    "cluster": list(kernel.cluster), "persistent": launch.persistent,
                    "when": launch.precondition if launch.when else None,
                    "pre_passes": [k.entry for k in launch.kernels()[1:]],
                    "defines": dict(launch.defines)})
    return out


def inspect_all(impls: list[Implementation], progress=None) -> tuple[dict[str, list[dict]], str]:
    """`gemmlab inspect --json`'s rows of each CUDA implementation (compiled and disassembled here,
    no GPU needed), and "" or the one line that says why there are none."""
    try:
        from ..bench.inspect import default_arch, inspect_launches
        from ..cuda.tools import ToolMissing
        from ..ui import machine
    except ImportError as exc:
        return {}, f"cannot compile CUDA here: {exc}"
    arch = default_arch()
    cuda = [i for i in impls if i.launches and i.needs.builds_for(arch)]
    out: dict[str, list[dict]] = {}
    for n, impl in enumerate(cuda):
        if progress:
            progress(f"compiling and disassembling {impl.name}", n, len(cuda))
        try:
            out[impl.name] = [machine.inspect_row(r) for r in inspect_launches([impl], arch)]
        except ToolMissing as exc:
            return {}, str(exc)
        except ImportError as exc:
            return {}, f"cannot compile CUDA here: {exc}"
    if progress:  # the stage's end: a piped run prints its last line here
        progress(f"compiled and disassembled {len(cuda)} implementations", len(cuda), len(cuda))
    return out, ""


def _num(x: float | None, fmt: str, unit: str = "") -> str:
    return "-" if x is None else f"{x:{fmt}}{unit}"


def fact_rows(impl: Implementation, records: Records, inspected: list[dict] | None) -> list[tuple[str, str]]:
    """The facts `diff` puts side by side and a page lists: (what, value), in one order for all."""
    chapter = chapters.chapter_of(impl)
    ref = chapters.reference(impl)
    rows = [("chapter", f"{ref} {chapter.title}" if ref else chapter.title),
            ("family · precision", f"{impl.family} · {impl.precision}"),
            ("needs", impl.needs.short)]
    if impl.tile:
        r, c, s = impl.tile
        rows.append(("tile of C, reduction depth", f"{r}×{c}, {s}"))
        rows.append(("FLOP per global byte per tile", f"{impl.intensity:.1f}"))
    if impl.launches:
        rows.append(("launches", str(len(impl.launches))))
        rows.append(("threads per block (main launch)", str(main_launch(impl).threads)))
    f = ladder_figures(records, impl)
    if f:
        shape = "×".join(map(str, f["shape"]))
        rows += [(f"median ms at {shape}", _num(f["median_ms"], ".3f")),
                 ("TFLOP/s", _num(f["tflops"], ".1f")),
                 (f"× {f['yardstick']}", _num(f["ratio"], ".2f", "×")),
                 (f"of the {impl.precision} limit at {_num(f['clock_mhz'], '.0f')} MHz",
                  _num(None if f["of_limit"] is None else 100 * f["of_limit"], ".0f", " %"))]
    main = main_row(impl, inspected)
    if main:
        rows += [(f"registers ({main['arch']})", str(main["registers"])),
                 ("shared memory B (static + dynamic)", f"{main['smem_bytes']} + {main['dynamic_smem_bytes']}"),
                 ("spills · stack B", f"{main['spills']} · {main['stack_bytes']}")]
        rows += [(f"SASS {k}", str(main["sass"][k])) for k in SASS_SHOWN if main["sass"].get(k) is not None]
    return rows
