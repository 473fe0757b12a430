import threading

import numpy as np
import pytest

import acco


@pytest.fixture
def runtime():
    return acco.Runtime(acco.devices(backend="host", host_devices=2))


def test_tasks_run_on_the_devices_in_dependency_order(runtime):
    a = np.arange(1 << 16, dtype=np.float32)
    b = np.zeros_like(a)
    ha, hb = runtime.register(a), runtime.register(b)

    def double(ctx):
        src, dst = ctx.arrays
        assert ctx.kind == "host" and ctx.device in (0, 1)
        assert src.shape == a.shape and src.dtype == a.dtype
        dst[:] = src * 2

    def triple(ctx):
        (x,) = ctx.arrays
        x *= 3

    first = runtime.submit(double, reads=[ha], writes=[hb])
    runtime.submit(triple, read_writes=[hb], depends_on=[first])
    runtime.wait_all()
    runtime.write_back(hb)
    assert np.array_equal(b, a * 6)
    assert runtime.explain(first).startswith("dmda")
    assert runtime.failures() == []


def test_the_first_failure_raises_its_own_exception_and_the_others_results_stay(runtime):
    ok = np.zeros(8)
    lost = np.zeros(8)
    h_ok, h_lost = runtime.register(ok), runtime.register(lost)

    def fails(ctx):
        raise KeyError("missing")

    runtime.submit(fails, writes=[h_lost], name="fails")
    runtime.submit(lambda ctx: ctx.arrays[0].fill(1.0), read_writes=[h_ok], name="fills")
    with pytest.raises(KeyError, match="missing"):
        runtime.wait_all()
    (failure,) = runtime.failures()
    assert failure["name"] == "fails"
    assert "KeyError: 'missing'" in failure["error"] and "\n" not in failure["error"]
    runtime.unregister(h_ok)
    assert (ok == 1).all()
    runtime.wait_all()  # reported once


def test_implementations_by_device_kind(runtime):
    x = np.zeros(4, np.int64)
    hx = runtime.register(x)
    runtime.submit({"host": lambda ctx: ctx.arrays[0].fill(7)}, read_writes=[hx], name="fill")
    runtime.wait_all()
    runtime.unregister(hx)
    assert (x == 7).all()


def test_a_task_no_device_can_run_is_unsupported(runtime):
    x = np.zeros(4)
    hx = runtime.register(x)
    with pytest.raises(acco.UnsupportedError):
        runtime.submit(lambda ctx: None, read_writes=[hx], kind="cuda")


def test_bad_arguments_raise_invalid_argument(runtime):
    with pytest.raises(acco.InvalidArgumentError, match="'fastest'"):
        acco.Runtime(acco.devices(backend="host"), policy="fastest")
    with pytest.raises(acco.InvalidArgumentError, match="data 99: not registered"):
        runtime.submit(lambda ctx: None, reads=[99])
    with pytest.raises(acco.InvalidArgumentError, match="C-contiguous"):
        runtime.register(np.zeros((4, 4))[:, ::2])


def test_many_tasks_from_python_threads_while_others_wait(runtime):
    arrays = [np.zeros(1024) for _ in range(8)]
    handles = [runtime.register(a) for a in arrays]

    def bump(ctx):
        ctx.arrays[0][:] += 1

    def submitter(h):
        for _ in range(25):
            runtime.submit(bump, read_writes=[h])

    threads = [threading.Thread(target=submitter, args=(h,)) for h in handles]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    runtime.wait_all()
    for h in handles:
        runtime.unregister(h)
    assert all((a == 25).all() for a in arrays)


def test_dropping_a_runtime_with_tasks_queued_waits_for_them():
    runtime = acco.Runtime(acco.devices(backend="host", host_devices=2))
    x = np.zeros(1 << 10)
    hx = runtime.register(x)
    for _ in range(50):
        runtime.submit(lambda ctx: ctx.arrays[0].__iadd__(1), read_writes=[hx])
    del runtime  # must not deadlock on the GIL the callables need
