"""acco.torch on Debian's PyTorch (CPU, gloo): the Prefetcher on DataLoaders, and DDP with acco's
hook and the Horovod-style optimizer against DDP's own allreduce, 2 ranks under mpirun."""

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import acco  # noqa: E402
import acco.torch as acco_torch  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent


def _loader(batches=7, rows=5):
    x = torch.arange(batches * rows * 3, dtype=torch.float32).reshape(batches * rows, 3)
    y = torch.arange(batches * rows, dtype=torch.int64)
    return torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(x, y), batch_size=rows, shuffle=False
    )


def _threads():
    return {t for t in threading.enumerate() if t.name == "acco-prefetch"}


def test_batches_arrive_complete_and_in_order():
    loader = _loader()
    prefetcher = acco_torch.Prefetcher(loader, depth=3)
    assert len(prefetcher) == len(loader) == 7
    seen = 0
    for (x, y), (ex, ey) in zip(prefetcher, loader):
        assert torch.equal(x, ex) and torch.equal(y, ey)
        assert x.dtype == torch.float32 and y.dtype == torch.int64
        seen += 1
    assert seen == 7
    assert not _threads()


def test_nested_batches_keep_their_shape_and_what_is_not_a_tensor():
    batches = [{"x": torch.full((4,), float(i)), "meta": ("id", i), "list": [torch.ones(2) * i]}
               for i in range(3)]
    out = list(acco_torch.Prefetcher(batches))
    assert [b["meta"] for b in out] == [("id", 0), ("id", 1), ("id", 2)]
    for i, b in enumerate(out):
        assert torch.equal(b["x"], torch.full((4,), float(i)))
        assert isinstance(b["list"], list) and torch.equal(b["list"][0], torch.ones(2) * i)


def test_an_exception_in_the_loader_surfaces_at_its_batch():
    def failing():
        yield torch.zeros(2)
        yield torch.ones(2)
        raise KeyError("sample 17 is missing")

    got = []
    with pytest.raises(KeyError, match="sample 17"):
        for batch in acco_torch.Prefetcher(failing()):
            got.append(batch)
    assert len(got) == 2
    assert not _threads()


def test_breaking_early_stops_the_thread():
    def endless():
        i = 0
        while True:
            yield torch.full((1024,), float(i))
            i += 1

    for i, batch in enumerate(acco_torch.Prefetcher(endless(), depth=2)):
        assert batch[0].item() == i
        if i == 3:
            break
    assert not _threads()


def test_bad_depth_and_device_are_invalid_arguments():
    with pytest.raises(acco.InvalidArgumentError, match="depth"):
        acco_torch.Prefetcher([], depth=0)
    with pytest.raises(acco.InvalidArgumentError, match="meta"):
        acco_torch.Prefetcher([], device="meta")


def test_pinned_empty_is_a_tensor_over_acco_memory():
    t = acco_torch.pinned_empty((3, 4), torch.float64)
    assert t.shape == (3, 4) and t.dtype == torch.float64
    t.fill_(2.5)
    assert float(t.sum()) == 30.0


def test_without_a_launcher_this_process_is_rank_0_of_1():
    for name in [k for k in os.environ if k.startswith(("OMPI_COMM_WORLD", "PMIX_", "SLURM_"))]:
        pytest.skip(f"started by a launcher ({name})")
    assert (acco.rank(), acco.size(), acco.local_rank()) == (0, 1, 0)
    comm = acco.communicator()
    assert comm is acco.communicator()
    assert (comm.rank, comm.size, comm.backend) == (0, 1, "self")
    a = np.arange(4, dtype=np.float32)
    comm.allreduce(a, average=True)
    assert a.tolist() == [0, 1, 2, 3]
    with pytest.raises(acco.InvalidArgumentError, match="float32"):
        comm.allreduce(np.zeros(3, dtype=np.float64))
    with pytest.raises(acco.InvalidArgumentError, match="backward_passes_per_step"):
        acco_torch.DistributedOptimizer(torch.optim.SGD([torch.zeros(1, requires_grad=True)],
                                                        lr=1), backward_passes_per_step=0)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _mpirun(np_ranks, env_extra, timeout=90):
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun is not installed (openmpi-bin)")
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), **env_extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    names = ["MASTER_ADDR", "MASTER_PORT", "PYTHONPATH", "XDG_STATE_HOME", *env_extra]
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
           "--mca", "btl", "self,vader", "--mca", "oob_tcp_if_include", "lo"]
    for name in names:
        cmd += ["-x", name]
    cmd += ["-np", str(np_ranks), sys.executable, str(HERE / "ddp_ranks.py")]
    try:
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        pytest.fail(f"mpirun ran past {timeout} s; its output:\n{out[-3000:]}")


def test_ddp_with_the_acco_hook_and_the_horovod_optimizer_match_gloo_on_two_ranks():
    run = _mpirun(2, {"ACCO_DDP_STEPS": "8"})
    assert run.returncode == 0, run.stderr[-3000:]
    doc = json.loads(run.stdout.strip().splitlines()[-1])
    assert doc["size"] == 2
    assert len(doc["gloo"]) == 8
    for way in ("hook", "horovod"):
        diffs = [abs(a - b) for a, b in zip(doc["gloo"], doc[way])]
        assert max(diffs) < 1e-5, (way, doc)
    # The loss moved: the ranks really trained.
    assert doc["gloo"][0] != doc["gloo"][-1]
    # Every bucket went through acco's fusion; the optimizer fused its 6 gradients per step.
    assert doc["hook_stats"]["queued"] == doc["buckets"] >= 8
    assert doc["optimizer_stats"]["queued"] == 6 * 8
    assert doc["optimizer_stats"]["collectives"] == 8


def test_a_rank_that_dies_ends_the_job_with_its_exit_code_instead_of_a_hang():
    run = _mpirun(2, {"ACCO_DDP_DIE_RANK": "1"}, timeout=120)
    assert run.returncode != 0
    assert "Exit code:    3" in run.stdout + run.stderr, (run.stdout + run.stderr)[-3000:]


def test_place_runs_each_stage_where_the_runtime_says_and_explains_why():
    devices = acco.devices(backend="host", host_devices=2, link="unlimited")
    weight = torch.randn(64, 64)
    placed = acco_torch.place(
        {"embed": lambda device: float((weight @ weight).sum()),
         "head": {"fn": lambda device: device.index, "flops": 1e6}},
        devices=devices)
    assert [p["stage"] for p in placed] == ["embed", "head"]
    for p in placed:
        assert p["device"] in (0, 1)
        assert p["device_name"] == devices[p["device"]].name
        assert "dmda" in p["why"]
    assert placed[1]["result"] == placed[1]["device"]


def test_place_raises_the_first_stage_error_after_the_others_ran():
    devices = acco.devices(backend="host", host_devices=2, link="unlimited")
    ran = []
    with pytest.raises(ZeroDivisionError):
        acco_torch.place({"bad": lambda d: 1 / 0, "ok": lambda d: ran.append(d.index)},
                         devices=devices)
    assert len(ran) == 1  # the other stage still ran


def test_the_fusion_threshold_comes_from_the_env_the_tune_profile_or_horovod(
        tmp_path, monkeypatch, acco_binary):
    monkeypatch.delenv("HOROVOD_FUSION_THRESHOLD", raising=False)
    profiles = tmp_path / "profiles"
    monkeypatch.setenv("ACCO_TUNE_DIR", str(profiles))
    assert acco_torch.fusion_threshold() == (64 << 20, "Horovod's default")

    # A profile for this machine (acco tune), with the fusion entry --save-fusion writes.
    made = subprocess.run([str(acco_binary), "tune", "--backend", "host", "--budget", "1s",
                           "--bytes", "1MiB", "--tune-dir", str(profiles)],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    (path,) = profiles.glob("*.json")
    profile = json.loads(path.read_text())
    profile["fusion"] = [{"link_class": "intra-node", "ranks": 2, "alpha_seconds": 2e-5,
                          "beta_bytes_per_second": 1e10, "threshold_bytes": 4 << 20,
                          "measured": "2026-12-05T00:00:00Z"}]
    path.write_text(json.dumps(profile))
    threshold, source = acco_torch.fusion_threshold()
    assert threshold == 4 << 20
    assert str(path) in source and "intra-node" in source
    state = acco_torch.AllreduceState()
    assert (state.threshold_bytes, state.threshold_source) == (threshold, source)
    state.close()

    monkeypatch.setenv("HOROVOD_FUSION_THRESHOLD", "1048576")
    assert acco_torch.fusion_threshold() == (1 << 20, "HOROVOD_FUSION_THRESHOLD")
    monkeypatch.setenv("HOROVOD_FUSION_THRESHOLD", "lots")
    with pytest.raises(acco.InvalidArgumentError, match="HOROVOD_FUSION_THRESHOLD"):
        acco_torch.fusion_threshold()
