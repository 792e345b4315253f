"""`gemmlab tune`: search rungs' knobs per shape class on the GPU (or recalibrate a record on
random sweeps), with what it checks before it runs and the table it prints after."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from .. import jsonfile, runtime
from ..exits import Exit
from ..measure.inputs import fresh_seed
from ..policy import default as tuned_default
from ..policy.classes import CLASSES, ShapeClass, classify, representatives
from ..policy.record import INSTALLED
from ..policy.spaces import SPACES
from ..tune.search import MIN_ITERS
from ..ui import machine, usage
from ..ui.errors import CannotRun, UsageError, guarded
from . import common
from .common import SMALL_RULE, AsJson, Seed, app, messages_console, side


def searchable(tokens: list[str], preludes_too: bool = False) -> list[str]:
    """The rungs the tokens name, each with a search space (or, where `preludes_too`, for
    calibration, a prelude: policy/preludes.py), in the order given, once each. A rung number
    stands for those of its implementations that have a search space (all, to be refused, when
    none has)."""
    from ..policy.preludes import PRELUDES

    out = []
    for token in tokens:
        impls = usage.resolve(token)
        if usage.is_rung(token):
            impls = [i for i in impls if i.name in SPACES] or impls
        for impl in impls:
            if impl.name not in SPACES and not (preludes_too and impl.name in PRELUDES):
                raise UsageError(f"{impl.name} has no search space to tune; rungs with one: "
                                 f"{', '.join(SPACES)} (gemmlab.policy.spaces)")
            if impl.name not in out:
                out.append(impl.name)
    return out


def by_class(given: list[tuple[int, int, int]], sms: int) -> dict[ShapeClass, tuple[int, int, int]]:
    """The shape to tune each class at: those given (one per class), else one representative per class."""
    if not given:
        return representatives()
    out: dict[ShapeClass, tuple[int, int, int]] = {}
    for shape in given:
        cls = classify(*shape, sms)
        if cls in out:
            raise UsageError(f"--shape {usage.shape_label(shape)} and {usage.shape_label(out[cls])} are "
                             f"both in shape class {cls.key} on {sms} SMs; give one shape per class")
        out[cls] = shape
    return {c: out[c] for c in CLASSES if c in out}


def record_table(record: dict):
    t = common.table(f"gemmlab tune {' '.join(record['rungs'])} on {record['gpu']['name']} "
                     f"({record['gpu']['sm_count']} SMs)", ("class", "M×N×K", "timed calls", "cuBLAS ms",
                                                            "winner", "ms", "vs cuBLAS", "timed / failed / rejected"))
    for key, entry in record["classes"].items():
        verdicts = [c["verdict"] for c in entry["candidates"]]
        counts = " / ".join(str(verdicts.count(v)) for v in ("timed", "failed", "rejected"))
        w = entry["winner"]
        cublas = f"{entry['cublas_ms']:.3f}" if entry["cublas_ms"] else "-"
        winner = ((escape(f"{w['rung']} {w['launch']}: {w['kernel']}"), f"{w['median_ms']:.3f}",
                   f"{w['ratio_vs_cublas']:.2f}×" if w.get("ratio_vs_cublas") else "-")
                  if w else ("[red]none verified[/red]", "-", "-"))
        t.add_row(key, "×".join(map(str, entry["shape"])), str(entry["iters"]), cublas, *winner,
                  counts)
    return t


@app.command("tune", cls=usage.ShapeCommand)
@guarded
def tune_cmd(
    names: Annotated[list[str] | None, typer.Argument(help="rungs to search, each with a search space: "
                                                    f"{', '.join(SPACES)} (gemmlab.policy.spaces); a rung "
                                                    "number stands for those on it. None: everything "
                                                    "default needs here (search, sweeps, calibration)",
                                               metavar="NAME|STEP", show_default=False)] = None,
    shape: Annotated[list[str] | None, typer.Option("--shape", metavar=usage.SHAPE_METAVAR,
        help=f"tune at this shape, {usage.SHAPE_HELP}, for its shape class (repeatable, one per class; "
             f"default: one representative shape for each of the {len(CLASSES)} classes)")] = None,
    warmup: Annotated[int, typer.Option(min=0, help="untimed calls of each candidate first")] = 5,
    iters: Annotated[int, typer.Option(min=MIN_ITERS, help=f"timed calls per candidate ({SMALL_RULE})")] = MIN_ITERS,
    seed: Seed = None,
    out: Annotated[Path, typer.Option(help="results folder (tune/GPU/DATE.json goes under it)")] = Path("results"),
    output: Annotated[Path | None, typer.Option("-o", "--output", metavar="FILE",
        help="write the record here instead of under --out")] = None,
    force: Annotated[bool, typer.Option(help="overwrite an existing -o file")] = False,
    install: Annotated[bool, typer.Option("--install", help="also install the record as the one "
        "`default` dispatches by on this GPU (src/gemmlab/tuned/GPU.json, a tracked file)")] = False,
    calibrate: Annotated[list[Path] | None, typer.Option("--calibrate", metavar="SWEEP",
        help="no GPU time: recalibrate the installed record on random sweeps (gemmlab sweep --random): a NAME's "
             "launch that beat default over a class's shapes wins it; a prelude NAME (short, gemv) runs first "
             "where it beat default at every shape, designed sweeps counted (tune/calibrate.py)")] = None,
    searched: Annotated[Path | None, typer.Option("--searched", metavar="RECORD",
        help="with no names: skip the search and go on from this search record of this GPU "
             "(a run cut after its first stage)")] = None,
    as_json: AsJson = False,
) -> None:
    """Search rungs' compile-time configurations per shape class on this GPU; write the record.

    With no names: all that `default` needs on this GPU, in four stages (tune/pipeline.py): the
    search of its rungs, random and designed sweeps with that record in force, calibration on
    them, and with `--install` a comparison with the record `default` runs here now: the new one
    is installed only where it is at least as fast.

    Every candidate is compiled (spills and compile errors rejected without GPU time), verified
    against the float64 product with C poisoned, then timed interleaved with cuBLAS FP32.
    Exit 0: every class has a winner; 1: some class has no verified candidate (the record is
    written, not installed); 2: usage error; 3: no GPU.
    """
    from ..tune import pipeline

    given = usage.shapes(shape)
    everything = not names
    if everything:
        rungs = list(pipeline.CALIBRATED if calibrate else pipeline.SEARCHED)
    else:
        rungs = searchable(names, preludes_too=bool(calibrate))
    if searched is not None and not everything:
        raise UsageError("--searched goes on from a search with no names; with names, tune searches them")
    if everything and not calibrate and given:
        raise UsageError("--shape tunes the named rungs at chosen shapes; with no names, tune searches every class")
    if calibrate and given:
        raise UsageError("--calibrate reads its shapes from the sweeps; --shape chooses where a search runs")
    if output is not None:
        usage.new_file(output, force)
    usage.out_folder(out)
    if install:
        usage.out_folder(INSTALLED)
    # A sweep named twice would count its every shape twice toward a class's minimum.
    once: dict[Path, Path] = {}
    for sweep in calibrate or []:
        once.setdefault(sweep.resolve(), sweep)
    calibrate = list(once.values()) or calibrate
    if calibrate:
        _calibrate(rungs, calibrate, output, out, install, as_json)
        return
    prior = _searched_record(searched) if searched is not None else None
    if not runtime.has_gpu():
        raise CannotRun("no CUDA GPU: gemmlab tune verifies and times every candidate on one")
    _tune_here(rungs, given, prior, searched, everything, warmup, iters, seed, output, out, install, as_json)


def _tune_here(rungs: list[str], given: list, prior: dict | None, searched: Path | None, everything: bool,
               warmup: int, iters: int, seed: int | None, output: Path | None, out: Path, install: bool,
               as_json: bool) -> None:
    """On this GPU: the search (or `prior`, its record), then with no names the sweeps, the
    calibration and the comparison; the record written, installed where asked and earned."""
    from ..measure import device as device_info
    from ..policy import record

    info = device_info.gpu()
    if prior is not None and prior["gpu"]["slug"] != record.slug(info["name"]):
        raise UsageError(f"{searched} was searched on {prior['gpu']['name']}, this GPU is {info['name']}")
    ui = messages_console(as_json)
    seed = fresh_seed() if seed is None else seed
    if prior is None:
        if everything:
            ui.print(f"stage 1 of 4: search {' '.join(rungs)} in every shape class")
        rec = _search(rungs, by_class(given, info["sm_count"]), info, warmup, iters, seed, ui)
        if output and not everything:  # with no names, -o takes the calibrated record
            jsonfile.write(output, record.dumps(record.validate(rec)))
            path = output
        else:
            path = record.save(rec, out)
        ui.print(record_table(rec))
        ui.print(f"{'search ' if everything else ''}record: {path}")
    else:
        rec, path = prior, searched
        ui.print(f"stage 1 of 4: the search record {path} ({rec['date']})")
    missing = [key for key, entry in rec["classes"].items() if not entry["winner"]]
    if missing:
        ui.print(f"[red]no candidate verified for {', '.join(missing)}[/red]"
                 + ("; not installed" if install else "") + ("; not calibrated" if everything else ""))
    elif everything:
        rec, path = _sweep_and_calibrate(rec, path, seed, output, out, ui)
    if not missing:
        _rebuilds(rec)
        if install and (not everything or _beats_incumbent(path, seed, out, ui)):
            ui.print(f"installed: {record.install(rec)} (gemmlab default reads it on this GPU)")
    if as_json:
        machine.emit(rec)
    raise typer.Exit(int(Exit.FAILED if missing else Exit.PASSED))


def _beats_incumbent(path: Path, seed: int, out: Path, ui) -> bool:
    """Stage 4: `default` under the new record and under the one it runs here now, on one fresh draw;
    whether the new one is at least as fast (True where there is no record to compare with)."""
    from ..policy import default
    from ..tune import pipeline

    current, why = default.record_file(), default.plan()[1]
    if current is None:
        return True
    scores = {}
    for label, candidate in (("new", Path(path)), ("current", current)):
        with ui.status(f"stage 4 of 4: default under the {label} record on {pipeline.DRAWN} fresh shapes…"):
            try:
                drawn = pipeline.sweep(candidate.resolve(), pipeline.compare_args(seed + 1), out)
            except pipeline.StageFailed as exc:
                raise CannotRun(f"stage 4 stopped: {exc}; the record is at {path}, not installed") from None
        scores[label] = pipeline.geomean_of(drawn)
    new, old = scores["new"], scores["current"]
    shown = {k: "no figure" if v is None else f"{v:.3f}" for k, v in scores.items()}
    ui.print(f"stage 4 of 4: default's geomean vs cuBLAS on seed {seed + 1}'s draw: {shown['new']} under the "
             f"new record, {shown['current']} under {current.name} ({why})", highlight=False)
    if new is None or (old is not None and new < old):
        ui.print(f"[yellow]not installed: the new record measured slower than {current.name}, which default "
                 f"keeps running here; the new one is at {path}[/yellow]")
        return False
    return True


def _rebuilds(rec: dict) -> None:
    """Every launch the record names rebuilds here (what `default` will do with it), or a one-line error
    before anything is installed."""
    from ..policy import default, record

    try:
        default.launches_from(rec, ())
    except record.RecordError as exc:
        raise CannotRun(f"the record made here does not rebuild, so it was not installed: {exc}") from None


def _searched_record(path: Path) -> dict:
    from ..policy import record

    try:
        rec = record.load(path)
    except record.RecordError as exc:
        raise UsageError(str(exc)) from None
    if rec.get("calibration"):
        raise UsageError(f"{path} is calibrated already: --searched goes on from a search record")
    return rec


def _search(rungs: list[str], classes: dict, info: dict, warmup: int, iters: int, seed: int, ui) -> dict:
    """Stage 1: every candidate of `rungs` in `classes`, verified and timed beside cuBLAS."""
    import torch

    from ..bench.run import counter
    from ..cuda.compiler import device_arch
    from ..measure import device as device_info
    from ..provenance import gemmlab_commit
    from ..tune import search

    bar, update = common.progress_bar(ui, lines_when_piped=True)
    say = counter(update, search.steps_for(rungs, classes, iters))
    with bar, device_info.ClockSampler(torch.cuda.current_device()) as sampler:
        rec = search.tune(rungs, classes, search.GpuMeasure(), device_arch(), info, device_info.versions(),
                          gemmlab_commit(), warmup, iters, seed, progress=say)
    rec["clocks_during_timing"] = sampler.summary()
    return rec


def _sweep_and_calibrate(rec: dict, path: Path, seed: int, output: Path | None, out: Path, ui) -> tuple[dict, Path]:
    """Stages 2 and 3: the sweeps with `rec` (at `path`) in force, then `rec` calibrated on them."""
    import time

    from ..tune import pipeline

    runs = pipeline.sweep_args(seed)
    sweeps = []
    for i, args in enumerate(runs, 1):
        start = time.monotonic()
        with ui.status(f"stage 2 of 4: sweep {i} of {len(runs)} ({'random' if '--random' in args else args[0]})…"):
            try:
                sweeps.append(pipeline.sweep(Path(path).resolve(), args, out))
            except pipeline.StageFailed as exc:
                raise CannotRun(f"stage 2 stopped: {exc}; go on later with --searched {path}") from None
        ui.print(f"stage 2 of 4: sweep {i} of {len(runs)}: {len(sweeps[-1]['points'])} shapes in "
                 f"{time.monotonic() - start:.0f} s")
    ui.print("stage 3 of 4: calibration")
    calibrated, saved = _calibrated(rec, sweeps, list(pipeline.CALIBRATED), _digest(rec), output,
                                    out)
    if not output:
        ui.print(f"record: {saved}")
    return calibrated, saved


def _calibrated(current: dict, sweeps: list[dict], rungs: list[str], digest, output: Path | None,
                out: Path) -> tuple[dict, Path]:
    """`current` calibrated on `sweeps` and shown; written to `output`, else saved under `out`."""
    from ..policy import record
    from ..tune import calibrate

    rec = calibrate.calibrate(current, sweeps, rungs, digest)
    rec["date"] = rec["calibration"]["date"]
    _print_calibration(rec)
    if output:
        jsonfile.write(output, record.dumps(record.validate(rec)))
        return rec, output
    return rec, record.save(rec, out)


def _digest(current: dict):
    """The cubin digest of a launch as this machine builds it for the record's GPU, where this
    NVRTC is the record's (else None: a digest from another compiler says nothing)."""
    from ..cuda.compiler import nvrtc_version
    from ..policy.record import cubin_digest

    if nvrtc_version() != current.get("versions", {}).get("nvrtc"):
        return None
    return lambda launch: cubin_digest(launch.kernel.compile(current["arch"]).cubin)


def _print_calibration(rec: dict) -> None:
    for key, entry in rec["calibration"]["classes"].items():
        scores = ", ".join(f"{n} {s:.3f}" for n, s in entry["scores"].items())
        # Each rung against default on the shapes both ran (sweeps may have timed different rungs).
        against = ", ".join(f"{n} {c['geomean']:.3f} vs {c['default']:.3f} on {c['points']}"
                            for n, c in entry.get("compared", {}).items())
        side.print(escape(f"{key}: {entry['points']} shapes" + (f"; {scores}" if scores else "")
                          + (f"; against default: {against}" if against else "")
                          + (f" → {entry['chosen']}" if entry["chosen"] else "")), highlight=False)


def _calibrate(rungs: list[str], sweeps: list[Path], output: Path | None, out: Path, install: bool,
               as_json: bool) -> None:
    """`gemmlab tune NAME… --calibrate SWEEP…`: the installed record recalibrated on the sweeps."""
    from ..bench import results
    from ..policy import record

    current, why = tuned_default.plan()
    if current is None:
        raise UsageError(f"no installed tune record to calibrate: {why}")
    loaded = []
    for path in sweeps:
        data, kind = common.results_record(path)
        if kind != "sweep":
            raise UsageError(f"{path} is not a sweep (gemmlab sweep --random, or --shape for preludes)")
        if results.slug(data["device"]["name"]) != current["gpu"]["slug"]:
            raise UsageError(f"{path} was measured on {data['device']['name']}, the record is "
                             f"{current['gpu']['name']}'s")
        loaded.append(data)
    digest = _digest(current)
    rec, path = _calibrated(current, loaded, rungs, digest, output, out)
    side.print(f"record: {path}" + ("" if digest else " (cubin digests left out: this NVRTC is not "
                                                      "the record's)"), highlight=False)
    if install:
        side.print(f"installed: {record.install(rec)}", highlight=False)
    if as_json:
        machine.emit(rec)
