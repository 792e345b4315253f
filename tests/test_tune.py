"""`gemmlab tune`, shape classes and `default`: everything but the GPU's figures, on a CPU.

The search runs with a fake `Measure` (verification and timing are the GPU's part), so the plan,
the compile-time rejections, the decision, the record and the dispatch built from it are all
checked here; a `gpu` test judges the exported `default` on the GPU itself.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import re
import subprocess
import types
from pathlib import Path

import pytest

from gemmlab import launches, registry
from gemmlab.cuda.compiler import HOPPER_ARCH, CompileError
from gemmlab.cuda.handoff import SplitPays
from gemmlab.cuda.needs import Needs
from gemmlab.export import export_text
from gemmlab.policy import classes, default, record, twins
from gemmlab.policy.classes import CLASSES, InClass, ShapeClass, classify
from gemmlab.policy.spaces import SPACES
from gemmlab.tune import search
from tests.clitools import HAS_GPU, assert_one_line, files_under, invoke

H200_SMS = 132
GPU = {"name": "NVIDIA Test GPU", "sm_count": H200_SMS, "compute_capability": "9.0"}
ALIGNED = search.ALIGNED

# ---- shape classes -----------------------------------------------------------------------------


def test_the_sweep_shapes_fall_in_the_classes_the_docs_say_on_the_h200():
    big = (8192, 6144, 4096)
    want = {(1024, 1024, 1024): "one-wave-tiled", (2048, 2048, 2048): "few-waves-tiled",
            (4096, 4096, 4096): "many-waves-tiled", (8192, 8192, 8192): "many-waves-tiled", big: "many-waves-tiled",
            (8191, 6143, 4095): "many-waves-odd", (8191, 6144, 4096): "many-waves-aligned",
            (8192, 6143, 4096): "many-waves-odd-n", (8192, 6144, 4095): "many-waves-odd"}
    for shape, key in want.items():
        assert classify(*shape, H200_SMS).key == key, shape


@pytest.mark.parametrize("sms", [100, 114, 132, 160])
def test_each_representative_shape_is_in_its_own_class(sms):
    reps = classes.representatives()
    assert list(reps) == list(CLASSES)
    for cls, shape in reps.items():
        assert classify(*shape, sms) == cls, (cls, shape, sms)


def test_classes_partition_every_shape():
    for m, n, k in itertools.product((1, 4, 127, 128, 1023, 1024, 2048, 4095, 8192), repeat=3):
        held = [c for c in CLASSES if InClass(c, H200_SMS)(ALIGNED, ALIGNED, ALIGNED, m, n, k)]
        assert held == [classify(m, n, k, H200_SMS)]


@pytest.mark.parametrize("shape,size", [
    ((2408, 99, 1345), "few-waves"), ((1227, 150, 1523), "one-wave"),  # over 2²¹ a SM, outputs past ¼ wave
    ((6276, 50, 233), "micro"), ((2529, 2, 3047), "micro"),  # as many outputs, under 2²¹ a SM
    ((1392, 1096, 318), "micro"), ((512, 512, 512), "micro"),  # over 2²¹ a SM, outputs within ¼ wave
    ((2048, 129, 2048), "few-waves")])  # over 2²² a SM
def test_micro_leaves_out_wide_outputs_past_half_its_work(shape, size):
    """The random records' micro shapes where the 128-tile builds led `small`
    (experiments/README.md#random-shapes) are out of micro on the H200; the ones where `small` led stay in."""
    assert classes.size_of(*shape, H200_SMS) == size


def test_in_class_says_its_bounds_in_words():
    text = str(InClass(ShapeClass("few-waves", "odd"), H200_SMS))
    assert text.startswith("shape class few-waves-odd on 132 SMs")
    assert f"{H200_SMS * 128 * 128} < M·K ≤ {4 * H200_SMS * 128 * 128}" in text and text.endswith("; K % 4 != 0)")


def _read_class_text(text: str):
    """An independent reading of `InClass`'s words: the bounds on M·N·K and M·K, and the layout's
    clauses."""
    m = re.fullmatch(r"shape class ([\w-]+) on (\d+) SMs \((.*); (.*)\)", text)
    assert m, text
    bounds, layout = m.group(3), m.group(4)
    micro = re.fullmatch(r"M·N·K ≤ (\d+), and M·N·K ≤ (\d+) or M·K ≤ (\d+)", bounds)
    beyond = re.match(r"M·N·K > (\d+), or M·N·K > (\d+) and M·K > (\d+); (.*)", bounds)
    assert micro or beyond, bounds
    work, wide, few = map(int, (micro or beyond).groups()[:3])
    outputs = beyond.group(4) if beyond else ""
    lower = re.search(r"(\d+) < M·K", outputs) or re.search(r"M·K > (\d+)", outputs)
    upper = re.search(r"M·K ≤ (\d+)", outputs)
    lo, hi = int(lower.group(1)) if lower else 0, int(upper.group(1)) if upper else None

    def is_micro(mm, n, k) -> bool:
        return mm * n * k <= work and (mm * n * k <= wide or mm * k <= few)

    mods = [("MNK".index(d), int(v)) for d, v in re.findall(r"([MNK]) % (\d+)", layout)]

    def holds(mm, n, k) -> bool:
        dims = (mm, n, k)
        size = is_micro(mm, n, k) if micro else (
            not is_micro(mm, n, k) and lo < mm * k and (hi is None or mm * k <= hi))
        if layout == "K % 4 != 0":
            return size and k % 4 != 0
        if layout.startswith("N % 4 != 0"):  # odd-n: N not a multiple of 4, K one
            return size and n % 4 != 0 and k % 4 == 0
        if layout.startswith("N % 4 == 0"):  # aligned, and not all of the tiled multiples
            tiled = all(dims[i] % d == 0 for i, d in mods if d != 4)
            return size and n % 4 == 0 and k % 4 == 0 and not tiled
        return size and all(dims[i] % d == 0 for i, d in mods)

    return holds


@pytest.mark.parametrize("cls", CLASSES, ids=str)
def test_in_class_text_matches_its_predicate(cls):
    cond = InClass(cls, H200_SMS)
    holds = _read_class_text(str(cond))
    seen = set()
    for m, n, k in itertools.product((1, 4, 127, 128, 1023, 1024, 2048, 2049, 4096, 8191, 8192), repeat=3):
        decided = cond(ALIGNED, ALIGNED, ALIGNED, m, n, k)
        assert decided == holds(m, n, k), (str(cond), m, n, k)
        seen.add(decided)
    assert seen == {True, False}


def test_in_class_decides_in_cpp_as_in_python(tmp_path):
    from tests.test_export import _run_host_program

    conds = [InClass(c, sms) for c in CLASSES for sms in (114, 132)]
    dims = (1, 3, 4, 127, 128, 129, 1023, 1024, 1025, 2047, 2048, 4096, 4097, 6144, 8191, 8192)
    cases = list(itertools.product(dims, repeat=3))
    funcs = "".join(f"static bool c{i}(int M, int N, int K) {{ return {c.cpp()}; }}\n"
                    for i, c in enumerate(conds))
    table = ",".join("{" + ",".join(map(str, s)) + "}" for s in cases)
    calls = "".join(f"putchar('0' + c{i}(s[0], s[1], s[2]));" for i in range(len(conds)))
    lines = _run_host_program(f"{funcs}static const int cases[][3] = {{{table}}};\n"
                              f"int main() {{ for (auto& s : cases) {{ {calls} putchar('\\n'); }} }}\n",
                              tmp_path)
    for (m, n, k), line in zip(cases, lines, strict=True):
        assert line == "".join(str(int(c(None, None, None, m, n, k))) for c in conds), (m, n, k)


# ---- search spaces -----------------------------------------------------------------------------


@pytest.mark.parametrize("rung", list(SPACES))
def test_a_space_rebuilds_its_rungs_launches_from_their_current_knobs(rung):
    space = SPACES[rung]
    launches = {launch.name: launch for launch in registry.get(rung).launches}
    for name in space.launches:
        assert space.build(name, space.current(name)) == launches[name], (rung, name)


@pytest.mark.parametrize("rung", list(SPACES))
def test_candidates_start_with_the_current_knobs_and_never_repeat(rung):
    space = SPACES[rung]
    for index in space.launches:
        cands = space.candidates(index)
        assert cands[0] == space.current(index)
        assert len({tuple(sorted(c.items())) for c in cands}) == len(cands) > 1
        assert cands == space.candidates(index)  # the order is fixed


def test_a_knob_a_launch_leaves_out_holds_its_macros_default():
    # FETCH_BA came after the rungs' launches and the H200's record: they name no FETCH_BA, mean
    # 0, and rebuild without the macro (the same cubins); set, it is in the launch's macros.
    for rung in ("bigtile", "splitk"):
        space = SPACES[rung]
        assert all(space.current(i)["FETCH_BA"] == 0 for i in space.launches)
        assert all("FETCH_BA" not in launch.defines for launch in registry.get(rung).launches)
        knobs = {k: v for k, v in space.current("b-in-place").items() if k != "FETCH_BA"}
        assert space.knobs_of(knobs) == space.knobs_of(space.current("b-in-place"))  # retired ones at their kept values
        assert default.rebuild({"rung": rung, "launch": "b-in-place", "knobs": knobs}) == \
            registry.get(rung).launches[0]
        on = space.build("b-in-place", space.current("b-in-place") | {"FETCH_BA": 1})
        assert on.defines["FETCH_BA"] == 1 and "FETCH_BA=1" in on.kernel.label
    assert any(c["FETCH_BA"] == 1 for c in SPACES["splitk"].candidates("b-in-place"))


def test_a_retired_knob_is_not_searched_and_a_record_naming_it_rebuilds_what_it_timed():
    """bigtile's J_OUTER (issue 27: a knob stays only where it wins; 1 won no class of the installed
    record): its launches keep 2 and no candidate varies it; a record made while it was searched
    rebuilds the launch it names where the kernel still builds it (J_OUTER 2: the same as one that
    does not name it), and says so where it does not (1: experiments/bigtile-arms)."""
    space = SPACES["bigtile"]
    assert "J_OUTER" not in dict(space.knobs) and space.retired == {"J_OUTER": 2}
    assert all(space.build("b-in-place", c).defines["J_OUTER"] == 2 for c in space.candidates("b-in-place"))
    knobs = space.current("b-in-place")
    plain = default.rebuild({"rung": "bigtile", "launch": "b-in-place", "knobs": knobs})
    assert plain.defines["J_OUTER"] == 2 and space.knobs_of(knobs) == knobs | {"J_OUTER": 2}
    assert default.rebuild({"rung": "bigtile", "launch": "b-in-place", "knobs": knobs | {"J_OUTER": 2}}) == plain
    with pytest.raises(record.RecordError, match="J_OUTER 2 only"):
        default.rebuild({"rung": "bigtile", "launch": "b-in-place", "knobs": knobs | {"J_OUTER": 1}})


@pytest.mark.parametrize("rung", ["bigtile", "splitk", "warptile"])
def test_every_knob_the_installed_record_tuned_won_a_class_at_two_values_or_more(rung):
    """Issue 27's honest spaces, read from the H200's record (the rungs it tuned over every class):
    each knob of the rung's space took at least two values among the classes' fastest candidates
    of each launch, so none is searched where one value always wins."""
    data = json.loads(record.installed_path("nvidia-h200").read_text())
    space, won = SPACES[rung], {}
    for entry in data["classes"].values():
        timed = [c for c in entry["candidates"] if c["rung"] == rung and c.get("median_ms") is not None]
        for launch in {c["launch"] for c in timed}:
            best = min((c for c in timed if c["launch"] == launch), key=lambda c: c["median_ms"])
            knobs = space.knobs_of(best["knobs"])
            for name, _ in space.knobs:  # the searched ones: a retired knob is not
                won.setdefault(name, set()).add(knobs[name])
    assert set(won) == {name for name, _ in space.knobs}
    assert all(len(values) >= 2 for values in won.values()), won


def test_fetch_ba_compiles_without_spills_into_another_build():
    # bigtile.md: the measured build (BK 16, 3 stages, SPLIT) with B's fragments fetched first
    launch = SPACES["splitk"].build("b-in-place", SPACES["splitk"].knobs_of({"BK": 16, "STAGES": 3, "FETCH_BA": 1}))
    module = launch.compile(HOPPER_ARCH)
    assert module.resources[launch.entry].spills == 0
    assert launch.with_defines({"FETCH_BA": 0}).compile(HOPPER_ARCH).cubin != module.cubin


def test_float4_space_skips_unrolls_longer_than_the_step_and_too_many_threads():
    for knobs in SPACES["float4"].candidates("whole-tiles"):
        assert knobs["UNROLL_K"] <= knobs["BK"] and knobs["BK"] % knobs["UNROLL_K"] == 0
        assert (knobs["BM"] // 8) * (knobs["BM"] // 4) * knobs["MIN_BLOCKS"] <= 2048


#: Hopper (sm_90): 228 KB of shared memory per SM, 227 KB a block at most, 1 KB of each block's
#: kept by the system (../shared/HOPPER.md, CUDA programming guide, compute capability 9.0).
SM90_SMEM_PER_SM, SM90_SMEM_PER_BLOCK, SMEM_RESERVED = 228 * 1024, 232448, 1024


@pytest.mark.parametrize("rung", ["bigtile", "splitk"])
def test_bigtile_spaces_take_tma_with_bk_16_or_32_and_fit_min_blocks_in_an_sm(rung):
    space, seen = SPACES[rung], set()
    for index in space.launches:
        for knobs in space.candidates(index):
            seen.add((knobs["BK"], knobs["TMA_COPY"]))
            assert not knobs["TMA_COPY"] or knobs["BK"] in (16, 32)
            assert knobs["BK"] != 32 or (knobs["TMA_COPY"] and knobs["STAGES"] <= 3)
            assert knobs["STAGES"] != 2 or knobs["BK"] == 32
            launch = space.build(index, knobs)
            smem, blocks = launch.kernel.smem, int(launch.defines["MIN_BLOCKS"])
            assert smem <= SM90_SMEM_PER_BLOCK and blocks * (smem + SMEM_RESERVED) <= SM90_SMEM_PER_SM, knobs
            assert launch.all_needs is (Needs.SM90 if knobs["TMA_COPY"] else Needs.SM80)
    assert seen == {(8, 0), (16, 0), (16, 1), (32, 1)}


def test_plan_tunes_the_launch_the_rung_runs_at_the_shape():
    tiled, _ = search.plan(["warptile"], (1024, 1024, 1024))
    aligned, _ = search.plan(["warptile"], (1023, 1024, 1024))
    odd, notes = search.plan(["warptile", "float4"], (1023, 1023, 1023))
    assert {c.launch for c in tiled} == {"whole-tiles"} and {c.launch for c in aligned} == {"vec4"}
    assert {c.launch for c in odd} == {"padded"} and all(c.built.host is not None for c in odd)
    assert notes == ["float4 runs tiling2d (launch any) at this shape, which its space does not tune"]


def test_a_candidate_whose_precondition_misses_the_shape_is_rejected_without_compiling():
    cands, _ = search.plan(["float4"], (64, 32, 64))  # whole 64² tiles, not 128² ones
    assert {c.launch for c in cands} == {"whole-tiles"}
    for c in cands:
        if c.knobs["BM"] == 128:
            assert c.verdict == "rejected" and "does not hold at 64×32×64" in c.reason
        else:
            assert c.verdict == ""


def test_a_candidate_that_spills_is_rejected_at_compile_time():
    cands, _ = search.plan(["float4"], (1024, 1024, 1024))
    spilling = [c for c in cands if c.knobs == {"BM": 128, "BK": 32, "UNROLL_K": 32, "MIN_BLOCKS": 4}]
    clean = [c for c in cands if c.knobs == SPACES["float4"].current("whole-tiles")]
    search.compile_check(spilling + clean, HOPPER_ARCH)
    (bad,), (good,) = spilling, clean
    assert bad.verdict == "rejected" and "spills" in bad.reason and bad.spills > 0
    assert good.verdict == "" and good.spills == 0 and good.registers > 0
    # The record names the build it timed: a digest of the main kernel's cubin, which one changed
    # bit of the cubin changes (so a rebuild that differs in any byte is told apart).
    cubin = good.built.kernel.compile(HOPPER_ARCH).cubin
    assert good.cubin == search.cubin_digest(cubin) and len(good.cubin) == 16 and int(good.cubin, 16) >= 0
    assert search.cubin_digest(cubin[:-1] + bytes([cubin[-1] ^ 1])) != good.cubin


def test_precompile_builds_each_distinct_kernel_once_side_by_side(monkeypatch):
    import threading
    import time

    from gemmlab.cuda import dispatch

    calls, running, peak, lock = [], [0], [0], threading.Lock()

    def fake_compile(kernel, arch=None):
        with lock:
            calls.append(kernel.key)
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1

    monkeypatch.setattr(dispatch.Kernel, "compile", fake_compile)
    cands, _ = search.plan(["bigtile", "splitk"], (8192, 6144, 4096))
    distinct = {k.key for c in cands if not c.verdict for k in c.built.kernels()}
    assert search.precompile(cands, HOPPER_ARCH, workers=4) == len(distinct) > 10
    assert sorted(calls) == sorted(distinct)  # each once, the shared pre-pass kernel too
    assert peak[0] > 1  # side by side


def test_build_check_compares_builds_only_on_the_records_gpu_and_compiler(monkeypatch):
    """`default` says whether this machine builds each winner into the cubin the record timed:
    not without a GPU, not with another NVRTC or arch, and else by the digests."""
    from gemmlab.cuda import compiler

    found, _ = default.plan()
    assert found is not None  # the H200 record ships with gemmlab
    monkeypatch.setattr(default, "_gpu", lambda: (None, None, None))
    assert default.build_check().startswith("no GPU here")
    monkeypatch.setattr(default, "_gpu", lambda: ("NVIDIA H200", found["gpu"]["sm_count"], "9.0"))
    monkeypatch.setattr(compiler, "device_arch", lambda: found["arch"])
    monkeypatch.setattr(compiler, "nvrtc_version", lambda: "0.1")
    assert default.build_check().startswith("not comparable: the record was built for sm_90a by NVRTC")
    monkeypatch.setattr(compiler, "nvrtc_version", lambda: found["versions"]["nvrtc"])
    classes = [w for w in default._winners(found) if w.get("cubin")]
    recorded = {w["kernel"]: w["cubin"] for w in classes}
    assert len(set(recorded.values())) > 1  # the committed record's winners are several builds

    # Each winner "builds" into a cubin that names its kernel; the digest is then whatever this
    # machine's build of that kernel is taken to be, so both outcomes run without compiling.
    def built(winner):
        cubin = winner["kernel"].encode()
        return types.SimpleNamespace(kernel=types.SimpleNamespace(compile=lambda arch: types.SimpleNamespace(cubin=cubin)))

    here = dict(recorded)
    monkeypatch.setattr(default, "rebuild", built)
    monkeypatch.setattr(record, "cubin_digest", lambda cubin: here[cubin.decode()])
    assert default.build_check() == f"every winner builds into the cubin the record timed ({len(classes)} classes)"
    odd = sorted(recorded)[0]
    here[odd] = "0" * 16  # this machine builds one winner differently
    text = default.build_check()
    assert text.startswith("built differently") and odd in text
    assert all(k not in text for k in recorded if k != odd and k not in odd)


def test_a_candidate_that_does_not_compile_is_rejected_with_the_compilers_line(monkeypatch):
    cands, _ = search.plan(["warptile"], (1024, 1024, 1024))

    def broken(self, arch=None):
        raise CompileError(self.source, arch, "prog.cu(12): error: BK must divide 128\n1 error")

    monkeypatch.setattr(type(cands[0].built.kernel), "compile", broken)
    search.compile_check(cands[:1], HOPPER_ARCH)
    assert cands[0].verdict == "rejected"
    assert cands[0].reason == "does not compile for sm_90a: prog.cu(12): error: BK must divide 128"


def _timed(ms: list[float | None]) -> list[search.Candidate]:
    cands, _ = search.plan(["warptile"], (1024, 1024, 1024))
    for c, t in zip(cands, ms, strict=True):
        if t is None:
            c.reject("failed", "wrong")
        else:
            c.verdict, c.median_ms = "timed", t
    return cands


def test_decide_takes_the_lowest_median_and_the_first_tried_on_a_tie():
    assert search.decide(_timed([2.0, 1.5, 1.7, None])).knobs == {"BK": 16, "MIN_BLOCKS": 1}
    tie = _timed([2.0, 1.5, 1.5, 1.0 + 0.5])
    assert search.decide(tie) is tie[1]
    assert search.decide(_timed([None] * 4)) is None


# ---- the search with a fake GPU ----------------------------------------------------------------


class FakeMeasure:
    """Times from a table by kernel label (slower: later in the space), failing what it is told to."""

    def __init__(self, fail: set[str] = frozenset(), fast: dict[tuple[str, str], float] | None = None):
        self.fail, self.fast, self.calls = fail, fast or {}, []

    def verify(self, cands, shape, seed):
        for c in cands:
            if not c.verdict and c.kernel in self.fail:
                c.reject("failed", "verification: normalised max error 1.0e-01 > 2e-05 (fp32)")

    def time(self, cands, shape, warmup, iters, seed, progress):
        self.calls.append((shape, iters))
        for i, c in enumerate(cands):
            if not c.verdict:
                ms = self.fast.get((c.rung, "x".join(map(str, shape))), 10.0 + i)
                c.verdict, c.reason, c.times_ms = "timed", "ok", [ms + 0.5, ms, ms - 0.5] * (iters // 3)
        return {"cublas_ms": 10.0, "clocks_during_timing": {"samples": 0}}

    def energy(self, best, shape, seed, cublas_ms):
        # Joules in proportion to time, at 500 W: what a real counter gives at a steady power.
        return {"winner": {"joules_per_call": 0.5 * best.median_ms}, "cublas": {"joules_per_call": 0.5 * cublas_ms}}


def _tune(measure=None, rungs=("warptile", "float4"), shapes=None) -> dict:
    shapes = shapes or classes.representatives()
    return search.tune(list(rungs), shapes, measure or FakeMeasure(), HOPPER_ARCH, GPU, {"torch": "x"},
                       "abc123", iters=20, seed=5)


@pytest.fixture(scope="module")
def tuned() -> dict:
    """Float4's current knobs fastest at 1024³, warptile's elsewhere."""
    return _tune(FakeMeasure(fast={("float4", "1024x1024x1024"): 1.0}))


def test_the_record_validates_and_names_gpu_classes_candidates_and_winners(tuned):
    assert record.validate(tuned) is tuned
    assert tuned["gpu"]["slug"] == "nvidia-test-gpu" and tuned["commit"] == "abc123"
    assert list(tuned["classes"]) == [c.key for c in CLASSES]
    one_wave = tuned["classes"]["one-wave-tiled"]
    assert one_wave["iters"] == 50 and tuned["classes"]["many-waves-tiled"]["iters"] == 20  # ≥ 50 below 2048³
    assert one_wave["winner"]["rung"] == "float4" and one_wave["winner"]["ratio_vs_cublas"] == 10.0
    # The energy figure is the winner's, read after the decision (1.0 ms at 500 W).
    assert one_wave["energy"]["winner"]["joules_per_call"] == pytest.approx(0.5)
    assert tuned["classes"]["many-waves-tiled"]["winner"]["knobs"] == {"BK": 16, "MIN_BLOCKS": 2}
    verdicts = {c["verdict"] for e in tuned["classes"].values() for c in e["candidates"]}
    assert verdicts == {"timed", "rejected"}
    rejected = [c for c in one_wave["candidates"] if c["verdict"] == "rejected"]
    assert rejected and all("spills" in c["reason"] for c in rejected)


def test_the_same_timings_give_the_same_record(tuned):
    again = _tune(FakeMeasure(fast={("float4", "1024x1024x1024"): 1.0}))
    strip = lambda r: {k: v for k, v in r.items() if k != "date"}  # noqa: E731
    assert json.dumps(strip(again)) == json.dumps(strip(tuned))


def test_a_failed_candidate_never_wins_and_a_class_with_none_verified_has_no_winner():
    labels = {c.kernel for cls, shape in classes.representatives().items()
              for c in search.plan(["warptile"], shape)[0]}
    rec = _tune(FakeMeasure(fail=labels - {"warptile[BK=8,MIN_BLOCKS=1,EXACT_TILES=1]"}), rungs=["warptile"])
    assert rec["classes"]["many-waves-tiled"]["winner"]["knobs"] == {"BK": 8, "MIN_BLOCKS": 1}
    assert rec["classes"]["many-waves-odd"]["winner"] is None
    # Every candidate there failed verification, or was rejected before it (a candidate that spills
    # under one NVRTC may not under another: NVRTC 13.0 spills warptile's padded BK=16, 13.5 not).
    tried = rec["classes"]["many-waves-odd"]["candidates"]
    assert all(c["verdict"] in ("failed", "rejected") and c["median_ms"] is None for c in tried)
    assert any(c["verdict"] == "failed" for c in tried)


def test_record_round_trip_and_install(tuned, tmp_path):
    path = record.save(tuned, tmp_path / "results")
    assert path.parent == tmp_path / "results" / "tune" / "nvidia-test-gpu"
    assert record.load(path) == json.loads(json.dumps(tuned))
    installed = record.install(tuned, tmp_path / "tuned")
    assert installed == tmp_path / "tuned" / "nvidia-test-gpu.json"
    found, why = record.find("NVIDIA Test GPU", H200_SMS, tmp_path / "tuned")
    assert found == record.load(installed) and "nvidia-test-gpu.json" in why
    assert record.find("NVIDIA Test GPU", 114, tmp_path / "tuned")[0] is None  # another SM count
    assert record.find("NVIDIA Other", H200_SMS, tmp_path / "tuned")[0] is None


def test_a_gpu_without_its_own_record_borrows_a_siblings_and_says_so(tuned, tmp_path, monkeypatch):
    """Same compute capability and SM count: the sibling's record (the TARGET's before others), named
    as borrowed; another capability or SM count: none; the GPU's own record always comes first."""
    folder = tmp_path / "tuned"
    other = copy.deepcopy(tuned)
    other["gpu"].update(name="NVIDIA Zed", slug="nvidia-zed", compute_capability="9.0")
    record.install(other, folder)
    target = copy.deepcopy(other)
    target["gpu"].update(name="NVIDIA H200", slug=record.TARGET)
    record.install(target, folder)
    found, why = record.find("NVIDIA H100 80GB HBM3", H200_SMS, folder, capability="9.0")
    assert found["gpu"]["name"] == "NVIDIA H200" and "borrowed" in why and "sm_90" in why
    assert not record.is_own(found, "NVIDIA H100 80GB HBM3")
    assert record.find("NVIDIA H100 80GB HBM3", 114, folder, capability="9.0")[0] is None
    assert record.find("NVIDIA RTX", H200_SMS, folder, capability="8.9")[0] is None
    assert record.find("NVIDIA H100 80GB HBM3", H200_SMS, folder)[0] is None  # capability unknown
    mine, why = record.find("NVIDIA Zed", H200_SMS, folder, capability="9.0")
    assert mine["gpu"]["name"] == "NVIDIA Zed" and "this GPU" in why and record.is_own(mine, "NVIDIA Zed")

    # What the commands print: one line with the command that makes the GPU's own record.
    monkeypatch.setattr(default, "_gpu", lambda: ("NVIDIA H100 80GB HBM3", H200_SMS, "9.0"))
    monkeypatch.setattr(record, "INSTALLED", folder)
    monkeypatch.setattr(record.find, "__defaults__", (folder, None))
    default.plan.cache_clear()
    try:
        line = default.notice()
        assert line and "NVIDIA H200's record" in line and default.TUNE_COMMAND in line
        assert default.provenance()["own"] is False
        monkeypatch.setattr(default, "_gpu", lambda: ("NVIDIA H200", H200_SMS, "9.0"))
        default.plan.cache_clear()
        assert default.notice() is None and default.provenance()["own"] is True
    finally:
        default.plan.cache_clear()


def test_a_named_record_file_overrides_the_installed_one(tuned, tmp_path, monkeypatch):
    path = record.install(tuned, tmp_path)
    monkeypatch.setenv(default.RECORD_ENV, str(path))
    default.plan.cache_clear()
    try:
        found, why = default.plan()
        assert found == record.load(path) and default.RECORD_ENV in why
    finally:
        monkeypatch.delenv(default.RECORD_ENV)
        default.plan.cache_clear()


@pytest.mark.parametrize(("change", "fragment"), [
    (lambda r: r.update(kind="bench"), "not a tune record"),
    (lambda r: r["gpu"].pop("sm_count"), "sm_count"),
    (lambda r: r["classes"].update(huge={"candidates": []}), "unknown shape class 'huge'"),
    (lambda r: r["classes"]["one-wave-odd"]["candidates"][0].update(verdict="great"), "verdict"),
    (lambda r: r["classes"]["one-wave-odd"]["winner"].update(launch=[0]), "winner needs"),
])
def test_a_malformed_record_is_refused_in_one_line(tuned, change, fragment):
    bad = copy.deepcopy(tuned)
    change(bad)
    with pytest.raises(record.RecordError) as info:
        record.validate(bad)
    assert fragment in str(info.value) and "\n" not in str(info.value)


# ---- default: dispatch from the record ---------------------------------------------------------


def _default(rec: dict | None) -> registry.Implementation:
    launches = default.launches_from(rec, registry.get(default.BUILTIN).launches)
    return dataclasses.replace(registry.get("default"), launches=launches)


def _selected(impl, m, n, k):
    return next(x for x in impl.launches if x.when is None or x.when(ALIGNED, ALIGNED, ALIGNED, m, n, k))


def test_default_without_a_record_is_warptile():
    assert _default(None).launches == registry.get("warptile").launches


def test_default_runs_each_classs_winner_on_every_shape_of_the_class(tuned):
    impl = _default(tuned)
    builtin = registry.get("warptile").launches
    assert impl.launches[-len(builtin):] == builtin and impl.launches[-1].when is None
    for key, entry in tuned["classes"].items():
        winner = default.rebuild(entry["winner"])
        for shape in [tuple(entry["shape"])] + [s for s in itertools.product((1024, 1020, 1021, 2048), repeat=3)
                                                if classify(*s, H200_SMS).key == key]:
            chosen = _selected(impl, *shape)
            if winner.when is None or winner.when(ALIGNED, ALIGNED, ALIGNED, *shape):
                assert chosen.kernel == winner.kernel and chosen.host == winner.host, (key, shape)
                assert isinstance(chosen.when.parts[0] if hasattr(chosen.when, "parts") else chosen.when,
                                  InClass)
            else:  # the winner's own precondition misses: what warptile runs
                assert chosen in builtin, (key, shape)
    assert _selected(impl, 1024, 1024, 1024).kernel.entry == "float4_tiled"
    assert _selected(impl, 8192, 6144, 4096).kernel.label == "warptile[BK=16,MIN_BLOCKS=2,EXACT_TILES=1]"


#: Shapes where the installed H200 record's unsplit bigtile winners leave a last wave part empty
#: (its twins run), and shapes whose tiles fill whole waves (the winners run as timed). The many-waves
#: aligned class is not among them: calibration gave it `splitk`'s build, split already.
TWIN_SHAPES = ((2432, 4960, 2432), (2600, 2000, 2600), (3072, 2048, 3072))
WHOLE_WAVE_SHAPES = ((2048, 2048, 2048), (8192, 6144, 4096), (8192, 8192, 8192))


def test_the_installed_records_unsplit_winners_run_their_split_twin_where_a_wave_is_part_empty():
    rec = json.loads((Path(default.__file__).parent.parent / "tuned" / "nvidia-h200.json").read_text())
    impl = _default(rec)
    for shape in TWIN_SHAPES + WHOLE_WAVE_SHAPES:
        cls = classify(*shape, rec["gpu"]["sm_count"]).key
        winner = default.rebuild(rec["classes"][cls]["winner"])
        chosen = _selected(impl, *shape)
        assert not winner.defines.get("SPLIT"), (cls, "the test needs an unsplit winner here")
        if shape in TWIN_SHAPES:
            assert chosen.name == f"{cls} split" and chosen.defines == winner.defines | {"SPLIT": 1}, shape
            pays = next(p for p in chosen.when.parts if isinstance(p, SplitPays))
            assert chosen.host.split and pays.parts(*shape) > 1, shape
        else:
            assert chosen.name == cls and chosen.kernel == winner.kernel, shape


#: Odd shapes, each with the twin of its class's b-padded winner that `default` runs there: by 4-byte
#: copies of B where M ≤ SCALAR_B_ROWS (in the classes that hold such M), else the winner itself,
#: K % 4 == 0 or not (the same build reading B in place ran slower: spaces._padded_refine).
PADDED_TWIN_SHAPES = {(64, 2967, 8001): "scalar", (116, 6278, 7990): "scalar", (128, 3001, 5001): "scalar",
                      (100, 3001, 4000): "scalar", (300, 3001, 2001): None, (2047, 2047, 2048): None,
                      (2047, 2047, 2047): None, (8191, 6143, 4095): None, (3839, 2351, 4692): None,
                      (640, 4093, 2049): None}


def test_the_installed_records_padded_winners_run_their_4_byte_twin_where_c_has_few_rows():
    rec = json.loads((Path(default.__file__).parent.parent / "tuned" / "nvidia-h200.json").read_text())
    impl = _default(rec)
    for shape, twin in PADDED_TWIN_SHAPES.items():
        cls = classify(*shape, rec["gpu"]["sm_count"]).key
        winner = default.rebuild(rec["classes"][cls]["winner"])
        chosen = _selected(impl, *shape)
        assert winner.defines["PAD_B"] == 1 and chosen.host.pad_b == (twin is None), (shape, cls)
        assert chosen.name == (f"{cls} {twin}" if twin else cls), shape
        if twin == "scalar":
            assert shape[0] <= twins.SCALAR_B_ROWS and chosen.defines["VEC"] == 1, shape
            assert "TMA_COPY" not in chosen.defines and chosen.defines["SPLIT"] == 1
    # B one float off its 16 bytes: the twin too (it reads B by 4-byte copies)
    off = types.SimpleNamespace(data_ptr=lambda: (1 << 20) + 4)
    m, n, k = 100, 3001, 4000
    chosen = next(x for x in impl.launches if x.when is None or x.when(ALIGNED, off, ALIGNED, m, n, k))
    assert chosen.name.endswith(" scalar")
    # no class whose shapes all have more rows gets one
    assert not any(x.name.endswith(" scalar") for x in impl.launches if x.name.split()[0] in ("few-waves-odd", "many-waves-odd", "few-waves-odd-n", "many-waves-odd-n"))


def test_a_record_naming_a_rung_without_a_space_is_refused(tuned):
    bad = copy.deepcopy(tuned)
    bad["classes"]["one-wave-tiled"]["winner"]["rung"] = "naive"
    with pytest.raises(record.RecordError, match="no search space"):
        _default(bad)


def test_the_registrys_default_is_a_cuda_fp32_rung_after_the_ladder():
    impl = registry.get("default")
    assert impl.family is registry.Family.CUDA and impl.precision == "fp32"
    # The last step of its chapter, after every strict-FP32 step it runs; its old number (25) stays
    # an alias old command lines knew it by (issue 53: the step is the one numbering).
    assert registry.in_chapter(registry.PAST_CUBLAS)[-1] is impl and impl.ref == "3.10"
    assert impl.old_number == 25 and impl.launches[-1].when is None
    assert set(impl.sources) >= {"kernels/cuda/warptile.cu"}


def test_list_and_explain_say_which_record_default_dispatches_by():
    listed = " ".join(invoke("list").output.split())
    assert "default: dispatches by " in listed  # the footer names the record
    explained = " ".join(invoke("explain", "default").output.split())
    assert "tune record" in explained and "shape classes" in explained.lower()


# ---- export ------------------------------------------------------------------------------------


def test_the_exported_default_carries_every_class_condition_in_dispatch_order(tuned):
    impl = _default(tuned)
    text = export_text(impl, "default.cu")
    body = text.split('extern "C" void solve(')[1]
    positions = [body.index(InClass(c, H200_SMS).cpp()) for c in CLASSES]
    assert positions == sorted(positions)
    assert re.search(r"gemmlab::v\d+::float4_tiled", text) and "warptile" in text
    assert text.count("static void launch_") == len(impl.launches)


def test_nvcc_builds_the_exported_default(tuned, tmp_path):
    from tests.test_export import NVCC_FLAGS, nvcc

    source = tmp_path / "default.cu"
    source.write_text(export_text(_default(tuned), source.name))
    proc = subprocess.run([nvcc(), *NVCC_FLAGS, "-o", str(tmp_path / "default.so"), str(source)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "warning" not in (proc.stdout + proc.stderr).lower()


# ---- the command line --------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "fragments"), [
    (["no-such-rung"], ["unknown implementation 'no-such-rung'"]),
    (["naive"], ["naive has no search space", "warptile, float4"]),
    (["warptile", "--shape", "8192x6144"], ["expected MxNxK"]),
    (["warptile", "--shape", "0x1x1"], ["M=0 is outside"]),
    (["warptile", "-o", "missing/t.json"], ["no such folder"]),
    (["warptile", "--iters", "5"], []),
])
def test_tune_mistakes_exit_2_before_anything_runs_or_is_written(tmp_path, monkeypatch, args, fragments):
    monkeypatch.chdir(tmp_path)
    result = invoke("tune", *args)
    assert result.exit_code == 2, result.output
    for fragment in fragments:
        assert fragment in " ".join(result.output.split())
    assert files_under(tmp_path) == set()


def test_tune_with_an_existing_output_needs_force(tmp_path):
    target = tmp_path / "t.json"
    target.write_text("keep")
    assert_one_line(invoke("tune", "warptile", "-o", target), 2, "exists", "--force")
    assert target.read_text() == "keep"


@pytest.mark.skipif(HAS_GPU, reason="checks the message where there is no GPU")
def test_tune_without_a_gpu_exits_3_in_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_one_line(invoke("tune", "warptile", "float4"), 3, "no CUDA GPU")
    assert files_under(tmp_path) == set()


def test_two_shapes_of_one_class_are_a_usage_error():
    from gemmlab.cli.tune import by_class
    from gemmlab.ui.errors import UsageError

    assert list(by_class([(1024, 1024, 1024), (8192, 6144, 4096)], H200_SMS).values()) == \
        [(1024, 1024, 1024), (8192, 6144, 4096)]
    with pytest.raises(UsageError, match="both in shape class many-waves-tiled"):
        by_class([(8192, 6144, 4096), (4096, 4096, 4096)], H200_SMS)


def test_installed_records_are_package_data_and_valid():
    text = Path("pyproject.toml").read_text()
    assert '"tuned/*.json"' in text and '"policy/*.md"' in text
    for path in record.INSTALLED.glob("*.json"):
        rec = record.load(path)
        assert path.stem == rec["gpu"]["slug"]
        default.launches_from(rec, registry.get("warptile").launches)  # every winner rebuilds


# ---- on the GPU --------------------------------------------------------------------------------


@pytest.mark.gpu
def test_the_exported_default_is_accepted_by_the_judge(tmp_path):
    from gemmlab.judge.isolate import judge_file

    path = tmp_path / "default.cu"
    path.write_text(export_text(registry.get("default"), path.name))
    v = judge_file(path, seed=49)
    assert v.passed, (v.failure, v.log[-2000:])
    assert any(c["group"] == "perf" and c["status"] == "pass" for c in v.cases)


def test_tma_warp_space_keeps_eight_one_warp_blocks_in_an_sm():
    # tma-warp is tma's kernel in blocks of one warp, eight an SM (bigtile_warp.md): every
    # candidate keeps the 64×64 tile and fits eight blocks' stages in an sm_90 SM's shared memory.

    space = SPACES["tma-warp"]
    for name in space.launches:
        for knobs in space.candidates(name):
            launch = space.build(name, knobs)
            assert launch.tile == (64, 64) and launch.threads == 32 and launch.defines["TMA_COPY"] == 1
            assert int(launch.defines["MIN_BLOCKS"]) == launches.TMA_WARP_BLOCKS
            assert launches.TMA_WARP_BLOCKS * (launch.kernel.smem + SMEM_RESERVED) <= SM90_SMEM_PER_SM, knobs
    # BK 32's three stages (49 KB a block) cannot: the space leaves them out.
    assert not space.valid({"BK": 32, "STAGES": 3, "FETCH_BA": 1})
