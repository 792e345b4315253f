"""How NVML's total-energy counter moves on this GPU: its update period, and whether a block of
back-to-back calls measured by it gives a stable joules-per-call figure.

Run on the GPU machine: python3 experiments/energy/probe.py
Prints JSON: the counter's distinct-value intervals while idle and under TF32 load, and
joules per call of torch.matmul (strict FP32 and TF32) at two shapes over blocks of 0.25, 0.5
and 1 s, each repeated, so the spread shows what block length a figure needs.
"""
import ctypes
import json
import statistics
import time

import torch

nvml = ctypes.CDLL("libnvidia-ml.so.1")
assert nvml.nvmlInit_v2() == 0
handle = ctypes.c_void_p()
props = torch.cuda.get_device_properties(0)
bus = f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0".encode()
rc = nvml.nvmlDeviceGetHandleByPciBusId_v2(bus, ctypes.byref(handle))
if rc != 0:
    rc = nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle))
assert rc == 0, rc


def energy_mj() -> int:
    v = ctypes.c_ulonglong()
    assert nvml.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(v)) == 0
    return v.value


def intervals(seconds: float) -> dict:
    """Timestamps (ms) at which the counter changed, polled as fast as Python can."""
    changes, last, t0 = [], energy_mj(), time.perf_counter()
    reads = 0
    while time.perf_counter() - t0 < seconds:
        v = energy_mj()
        reads += 1
        if v != last:
            changes.append(((time.perf_counter() - t0) * 1e3, v - last))
            last = v
    gaps = [b[0] - a[0] for a, b in zip(changes, changes[1:])]
    return {"reads": reads, "changes": len(changes),
            "gap_ms": {"median": statistics.median(gaps), "min": min(gaps), "max": max(gaps)} if gaps else None,
            "step_mj_median": statistics.median([d for _, d in changes]) if changes else None,
            "mean_w": (sum(d for _, d in changes) / 1e3) / seconds}


def block(call, n: int) -> tuple[float, float]:
    torch.cuda.synchronize()
    e0, t0 = energy_mj(), time.perf_counter()
    for _ in range(n):
        call()
    torch.cuda.synchronize()
    return (energy_mj() - e0) / 1e3, time.perf_counter() - t0


out = {"gpu": torch.cuda.get_device_name(), "idle": intervals(1.0)}
a = torch.randn(8192, 4096, device="cuda")
b = torch.randn(4096, 6144, device="cuda")
c = torch.empty(8192, 6144, device="cuda")
torch.backends.cuda.matmul.allow_tf32 = True
# The counter polled from a thread while the main thread keeps the GPU busy (launches block
# once the queue is full, so the load lasts as long as the polling).
import threading  # noqa: E402

load = {}
poller = threading.Thread(target=lambda: load.update(intervals(2.0)))
for _ in range(200):
    torch.matmul(a, b, out=c)
poller.start()
while poller.is_alive():
    for _ in range(20):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
out["tf32_load"] = load
torch.cuda.synchronize()
res = {}
for label, tf32, (m, n, k) in [("fp32 8192x6144x4096", False, (8192, 4096, 6144)),
                               ("tf32 8192x6144x4096", True, (8192, 4096, 6144)),
                               ("fp32 1024^3", False, (1024, 1024, 1024))]:
    torch.backends.cuda.matmul.allow_tf32 = tf32
    x = torch.randn(m, n, device="cuda"); y = torch.randn(n, k, device="cuda"); z = torch.empty(m, k, device="cuda")
    call = lambda: torch.matmul(x, y, out=z)  # noqa: E731
    for _ in range(10):
        call()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(20):
        call()
    torch.cuda.synchronize()
    per = (time.perf_counter() - t) / 20
    rows = {}
    for secs in (0.25, 0.5, 1.0):
        n_calls = max(3, round(secs / per))
        js = [block(call, n_calls) for _ in range(4)]
        rows[str(secs)] = {"calls": n_calls, "j_per_call": [j / n_calls for j, _ in js],
                           "watts": [j / s for j, s in js]}
    res[label] = {"ms_per_call": per * 1e3, "blocks": rows}
out["blocks"] = res
print(json.dumps(out, indent=1))
