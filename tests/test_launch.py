"""The launch model on the CPU: parameter packing, plain steps, the wgmma host's plan."""

from __future__ import annotations

import ctypes
import dataclasses

import numpy as np
import pytest
import torch

from gemmlab import registry
from gemmlab.cuda import hopper
from gemmlab.cuda.launch import TensorMap, pack
from gemmlab.cuda.rung import Call


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


@pytest.mark.parametrize("impl", [i for i in registry.IMPLEMENTATIONS if i.family == "cuda" and i.rung <= 15],
                         ids=lambda i: i.name)
def test_ladder_launches_are_one_plain_step(impl):
    """Every ladder rung runs one kernel, (A, B, C, M, N, K), static shared memory, no cluster."""
    call = _call(129, 33, 257)
    for launch in impl.launches:
        (step,) = launch.steps(call, None)
        assert step.kernel == launch.kernel and step.kernel.smem == 0 and step.kernel.cluster == (1, 1, 1)
        rows, cols = launch.tile
        assert step.grid == (-(-257 // cols), -(-129 // rows), 1)
        assert step.args[:3] == (call.a.data_ptr(), call.b.data_ptr(), call.c.data_ptr())
        assert [int(x) for x in step.args[3:]] == [129, 33, 257]
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


@pytest.mark.parametrize("name,which,copies_a", [("wgmma-tma", 0, True), ("wgmma-ws", 0, False),
                                                  ("wgmma-ws", 1, True)])
def test_wgmma_host_plans_prepasses_and_descriptors(fake_maps, name, which, copies_a):
    launch = registry.get(name).launches[which]
    m, n, k = 300, 257, 301
    ld = hopper.pitch(n)
    call = _call(m, n, k)
    workspace = torch.empty(launch.workspace_bytes(m, n, k), dtype=torch.uint8)
    assert workspace.numel() >= k * ld * 4 + (m * ld * 4 if copies_a else 0)
    if launch.persistent:
        launch = dataclasses.replace(launch, persistent=False)  # its grid asks the GPU
    steps = launch.steps(call, workspace)
    kinds = [s.kernel.entry for s in steps]
    assert kinds == ["transpose_tf32"] + (["round_rows_tf32"] if copies_a else []) + [launch.entry]
    bt = workspace.data_ptr()
    assert steps[0].args[:2] == (call.b.data_ptr(), bt)
    (a_map, b_map) = fake_maps
    a_source = a_map[0]
    assert (a_source != call.a.data_ptr()) == copies_a
    assert a_map[1:] == (m, n, (ld if copies_a else n) * 4, launch.tile[0], hopper.STEP, 128)
    assert b_map == (bt, k, n, ld * 4, launch.tile[1] // launch.kernel.cluster[0], hopper.STEP, 128)
    main = steps[-1]
    assert main.args[2] == call.c.data_ptr() and [int(x) for x in main.args[3:]] == [m, n, k]
    # Every buffer the plan writes lies inside the workspace.
    if copies_a:
        assert bt < a_source and a_source + m * ld * 4 <= bt + workspace.numel()


def test_wgmma_fast_path_needs_a_describable_a():
    a = torch.empty(64, 260)
    assert hopper.a_in_place(a, None, None, 64, 260, 8)
    assert not hopper.a_in_place(a, None, None, 64, 259, 8)
    assert not hopper.a_in_place(torch.empty(64 * 260 + 1)[1:].view(64, 260), None, None, 64, 260, 8)
