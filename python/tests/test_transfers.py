import gc
import sys
import threading
import time

import numpy as np
import pytest

import acco


@pytest.fixture
def device():
    return acco.devices(backend="host", host_devices=2)[0]


@pytest.fixture
def engine(device):
    return acco.Engine(device)


def test_devices_without_a_gpu_are_emulated_host_devices_opened_once():
    devices = acco.devices(backend="host", host_devices=2)
    assert [d.index for d in devices] == [0, 1]
    assert all(d.backend == "host" and d.pci == "" for d in devices)
    assert devices[0].link_bytes_per_second == pytest.approx(31.5e9, rel=0.05)
    assert acco.devices(backend="host", host_devices=2)[1] is devices[1]


def test_an_unknown_backend_is_an_invalid_argument():
    with pytest.raises(acco.InvalidArgumentError, match="'tpu'"):
        acco.devices(backend="tpu")


def test_copy_moves_a_numpy_array_into_another(engine):
    src = np.arange(100_000, dtype=np.float64)
    dst = np.zeros_like(src)
    record = engine.copy(dst, src)
    assert np.array_equal(dst, src)
    assert record["bytes"] == src.nbytes
    assert record["direction"] == "host-to-host"


def test_a_round_trip_through_device_memory_crosses_the_link(engine, device):
    src = np.random.default_rng(1).integers(0, 255, 3 << 20, dtype=np.uint8)
    on_device = device.allocate(src.nbytes)
    back = np.empty_like(src)
    assert engine.copy(on_device, src)["direction"] == "host-to-device"
    assert engine.copy(back, on_device)["direction"] == "device-to-host"
    assert np.array_equal(back, src)
    counters = engine.counters()
    assert counters["host_to_device"] == {"copies": 1, "bytes": src.nbytes}
    assert counters["device_to_host"] == {"copies": 1, "bytes": src.nbytes}


def test_copy_refuses_sizes_that_differ_and_read_only_destinations(engine):
    with pytest.raises(acco.InvalidArgumentError, match="dst holds 8 bytes, src 16"):
        engine.copy(np.zeros(1), np.zeros(2))
    frozen = np.zeros(4)
    frozen.flags.writeable = False
    with pytest.raises(acco.InvalidArgumentError, match="^dst: "):
        engine.copy(frozen, np.ones(4))
    with pytest.raises(acco.InvalidArgumentError, match="^src: .*not C-contiguous|^src: "):
        engine.copy(np.zeros(4), np.ones(8)[::2])
    with pytest.raises(acco.InvalidArgumentError, match="got int"):
        engine.copy(np.zeros(1), 3)


def test_device_memory_of_another_device_is_refused():
    first, second = acco.devices(backend="host", host_devices=2)
    engine = acco.Engine(first)
    elsewhere = second.allocate(64)
    with pytest.raises(acco.InvalidArgumentError,
                       match=r"^dst: memory of host 1 .*, not of the engine's device host 0"):
        engine.copy(elsewhere, np.zeros(64, np.uint8))
    with pytest.raises(acco.InvalidArgumentError, match="^src: memory of host 1"):
        engine.batch().add(np.zeros(64, np.uint8), elsewhere)


def test_pinned_empty_is_a_numpy_array_in_pinned_memory_without_copies(engine, device):
    pinned = acco.pinned_empty((256, 1024), "float32", device)
    assert pinned.shape == (256, 1024) and pinned.dtype == np.float32
    assert pinned.ctypes.data % 4096 == 0
    pinned[:] = np.arange(pinned.size, dtype=np.float32).reshape(pinned.shape)
    view = np.frombuffer(pinned, dtype=np.float32)  # the same memory, no copy
    assert view.ctypes.data == pinned.ctypes.data
    on_device = device.allocate(pinned.nbytes)
    record = engine.copy(on_device, pinned)
    assert record["src_kind"] in ("pinned", "registered")
    back = np.zeros_like(pinned)
    engine.copy(back, on_device)
    assert np.array_equal(back, pinned)


def test_a_pinned_array_outlives_its_engine(device):
    engine = acco.Engine(device)
    pinned = engine.pinned_empty(1 << 20, np.uint8)
    pinned[:] = 7
    del engine
    gc.collect()
    assert pinned.sum() == 7 << 20
    pinned[:] = 9
    assert int(pinned[-1]) == 9


def test_copy_async_returns_a_transfer_that_waits(engine, device):
    src = acco.pinned_empty(8 << 20, np.uint8, device)
    src[:] = 5
    on_device = device.allocate(src.nbytes)
    transfer = engine.copy_async(on_device, src)
    record = transfer.wait()
    assert transfer.ready()
    assert record == transfer.wait()  # again: the same
    assert record["bytes"] == src.nbytes
    back = np.zeros_like(src)
    engine.copy_async(back, on_device).wait()
    assert (back == 5).all()


def test_a_dropped_transfer_holds_its_buffers_until_it_is_done(engine, device):
    on_device = device.allocate(4 << 20)
    engine.copy_async(on_device, np.full(4 << 20, 3, np.uint8))  # dropped at once
    back = np.zeros(4 << 20, np.uint8)
    engine.copy(back, on_device)
    assert (back == 3).all()


def test_a_batch_moves_every_item_on_exit(engine, device):
    sources = [np.full(1000, i, np.int32) for i in range(16)]
    targets = [device.allocate(s.nbytes) for s in sources]
    with engine.batch() as batch:
        for t, s in zip(targets, sources):
            batch.add(t, s)
        assert len(batch) == 16
    assert len(batch) == 0
    for t, s in zip(targets, sources):
        back = np.zeros_like(s)
        engine.copy(back, t)
        assert np.array_equal(back, s)
    assert engine.counters()["batches"] == 1


def test_a_batch_left_by_an_exception_moves_nothing(engine, device):
    target = device.allocate(4000)
    engine.copy(target, np.zeros(1000, np.int32))
    with pytest.raises(KeyError):
        with engine.batch() as batch:
            batch.add(target, np.ones(1000, np.int32))
            raise KeyError("stop")
    back = np.ones(1000, np.int32)
    engine.copy(back, target)
    assert (back == 0).all()


def test_copies_release_the_gil(engine, device):
    # With a switch interval of 10 s a thread that kept the GIL through its copies would starve
    # this one until it ended; released, this one runs while the copies do.
    src = np.ones(32 << 20, np.uint8)
    on_device = device.allocate(src.nbytes)
    started = threading.Event()

    def copies():
        started.set()
        for _ in range(8):
            engine.copy(on_device, src)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    try:
        worker = threading.Thread(target=copies)
        worker.start()
        started.wait()
        spins = 0
        while worker.is_alive():
            spins += 1
            time.sleep(0)  # lets the worker take the GIL back between its copies
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert spins > 100, spins


def test_cpu_tensors_move_through_dlpack(engine, device):
    torch = pytest.importorskip("torch")
    src = torch.arange(4096, dtype=torch.float32)
    on_device = device.allocate(src.numel() * 4)
    engine.copy(on_device, src)
    back = torch.zeros(4096)
    engine.copy(back, on_device)
    assert torch.equal(back, src)
    with pytest.raises(acco.InvalidArgumentError, match="not contiguous"):
        engine.copy(on_device, torch.zeros(2, 8192)[:, ::2].contiguous().t())
