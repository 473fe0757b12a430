#!/usr/bin/python3
"""DDP step time with acco.torch.allreduce_hook against DDP's built-in gloo allreduce, and the
hook's fused collectives against one collective per bucket, in one 2-rank run.

An MLP (--width wide, --layers deep, about width^2 x layers floats of gradients) on generated
data; DistributedDataParallel with bucket_cap_mb=--bucket-mb, so a step has several buckets.
Three ways, in alternating rounds of --steps steps: "gloo" (DDP's own allreduce), "acco fused"
(the hook, buckets of a step fused up to Horovod's 64 MiB threshold), "acco per bucket" (the
hook with a 4-byte threshold: one MPI allreduce per bucket). The table shows the median step
time with its min-max band over the rounds; rank 0 writes JSON. Started without a launcher it
runs itself under `mpirun -np 2`. Not a test: timings on a shared machine are noise.

  PYTHONPATH=build/default/python /usr/bin/python3 bench/torch_ddp.py [--steps N]
      [--rounds N] [--json FILE]
"""

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import acco
import acco.torch as acco_torch


def launch_myself():
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        print("torch_ddp.py: mpirun is not installed (openmpi-bin)", file=sys.stderr)
        return 69
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
           "--mca", "btl", "self,vader", "-x", "MASTER_ADDR", "-x", "MASTER_PORT",
           "-x", "PYTHONPATH", "-np", "2", sys.executable, os.path.abspath(__file__),
           *sys.argv[1:]]
    return subprocess.run(cmd, env=env).returncode


def model(width, layers):
    torch.manual_seed(1)
    parts = []
    for _ in range(layers):
        parts += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*parts, torch.nn.Linear(width, 1))


def steps_seconds(ddp, opt, x, y, steps):
    times = []
    for step in range(steps):
        start = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x[step % len(x)]), y[step % len(y)]).backward()
        opt.step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="steps per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per way")
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--bucket-mb", type=float, default=0.5)
    parser.add_argument("--json", help="rank 0 writes the results to FILE")
    args = parser.parse_args()
    if "OMPI_COMM_WORLD_RANK" not in os.environ and "SLURM_PROCID" not in os.environ:
        return launch_myself()

    rank, size = acco.rank(), acco.size()
    dist.init_process_group("gloo", rank=rank, world_size=size)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(4, 64, args.width, generator=g)
    y = torch.randn(4, 64, 1, generator=g)
    ways = {}
    states = []
    for name, threshold in (("gloo", None), ("acco fused", 64 << 20), ("acco per bucket", 4)):
        ddp = DDP(model(args.width, args.layers), bucket_cap_mb=args.bucket_mb)
        if threshold is not None:
            state = acco_torch.AllreduceState(threshold_bytes=threshold)
            ddp.register_comm_hook(state, acco_torch.allreduce_hook)
            states.append((name, state))
        ways[name] = (ddp, torch.optim.SGD(ddp.parameters(), lr=1e-3))
        steps_seconds(*ways[name], x, y, 3)  # warm: buckets rebuilt, threads started
    rounds = {name: [] for name in ways}
    for _ in range(args.rounds):
        for name, (ddp, opt) in ways.items():
            rounds[name].append(steps_seconds(ddp, opt, x, y, args.steps))
    stats = {name: state.stats() for name, state in states}
    for _, state in states:
        state.close()
    if rank == 0:
        gradients = sum(p.numel() for p in ways["gloo"][0].parameters()) * 4
        gloo = statistics.median(rounds["gloo"])
        print(f"DDP step time on {size} ranks, {gradients / (1 << 20):.1f} MiB of gradients, "
              f"buckets of {args.bucket_mb} MB ({args.rounds} rounds x {args.steps} steps, "
              f"medians [min-max])")
        print(f"{'way':<16} {'step ms':>24} {'vs gloo':>8} {'collectives':>12} {'buckets':>8}")
        results = []
        for name, times in rounds.items():
            med = statistics.median(times)
            s = stats.get(name, {})
            print(f"{name:<16} {med * 1e3:>9.2f} [{min(times) * 1e3:.2f}-{max(times) * 1e3:.2f}]"
                  f" {gloo / med:>7.2f}x {s.get('collectives', '-'):>12} "
                  f"{s.get('queued', '-'):>8}")
            results.append({"way": name, "step_seconds": med, "min": min(times),
                            "max": max(times), "speedup_vs_gloo": gloo / med,
                            "collectives": s.get("collectives"), "buckets": s.get("queued")})
        if args.json:
            with open(args.json, "w") as out:
                json.dump({"schema": "acco.torch-ddp/1",
                           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                           "host": platform.node(), "torch": torch.__version__, "ranks": size,
                           "gradient_bytes": gradients, "results": results}, out, indent=2)
                out.write("\n")
    dist.destroy_process_group()
    acco.communicator.cache_clear()
    return 0


if __name__ == "__main__":
    sys.exit(main())
