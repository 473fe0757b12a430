#!/usr/bin/python3
"""The cost of calling acco.Engine.copy from Python against the same copies made from C++.

For each case, the same engine copies the same small buffers `count` times, each waited for:
once from a C++ loop (Engine._time_copies, no Python between copies) and once from a Python
loop calling engine.copy; the difference per call is what the binding adds (argument
conversion, buffer exports, the GIL released and taken back, the record returned). Issue 37
asks for below 5 us. On the host backend (emulated devices, the default link pcie4x16 with its
2 us latency); not a test: timings on a shared machine are noise.

  PYTHONPATH=build/default/python /usr/bin/python3 bench/python_overhead.py [--count N]
      [--backend auto|host|cuda] [--json FILE]
"""

import argparse
import json
import platform
import statistics
import sys
import time

import numpy as np

import acco

LIMIT_SECONDS = 5e-6


def python_seconds(engine, dst, src, count):
    copy = engine.copy
    start = time.perf_counter()
    for _ in range(count):
        copy(dst, src)
    return time.perf_counter() - start


def measure(engine, dst, src, count, rounds):
    engine._time_copies(dst, src, count // 10)  # warm: registrations, caches, threads
    python_seconds(engine, dst, src, count // 10)
    cpp, py = [], []
    for _ in range(rounds):  # interleaved, so drift hits both alike
        cpp.append(engine._time_copies(dst, src, count) / count)
        py.append(python_seconds(engine, dst, src, count) / count)
    return statistics.median(cpp), statistics.median(py)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20000, help="copies per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; the median is kept")
    parser.add_argument("--backend", default="host", help="auto, host or cuda")
    parser.add_argument("--json", help="write the results to FILE")
    args = parser.parse_args()

    device = acco.devices(backend=args.backend)[0]
    engine = acco.Engine(device)
    results = []
    for nbytes in (8, 64, 4096):
        host_a = np.ones(nbytes, np.uint8)
        host_b = np.zeros(nbytes, np.uint8)
        pinned = engine.pinned_empty(nbytes, np.uint8)
        on_device = device.allocate(nbytes)
        cases = [
            ("host-to-host", host_b, host_a),
            ("pageable-to-device", on_device, host_a),
            ("pinned-to-device", on_device, pinned),
            ("device-to-pageable", host_b, on_device),
        ]
        for name, dst, src in cases:
            cpp, py = measure(engine, dst, src, args.count, args.rounds)
            strategy = engine.copy(dst, src)["strategy"]
            results.append({
                "case": name, "bytes": nbytes, "strategy": strategy,
                "cpp_seconds_per_copy": cpp, "python_seconds_per_copy": py,
                "overhead_seconds_per_copy": py - cpp,
                "verdict": "ok" if py - cpp < LIMIT_SECONDS else "slow",
            })

    print(f"Engine.copy from Python against C++ on {device.name} ({args.count} copies x "
          f"{args.rounds} rounds, medians; limit {LIMIT_SECONDS * 1e6:.0f} us)")
    print(f"{'case':<20} {'bytes':>5}  {'strategy':<10} {'C++ us':>7} {'Python us':>9} "
          f"{'overhead us':>11}  verdict")
    for r in results:
        print(f"{r['case']:<20} {r['bytes']:>5}  {r['strategy']:<10} "
              f"{r['cpp_seconds_per_copy'] * 1e6:>7.2f} {r['python_seconds_per_copy'] * 1e6:>9.2f} "
              f"{r['overhead_seconds_per_copy'] * 1e6:>11.2f}  {r['verdict']}")
    document = {
        "schema": "acco.python-overhead/1",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": platform.node(),
        "python": platform.python_version(),
        "device": device.name,
        "count": args.count,
        "rounds": args.rounds,
        "limit_seconds": LIMIT_SECONDS,
        "results": results,
    }
    if args.json:
        with open(args.json, "w") as out:
            json.dump(document, out, indent=2)
            out.write("\n")
    return 0 if all(r["verdict"] == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
