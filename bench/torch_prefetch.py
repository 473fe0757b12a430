#!/usr/bin/python3
"""acco.torch.Prefetcher against DataLoader(pin_memory=True) + .to(device, non_blocking=True).

The same loader of generated batches (a map-style dataset of float32 rows, batch_size rows a
batch) is iterated by a training loop whose step is a fixed amount of compute on the batch;
once the baseline way (the loader pins, the loop copies with .to), once through the
Prefetcher (the loader does not pin; acco loads and, on a GPU, moves batch k+1 while the step
uses batch k; on the CPU there is nothing to move, so what it adds is loading ahead). The
rounds alternate, so drift hits both alike; the table shows the median time per epoch and the
min-max band, and the ratio baseline / acco (above 1: acco faster). Issue 37 asks for at least
as fast on the host backend, at least 1.2x on a GPU for pageable batches of 4-64 MiB. Not a
test: timings on a shared machine are noise.

  PYTHONPATH=build/default/python /usr/bin/python3 bench/torch_prefetch.py [--device cpu|cuda]
      [--batches N] [--rounds N] [--json FILE]
"""

import argparse
import json
import platform
import statistics
import sys
import time

import torch

import acco
import acco.torch as acco_torch


class Rows(torch.utils.data.Dataset):
    def __init__(self, rows, width):
        self.data = torch.randn(rows, width)

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, i):
        return self.data[i]


def step(batch, weight):
    # The "training step": a matmul whose cost does not depend on the way the batch came.
    return float((batch[:256] @ weight).sum())


def epoch(batches, device, weight):
    start = time.perf_counter()
    for batch in batches:
        if batch.device != device:
            batch = batch.to(device, non_blocking=True)
        step(batch, weight)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--batches", type=int, default=16, help="batches per epoch")
    parser.add_argument("--rounds", type=int, default=5, help="epochs per way; medians kept")
    parser.add_argument("--sizes", default="4,16,64", help="batch sizes in MiB")
    parser.add_argument("--json", help="write the results to FILE")
    args = parser.parse_args()
    device = torch.device(args.device)
    width = 4096  # floats a row: 16 KiB
    weight = torch.randn(width, 256, device=device)
    results = []
    for mib in (int(s) for s in args.sizes.split(",")):
        rows = mib * (1 << 20) // (width * 4)
        data = Rows(rows * args.batches, width)
        pin = device.type == "cuda"
        baseline_loader = torch.utils.data.DataLoader(data, batch_size=rows, pin_memory=pin)
        acco_loader = torch.utils.data.DataLoader(data, batch_size=rows)
        prefetcher = acco_torch.Prefetcher(acco_loader, device=device, depth=2)
        epoch(baseline_loader, device, weight)  # warm both
        epoch(prefetcher, device, weight)
        base, ours = [], []
        for _ in range(args.rounds):
            base.append(epoch(baseline_loader, device, weight))
            ours.append(epoch(prefetcher, device, weight))
        ratio = statistics.median(base) / statistics.median(ours)
        results.append({
            "batch_bytes": rows * width * 4, "batches": args.batches,
            "baseline_seconds": statistics.median(base), "baseline_min": min(base),
            "baseline_max": max(base), "acco_seconds": statistics.median(ours),
            "acco_min": min(ours), "acco_max": max(ours), "ratio": ratio,
            "target": 1.2 if device.type == "cuda" else 1.0,
        })
    print(f"Prefetcher against DataLoader(pin_memory={device.type == 'cuda'}) + .to() on "
          f"{device} ({args.batches} batches an epoch, {args.rounds} epochs each, medians "
          f"[min-max])")
    print(f"{'batch':>8}  {'baseline s':>22}  {'acco s':>22}  {'ratio':>6}  target")
    for r in results:
        print(f"{r['batch_bytes'] / (1 << 20):>5.0f}MiB  "
              f"{r['baseline_seconds']:>7.3f} [{r['baseline_min']:.3f}-{r['baseline_max']:.3f}]  "
              f"{r['acco_seconds']:>7.3f} [{r['acco_min']:.3f}-{r['acco_max']:.3f}]  "
              f"{r['ratio']:>6.2f}  {r['target']:.1f}x")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"schema": "acco.torch-prefetch/1",
                       "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "host": platform.node(), "torch": torch.__version__,
                       "device": str(device), "results": results}, out, indent=2)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
