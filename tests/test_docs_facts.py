"""Figures the prose states that the code decides: each is derived here, so the two cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from gemmlab import registry
from gemmlab.policy import classes
from gemmlab.ui.errors import Tally
from tests.clitools import invoke

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text()
DEFAULT_MD = (ROOT / "src" / "gemmlab" / "policy" / "default.md").read_text()
H200_SMS = 132


def flat(text: str) -> str:
    return " ".join(text.split())


def cpu_summary_of_check_all() -> str:
    """The closing line `gemmlab check` (every implementation) prints on a CPU with Triton installed."""
    tally = Tally()
    for impl in registry.IMPLEMENTATIONS:
        ok, why = impl.can_run_on(torch.device("cpu"))
        tally.add(True) if ok else tally.skip(why)
    return tally.line()


def test_readme_example_summary_line_is_what_check_prints_on_a_cpu():
    from gemmlab.langs import TOOLCHAINS

    missing = [t.missing() for t in TOOLCHAINS.values() if t.missing()]
    if missing:  # then those rungs say "install gemmlab[…]" instead
        pytest.skip(f"README's line is CI's, where every toolchain is installed: {missing[0]}")
    line = cpu_summary_of_check_all()
    gpu_only = sum(impl.family is registry.Family.CUDA or impl.family in registry.LANGUAGE_FAMILIES
                   for impl in registry.IMPLEMENTATIONS)
    assert line.endswith(f"0 failed, {gpu_only} not run (CUDA kernels need a CUDA GPU)")  # the example's premise
    assert f"`{line}` on a CPU" in flat(README)


def _phrase(waves: float | None) -> str:
    """How default.md says an output size's bound (a new bound needs words here and there)."""
    return {0.25: "up to a quarter of a wave", 1: "up to one wave", 4: "up to four", None: "beyond"}[waves]


#: How the docs write micro's bound, the work per SM (a new bound needs words here and there).
MICRO_BOUND = {1 << 22: "2²² per SM"}[classes.MICRO_WORK_PER_SM]
#: And its bound where the outputs pass quarter-wave's (a quarter of a wave).
MICRO_WIDE = {(1 << 21, 0.25): "at most 2²¹ per SM where the outputs pass a quarter of a wave"}[
    classes.MICRO_WIDE_WORK_PER_SM, classes.OUTPUT_SIZES[0][1]]


def test_explain_default_names_every_size_class_with_its_bound():
    text = flat(DEFAULT_MD)
    assert f"*micro* where the work M·N·K is at most {MICRO_BOUND}, and {MICRO_WIDE}" in text
    for name, waves in classes.OUTPUT_SIZES:
        assert f"*{name}* {_phrase(waves)}" in text, name
    shown = flat(invoke("explain", "default").output)
    assert f"micro where the work M·N·K is at most {MICRO_BOUND}, and {MICRO_WIDE}" in shown  # emphasis gone
    for name, waves in classes.OUTPUT_SIZES:
        assert f"{name} {_phrase(waves)}" in shown
    assert classes.SIZES == ("micro", *(name for name, _ in classes.OUTPUT_SIZES))


def test_explain_default_examples_fall_in_the_classes_it_names():
    example = re.search(r"on the H200's (\d+) SMs: ([^)]*)\)", flat(DEFAULT_MD))
    assert example and int(example.group(1)) == H200_SMS
    found = re.findall(r"(\d+)(?:×(\d+)×(\d+)|³) (?:and up )?([\w-]+)", example.group(2))
    assert [size for *_, size in found] == list(classes.SIZES)
    for m, n, k, size in found:
        shape = (int(m), int(n), int(k)) if n else (int(m),) * 3
        assert classes.size_of(*shape, H200_SMS) == size, (shape, size)


def test_readme_states_each_size_bound_as_classes_defines_it():
    fractions = {0.25: "¼", 1: "1", 4: "4"}
    expected = ", ".join(f"{name} ≤ {fractions[waves]}" if waves is not None else f"{name} beyond"
                         for name, waves in classes.OUTPUT_SIZES)
    text = flat(README)
    assert expected in text and f"micro where the work M·N·K is at most {MICRO_BOUND}, and {MICRO_WIDE}" in text


def _commands_in(sentence_start: str) -> set[str]:
    """The `command`s README lists in the parenthesis after `sentence_start`."""
    after = flat(README).split(sentence_start, 1)[1]
    return set(re.findall(r"`(\w+)`", after[:after.index(")")]))


def test_readme_lists_the_commands_that_take_a_shape_and_names():
    import typer

    from gemmlab.cli import app
    from gemmlab.ui import usage

    group = typer.main.get_command(app)
    with_shape = {n for n, c in group.commands.items() if any(p.name == "shape" for p in c.params)}
    assert with_shape == {n for n, c in group.commands.items() if isinstance(c, usage.ShapeCommand)}
    assert _commands_in("Wherever a command takes a shape (") == with_shape == {"check", "bench", "tune", "sweep", "explain"}
    with_names = {n for n, c in group.commands.items() if any(p.name in ("names", "name") for p in c.params)}
    assert _commands_in("Wherever a command takes an implementation (") == with_names - {"study"}


def test_the_tune_command_the_docs_give_is_the_one_that_made_the_committed_record():
    import json

    made_by = json.loads((ROOT / "src" / "gemmlab" / "tuned" / "nvidia-h200.json").read_text())["rungs"]
    for doc, text in (("README.md", README), ("policy/default.md", DEFAULT_MD)):
        given = re.findall(r"`gemmlab tune ((?:[a-z0-9][a-z0-9-]* )*[a-z0-9][a-z0-9-]*)(?: --install)?`", flat(text))
        given = [g.split() for g in given if len(g.split()) > 1]
        assert given, doc
        for rungs in given:
            assert sorted(rungs) == sorted(made_by), f"{doc}: gemmlab tune {' '.join(rungs)}; the record: {made_by}"
