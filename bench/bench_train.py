"""Benchmark of the training model: `train_search` over about 10,000 configurations, and one
`train`. Target (docs/model.md, "Training step"): 10,000 configurations in under a second.
Not part of the test run:

    .venv/bin/python bench/bench_train.py [--repeat 5] [--json]

Times are CPU seconds of this process (`time.process_time`), beside a fixed pure-Python
reference loop of one million multiply-adds (as bench/bench_serve.py prints it), so a figure
can be read as a ratio to that loop and compared across machines and loads.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine

# 4 GPU counts × 4 tp × 5 pp × 2 cp × 2 vp × 3 micro-batches × 4 ZeRO stages × 3 modes
GRID = {
    "gpus": [128, 256, 512, 1024],
    "tp": [1, 2, 4, 8],
    "pp": [1, 2, 4, 8, 16],
    "cp": [1, 2],
    "vp": [1, 2],
    "micro_batch_size": [1, 2, 4],
}
SEARCH = {
    "model": "Llama-3.1-70B",
    "hardware": "H100",
    "global_batch_size": 1024,
    "seq_len": 8192,
    "include_rejected": True,
} | GRID


def reference() -> float:
    """CPU seconds of one million Python multiply-adds (the machine's yardstick)."""
    start = time.process_time()
    total = 0.0
    for i in range(1_000_000):
        total += i * 0.5
    return time.process_time() - start


def bench_search(repeat: int) -> dict:
    engine.train_search(**SEARCH)  # warm: pandas, catalogue, profile
    times, rows = [], 0
    for _ in range(repeat):
        start = time.process_time()
        rows = len(engine.train_search(**SEARCH))
        times.append(time.process_time() - start)
    return {
        "configurations": rows,
        "search_cpu_s": times,
        "search_median_s": statistics.median(times),
    }


def bench_scalar(calls: int) -> dict:
    rng = random.Random(1)
    cases = [
        dict(
            model="Llama-3.1-8B",
            hardware=rng.choice(["A100", "H100", "B200"]),
            gpus=64,
            tp=rng.choice([1, 2, 4, 8]),
            global_batch_size=512,
            seq_len=8192,
            zero=rng.choice([0, 1, 3]),
            recompute=rng.choice(["none", "full"]),
        )
        for _ in range(calls)
    ]
    engine.train(**cases[0])
    times = []
    for case in cases:
        start = time.process_time()
        engine.train(**case)
        times.append(time.process_time() - start)
    return {"train_median_us": statistics.median(times) * 1e6, "train_calls": calls}


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed searches (default 5)")
    parser.add_argument("--calls", type=int, default=200, help="timed train calls")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.repeat < 1 or args.calls < 1:
        parser.error("--repeat and --calls: 1 or more")
    ref = reference()
    out = {"reference_s": ref, "load": _load()} | bench_search(args.repeat)
    out |= bench_scalar(args.calls)
    out["search_over_reference"] = out["search_median_s"] / ref
    out["configurations_per_s"] = out["configurations"] / out["search_median_s"]
    if args.json:
        print(json.dumps(out, indent=2))
        return
    n, med = out["configurations"], out["search_median_s"]
    print(f"reference: 1 M Python multiply-adds in {ref * 1e3:.0f} ms CPU (load {out['load']})")
    print(
        f"train_search: {n:,} configurations in {med * 1e3:.0f} ms CPU (median of "
        f"{args.repeat}; {n / med:,.0f} configurations/s; {med / ref:.2f} × the reference)"
    )
    print(f"train: median {out['train_median_us']:.0f} µs CPU over {args.calls} calls")


if __name__ == "__main__":
    main()
