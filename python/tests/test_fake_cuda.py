"""The CUDA backend from Python, on the fake libcuda.so.1 of tests/fake_cuda (two H100s)."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

SCRIPT = r"""
import numpy as np
import acco

devices = acco.devices(backend="cuda")
print([d.name for d in devices], [d.backend for d in devices], [d.pci for d in devices])
engine = acco.Engine(devices[1])
src = np.arange(1 << 20, dtype=np.float32)
on_device = devices[1].allocate(src.nbytes)
up = engine.copy(on_device, src)
back = np.zeros_like(src)
down = engine.copy(back, on_device)
assert np.array_equal(back, src)
assert (up["direction"], down["direction"]) == ("host-to-device", "device-to-host"), (up, down)
pinned = engine.pinned_empty(src.shape, src.dtype)
pinned[:] = src
record = engine.copy(on_device, pinned)
assert record["src_kind"] in ("pinned", "registered"), record
cai = on_device.__cuda_array_interface__
assert cai["data"] == (on_device.ptr, False) and cai["shape"] == (src.nbytes,), cai


class GpuArray:  # what CuPy or Numba hand over: the interface alone
    def __init__(self, ptr, n, readonly=False):
        self.__cuda_array_interface__ = {"data": (ptr, readonly), "shape": (n,),
                                         "typestr": "<f4", "strides": None, "version": 3}


half = src.size // 2
engine.copy(GpuArray(on_device.ptr, half), src[half:])
engine.copy(back[:half], GpuArray(on_device.ptr, half))
assert np.array_equal(back[:half], src[half:])
try:
    engine.copy(GpuArray(on_device.ptr, half, readonly=True), src[half:])
    raise AssertionError("a read-only destination was written")
except acco.InvalidArgumentError as e:
    assert str(e) == "dst: the array is read-only", e
host_engine = acco.Engine(acco.devices(backend="host")[0])
try:
    host_engine.copy(back[:half], GpuArray(on_device.ptr, half))
    raise AssertionError("the host backend took GPU memory")
except acco.UnsupportedError as e:
    assert str(e).startswith("src: memory of a CUDA device, but the engine's device is host 0"), e
assert not hasattr(acco.devices(backend="host")[0].allocate(8), "__cuda_array_interface__")
del engine
pinned[:] = 0
assert pinned.sum() == 0
print("ok")
"""


def test_the_cuda_backend_moves_numpy_arrays_to_a_gpu_and_back():
    library = pathlib.Path(os.environ.get(
        "ACCO_FAKE_CUDA", ROOT / "build" / "default" / "tests" / "fake_cuda" / "libcuda.so.1"))
    if not library.exists():
        pytest.skip(f"{library} is not built (set ACCO_FAKE_CUDA or build acco_fake_cuda)")
    # A process of its own: the driver is loaded once per process, with the environment it sees.
    env = dict(os.environ, ACCO_CUDA_LIBRARY=str(library),
               ACCO_FAKE_CUDA_CONFIG=str(ROOT / "tests" / "data" / "cuda" / "two_h100.json"))
    run = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "['NVIDIA H100 80GB HBM3', 'NVIDIA H100 80GB HBM3'] ['cuda', 'cuda'] "
        "['0000:18:00.0', '0000:2a:00.0']",
        "ok",
    ]
