"""`gemmlab judge` on the terminal (issue 30, point 2): the solution's own traceback once per error,
no table before a load error or a limit, messages that say what happened, no internal names, the
detected framework, --verbose; and the command's new options, --nvcc-flags and --profile."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gemmlab.judge import profile
from gemmlab.judge.userfile import build_cuda
from tests.clitools import assert_one_line, invoke

SOL = Path(__file__).parent / "fixtures" / "solutions"
QUICK = ["--no-perf", "--iters", "1", "--warmup", "0"]
HAS_NVCC = shutil.which("nvcc") is not None or Path("/usr/local/cuda/bin/nvcc").exists()
TABLE_HEAD = "M×N×K"  # a column of the cases' table


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_solution_s_traceback_once_with_its_own_frames_and_the_cases():
    result = invoke("judge", SOL / "raises_deep.py", "--group", "notes", *QUICK)
    assert result.exit_code == 1 and result.exception is None or isinstance(result.exception, SystemExit)
    out = result.output
    assert out.count("Traceback (the solution's frames):") == 1, out
    assert "the solution raised in case notes-1x1x1 (and in 8 more cases):" in out
    # Its three frames, innermost last, and nothing of the judge's or torch's.
    frames = [line.strip() for line in out.splitlines() if line.strip().startswith('File "')]
    assert [f.rsplit(", in ", 1)[1] for f in frames] == ["solve", "_tile", "_inner"], frames
    assert all("raises_deep.py" in f for f in frames)
    assert "gemmlab/judge" not in out and "site-packages" not in out
    block = out.split("the solution raised in case", 1)[1]
    assert block.count("ValueError: tile of 1 rows does not fit") == 2  # the traceback's, then the reason
    assert out.rstrip().endswith("notes-1x1x1: ValueError: tile of 1 rows does not fit\nREJECTED")


def test_an_empty_file_says_what_is_missing_without_internal_names():
    result = invoke("judge", SOL / "empty.py", *QUICK)
    assert result.exit_code == 1
    out = result.output
    assert "could not load the solution: empty.py defines no solve function" in _flat(out)
    assert "SolutionError" not in out and "gemmlab.judge" not in out
    header = out.splitlines()[0]
    assert " · unknown · " in header and "torch" not in header, header
    assert TABLE_HEAD not in out  # no table of nothing


def test_a_hang_says_what_happened_and_shows_no_empty_table():
    result = invoke("judge", SOL / "hangs.py", "--timeout", "2", *QUICK)
    assert result.exit_code == 1
    out = _flat(result.output)
    assert "example-1: time limit: the solution did not return within 2 s; its process was ended" in out
    assert TABLE_HEAD not in out
    assert "left running" not in out  # the hung process is the verdict's subject, not a leftover


def test_a_memory_limit_shows_no_empty_table():
    result = invoke("judge", SOL / "eats_memory.py", "--memory-limit", "1", *QUICK)
    assert result.exit_code == 1
    assert "memory limit: the solution's processes held" in _flat(result.output)
    assert TABLE_HEAD not in result.output


def test_a_syntax_error_shows_python_s_lines(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("import torch\n\ndef solve(a, b, c, M, N, K)\n    pass\n")
    result = invoke("judge", path, *QUICK)
    assert result.exit_code == 1
    out = result.output
    assert "the solution failed to load:" in out and "def solve(a, b, c, M, N, K)" in out and "^" in out
    # It does not parse, so its imports are read line by line: still torch.
    assert "SyntaxError" in out and TABLE_HEAD not in out and " · torch · " in out.splitlines()[0]


@pytest.mark.parametrize("name,label", [("triton_right.py", "triton"), ("right_torch.py", "torch"),
                                        ("hangs.py", "unknown")])
def test_the_label_is_what_was_detected(name, label):
    from gemmlab.judge.isolate import check_usage

    assert check_usage(SOL / name, None, "fp32", None, None, None).label == label


def test_verbose_shows_all_of_the_solution_s_output():
    short = invoke("judge", SOL / "prints_lines.py", "--group", "example", *QUICK)
    assert short.exit_code == 0, short.output
    assert "the last 30 of 50 lines; --verbose shows all" in short.output
    assert "line 19\n" not in short.output and "line 20\n" in short.output
    full = invoke("judge", SOL / "prints_lines.py", "--group", "example", "--verbose", *QUICK)
    assert full.exit_code == 0 and "(stdout and stderr, all of 50 lines)" in full.output
    assert "line 0\n" in full.output and "line 49\n" in full.output


# -- --nvcc-flags ------------------------------------------------------------------------------

@pytest.mark.parametrize("args,message", [
    (["--nvcc-flags", "-arch=sm_80"], "--nvcc-flags builds CUDA solutions"),  # a .py
])
def test_nvcc_flags_on_a_python_file_is_a_usage_error(args, message):
    assert_one_line(invoke("judge", SOL / "right_torch.py", *args), 2, "error:", message)


@pytest.mark.parametrize("flags,message", [
    ('-arch="sm_80', "No closing quotation"),
    ("-o /tmp/x.so", "cannot name the output file"),
])
def test_bad_nvcc_flag_strings_are_usage_errors(flags, message):
    assert_one_line(invoke("judge", SOL / "right.cu", "--nvcc-flags", flags), 2, "error:", message)


@pytest.mark.skipif(not HAS_NVCC, reason="nvcc not installed")
@pytest.mark.parametrize("flags,named", [("-arch=sm_80", "nvcc -O3 -std=c++17 -arch=sm_80"),
                                         ("", "nvcc -O3 -std=c++17 (nvcc's default target)"),
                                         ("-O2 -arch=sm_90", "nvcc -std=c++17 -O2 -arch=sm_90"),
                                         ("-arch native", "nvcc -O3 -std=c++17 -arch=sm_90 (-arch=native: the GPU of Hopper")])
def test_a_cu_builds_with_the_given_flags(flags, named):
    from tests.clitools import HAS_GPU

    if HAS_GPU:
        pytest.skip("on a GPU the file is judged: tests/test_judge_gpu.py")
    result = invoke("judge", SOL / "right.cu", f"--nvcc-flags={flags}")
    assert_one_line(result, 3, "not run here:", f"right.cu compiles ({named}", "no CUDA GPU")


@pytest.mark.skipif(not HAS_NVCC, reason="nvcc not installed")
def test_flags_nvcc_refuses_are_a_compile_verdict():
    result = invoke("judge", SOL / "right.cu", "--nvcc-flags", "-arch=sm_1")
    assert result.exit_code == 1 and result.exception is None or isinstance(result.exception, SystemExit)
    out = result.output
    assert out.splitlines()[0].endswith("built with nvcc -O3 -std=c++17 -arch=sm_1"), out
    assert " · ? · " not in out.splitlines()[0]  # the device is named before anything is built
    assert "nvcc failed to compile right.cu with --nvcc-flags '-arch=sm_1'" in out
    assert "sm_1" in out.split("nvcc failed", 1)[1] and "Traceback" not in out
    assert out.rstrip().endswith("REJECTED")


@pytest.mark.skipif(not HAS_NVCC, reason="nvcc not installed")
def test_the_build_cache_is_keyed_by_the_flags(tmp_path):
    default = build_cuda(SOL / "right.cu", "sm_90a", tmp_path)
    sm80 = build_cuda(SOL / "right.cu", "sm_90a", tmp_path, ["-arch=sm_80"])
    again = build_cuda(SOL / "right.cu", "sm_90a", tmp_path, ["-arch=sm_80"])
    assert default != sm80 and sm80 == again and sm80.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([default.name, sm80.name])  # no partial file


@pytest.mark.parametrize("flags,arch,built", [
    (["-arch=native"], "sm_90a", ["-arch=sm_90"]),  # nvcc's native is the plain target, not sm_90a
    (["--gpu-architecture=native", "-lineinfo"], "sm_90a", ["-arch=sm_90", "-lineinfo"]),
    (["-O2", "-arch", "native"], "sm_100a", ["-O2", "-arch=sm_100"]),
    (["-arch=sm_80", "-Xptxas", "-v"], "sm_90a", ["-arch=sm_80", "-Xptxas", "-v"]),
    (["native"], "sm_90a", ["native"]),  # not a target without the flag before it: nvcc's to refuse
])
def test_native_is_named_as_the_gpu_it_means(flags, arch, built):
    from gemmlab.judge.userfile import names_native, resolve_native

    assert resolve_native(flags, arch) == built
    assert names_native(flags) == (built != flags)


@pytest.mark.skipif(not HAS_NVCC, reason="nvcc not installed")
def test_a_native_build_holds_code_for_the_gpu_it_means(tmp_path):
    # In the judge's sandbox nvcc sees no GPU: left to itself it warns and builds its default
    # target (sm_75 for nvcc 13): a library with no Hopper code (experiments/export-flags).
    from gemmlab.cuda import tools

    lib = build_cuda(SOL / "right.cu", "sm_90a", tmp_path, ["-arch=native"])
    listing = subprocess.run([tools.find("cuobjdump"), "--list-elf", str(lib)], capture_output=True, text=True,
                             check=True).stdout
    assert "sm_90" in listing and "sm_75" not in listing, listing


# -- --profile ----------------------------------------------------------------------------------

def test_profile_without_a_gpu_exits_3_in_one_line(monkeypatch):
    monkeypatch.setattr("gemmlab.runtime.has_gpu", lambda: False)
    assert_one_line(invoke("judge", SOL / "right_torch.py", "--profile"), 3, "not run here:", "--profile needs a CUDA GPU")


def test_profile_without_ncu_exits_3_in_one_line(monkeypatch):
    from gemmlab.cuda import tools

    def missing(name):
        raise tools.ToolMissing(f"{name} not found: {tools.INSTALL[name]}")

    monkeypatch.setattr("gemmlab.runtime.has_gpu", lambda: True)
    monkeypatch.setattr(tools, "find", missing)
    assert_one_line(invoke("judge", SOL / "right_torch.py", "--profile"), 3, "not run here:", "ncu not found")


def test_profile_usage_errors_come_first():
    assert_one_line(invoke("judge", SOL / "right_torch.py", "--profile", "--sanitize", "memcheck"), 2,
                    "error:", "--profile and --sanitize exclude each other")
    assert_one_line(invoke("judge", SOL / "right_torch.py", "--profile", "--precision", "fp16"), 2,
                    "error:", "unknown precision")


def test_ncu_without_counter_access_is_cannot_profile(tmp_path):
    fake = tmp_path / "ncu"
    fake.write_text("#!/bin/sh\necho '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access "
                    "NVIDIA GPU Performance Counters on the target device 0.'\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(profile.CannotProfile, match="ERR_NVGPUCTRPERM"):
        profile.profile_side(str(fake), "cublas", [], {})


NCU_CSV = '''==PROF== Connected to process 2058 (/usr/bin/python3.12)
==PROF== Disconnected from process 2058
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","2058","python3.12","127.0.0.1","void splitk_prepass<float>(const float *, int)","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","us","95.36"
"0","2058","python3.12","127.0.0.1","void splitk_prepass<float>(const float *, int)","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0","Command line profiler metrics","launch__registers_per_thread","register/thread","32"
"1","2058","python3.12","127.0.0.1","void bigtile::main<128, 8>(const float *, const float *, float *, int, int, int)","1","7","(256, 1, 1)","(1,056, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","7,801,216"
"1","2058","python3.12","127.0.0.1","void bigtile::main<128, 8>(const float *, const float *, float *, int, int, int)","1","7","(256, 1, 1)","(1,056, 1, 1)","0","9.0","Command line profiler metrics","sm__throughput.avg.pct_of_peak_sustained_elapsed","%","91.25"
"1","2058","python3.12","127.0.0.1","void bigtile::main<128, 8>(const float *, const float *, float *, int, int, int)","1","7","(256, 1, 1)","(1,056, 1, 1)","0","9.0","Command line profiler metrics","launch__shared_mem_per_block_dynamic","byte","65,536"
"1","2058","python3.12","127.0.0.1","void bigtile::main<128, 8>(const float *, const float *, float *, int, int, int)","1","7","(256, 1, 1)","(1,056, 1, 1)","0","9.0","Command line profiler metrics","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","inst","0.03"
"1","2058","python3.12","127.0.0.1","void bigtile::main<128, 8>(const float *, const float *, float *, int, int, int)","1","7","(256, 1, 1)","(1,056, 1, 1)","0","9.0","Command line profiler metrics","smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio","inst","0.80"
"1","2058","python3.12","127.0.0.1","void bigtile::main<128, 8>(const float *, const float *, float *, int, int, int)","1","7","(256, 1, 1)","(1,056, 1, 1)","0","9.0","Command line profiler metrics","smsp__average_warps_issue_stalled_selected_per_issue_active.ratio","inst","1.00"
"1","2058","python3.12","127.0.0.1","void bigtile::main<128, 8>(const float *, const float *, float *, int, int, int)","1","7","(256, 1, 1)","(1,056, 1, 1)","0","9.0","Command line profiler metrics","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","inst","0.10"
"1","2058","python3.12","127.0.0.1","void bigtile::main<128, 8>(const float *, const float *, float *, int, int, int)","1","7","(256, 1, 1)","(1,056, 1, 1)","0","9.0","Command line profiler metrics","sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active","%","0"
'''


def test_ncu_csv_becomes_kernels_in_launch_order_with_units_applied():
    first, second = profile.parse(NCU_CSV)
    assert profile.short_name(first.name) == "splitk_prepass" and profile.short_name(second.name) == "main"
    assert first.get("gpu__time_duration.sum") == pytest.approx(0.09536)  # µs → ms
    assert second.get("gpu__time_duration.sum") == pytest.approx(7.801216)  # ns → ms, thousands separators
    assert second.get("launch__shared_mem_per_block_dynamic") == 65536


def test_the_side_by_side_columns():
    kernels = profile.parse(NCU_CSV)
    heads, rows, notes = profile.columns(profile.Profile(kernels, kernels[1:]))
    assert heads == ["yours: splitk_prepass", "yours: main", "cuBLAS: main"]
    row = {r[0]: r[1:] for r in rows}
    assert row["duration (ms)"] == ["0.095", "7.801", "7.801"]
    assert row["shared memory per block (KiB)"] == ["-", "64.0", "64.0"]
    assert row["tensor pipe (% of active cycles)"] == ["-", "0.0", "0.0"]
    # The top stalls, "selected" (issuing, not a stall) left out, largest first.
    assert row["top stalls (warps per issue)"][1] == "not_selected 0.80, barrier 0.10, long_scoreboard 0.03"
    assert notes == ["yours: 2 kernels, 7.897 ms in all"]


def test_a_metric_this_gpu_lacks_is_dropped_and_the_run_tried_again(tmp_path, monkeypatch):
    """A fake ncu that refuses the optional (regex) metrics and, asked again without them, writes
    its CSV to --log-file: the side's kernels come from the second run. It runs in the sandbox,
    as ncu does: its log of calls is a place the test makes writable."""
    import sys

    from gemmlab.judge import sandbox

    monkeypatch.setenv(sandbox.WRITABLE_ENV, str(tmp_path))

    csv_file = tmp_path / "sample.csv"
    csv_file.write_text(NCU_CSV)
    calls = tmp_path / "calls"
    fake = tmp_path / "ncu"
    fake.write_text(f"#!{sys.executable}\n"
                    "import sys\n"
                    "args = sys.argv[1:]\n"
                    f"open({str(calls)!r}, 'a').write(args[args.index('--metrics') + 1] + '\\n')\n"
                    "if 'regex:' in args[args.index('--metrics') + 1]:\n"
                    "    print('==ERROR== Failed to find metric regex:sm__pipe_tensor'); sys.exit(1)\n"
                    f"open(args[args.index('--log-file') + 1], 'w').write(open({str(csv_file)!r}).read())\n")
    fake.chmod(0o755)
    kernels, note = profile.profile_side(str(fake), "cublas", [], {})
    assert [profile.short_name(k.name) for k in kernels] == ["splitk_prepass", "main"] and note == ""
    first, second = calls.read_text().splitlines()
    assert "regex:" in first and "regex:" not in second and "sm__pipe_fma" not in second


@pytest.mark.skipif(not HAS_NVCC, reason="needs nvcc")
def test_json_is_a_document_even_where_the_file_cannot_run_here():
    """A .cu without a GPU: exit 3, and stdout still one JSON document that says why (book --judged reads it)."""
    import json

    import torch

    if torch.cuda.is_available():
        pytest.skip("runs here: the not-run document is a CPU machine's")
    result = invoke("judge", str(SOL / "right.cu"), "--json", *QUICK)
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["passed"] is False and "no CUDA GPU" in doc["not_run"] and doc["schema"] == "judge/1"


@pytest.mark.skipif(not HAS_NVCC, reason="needs nvcc")
def test_a_cu_without_an_extern_c_solve_is_rejected_with_or_without_a_gpu():
    """Read from the library's symbol table, before anything is loaded or run."""
    result = invoke("judge", str(SOL / "no_extern_solve.cu"), *QUICK)
    assert result.exit_code == 1
    assert 'defines no extern "C" solve(...)' in _flat(result.stdout)
