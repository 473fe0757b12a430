"""Run by test_torch.py under `mpirun -np 2`: a small MLP on generated data trained the same
number of steps three ways from one seed: DDP with its built-in gloo allreduce, DDP with
acco.torch.allreduce_hook, and a plain model under acco.torch.DistributedOptimizer after
broadcast_parameters. Rank 0 prints one JSON line with every step's losses of each."""

import gc
import json
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import acco
import acco.torch as acco_torch

STEPS = int(os.environ.get("ACCO_DDP_STEPS", "8"))


def mlp() -> torch.nn.Module:
    torch.manual_seed(1)
    return torch.nn.Sequential(
        torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
        torch.nn.Linear(64, 1)
    )


def data(rank: int):
    g = torch.Generator().manual_seed(100 + rank)
    x = torch.randn(STEPS, 16, 32, generator=g)
    y = x.sum(dim=2, keepdim=True).sin()
    return x, y


def train(model, optimizer, x, y, die_at=None):
    losses = []
    for step in range(STEPS):
        if die_at is not None and step == die_at:
            os._exit(3)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x[step]), y[step])
        loss.backward()
        optimizer.step()
        # The mean loss over the ranks, so every way reports the same number.
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(mean.item() / dist.get_world_size())
    return losses


def main() -> int:
    rank, size = acco.rank(), acco.size()
    dist.init_process_group("gloo", rank=rank, world_size=size)
    x, y = data(rank)
    die = os.environ.get("ACCO_DDP_DIE_RANK")
    die_at = 2 if die is not None and int(die) == rank else None

    gloo = DDP(mlp())
    gloo_losses = train(gloo, torch.optim.SGD(gloo.parameters(), lr=0.05), x, y)

    hooked = DDP(mlp(), bucket_cap_mb=0.01)  # several buckets a step: the fusion has work
    state = acco_torch.AllreduceState()
    hooked.register_comm_hook(state, acco_torch.allreduce_hook)
    hook_losses = train(hooked, torch.optim.SGD(hooked.parameters(), lr=0.05), x, y, die_at)
    stats = state.stats()
    state.close()

    plain = mlp()
    with torch.no_grad():  # another start on rank 1: the broadcast must fix it
        if rank != 0:
            for p in plain.parameters():
                p.add_(1.0)
    acco_torch.broadcast_parameters(plain.state_dict(), root_rank=0)
    opt = acco_torch.DistributedOptimizer(
        torch.optim.SGD(plain.parameters(), lr=0.05), named_parameters=plain.named_parameters()
    )
    horovod_losses = train(plain, opt, x, y)

    if rank == 0:
        print(json.dumps({"size": size, "gloo": gloo_losses, "hook": hook_losses,
                          "horovod": horovod_losses, "hook_stats": stats,
                          "buckets": state.buckets, "optimizer_stats": opt.stats()}))
    dist.destroy_process_group()
    # MPI ends when the last reference to the communicator goes: here, not at some point of the
    # interpreter's teardown.
    del opt, state
    acco.communicator.cache_clear()
    gc.collect()
    return 0


if __name__ == "__main__":
    sys.exit(main())
