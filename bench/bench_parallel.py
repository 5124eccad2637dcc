"""Benchmark of simulations in parallel (engine/load/parallel.py): 1,000 full simulations of
2,000 requests each, on one worker process and on N, and the speed-up.

Target (docs/model.md, "Simulations in parallel"): on this two-core machine, two workers run
the batch at least 1.6× as fast as one. Beside it, the fixed pure-Python reference loop of one
million multiply-adds (bench/bench_load.py's), so machines and loads compare, and the machine's
load average before and after (other processes on the cores lower the speed-up). Each
simulation is Llama-3.1-8B on one H100, 500/100 tokens, Poisson at 10 requests/s, its own
seed; every worker count must give the same answers (checked). Not part of the test run:

    .venv/bin/python bench/bench_parallel.py [--simulations 1000] [--workers 2]

Times are wall-clock seconds (`time.perf_counter`: the work runs in the worker processes), the
pool's start-up (a fresh interpreter per worker importing the engine) included; one worker
runs in this process (no pool), the strictest reference.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine
from engine.load.parallel import run_all

RUN = {"input_tokens": 500, "output_tokens": 100, "rate": 10.0, "requests": 2000}


def one(seed: int) -> tuple[float, float, int]:
    """One full simulation: its p90 TTFT, p99 TPOT and measured requests (small to send back)."""
    r = engine.serve_load("Llama-3.1-8B", "H100", seed=seed, **RUN)
    return r["ttft_ms_p90"], r["tpot_ms_p99"], r["requests_measured"]


def reference() -> float:
    """CPU seconds of one million Python multiply-adds."""
    start = time.process_time()
    total = 0.0
    for i in range(1_000_000):
        total += i * 0.5
    return time.process_time() - start


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "unknown"


def batch(n: int, workers: int) -> tuple[float, list]:
    """Wall seconds of `n` simulations on `workers` processes (1: in this process, no pool:
    the strictest reference, paying no start-up), and their answers."""
    start = time.perf_counter()
    out = run_all(one, range(n), engine.Execution(workers=workers))
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    if not 2 <= args.simulations <= 10_000 or not 2 <= args.workers <= 64:
        parser.error("--simulations: 2 to 10,000; --workers: 2 to 64")
    ref = min(reference() for _ in range(3))
    print(f"reference: 1 M Python multiply-adds in {ref * 1e3:.0f} ms CPU (load {_load()})")
    n = args.simulations
    t1, a1 = batch(n, 1)
    print(
        f"{n:,} simulations of {RUN['requests']:,} requests, 1 worker: {t1:.1f} s wall "
        f"({t1 / n * 1e3:.0f} ms each; {t1 / n / ref:.1f}x the reference; load {_load()})"
    )
    tn, an = batch(n, args.workers)
    print(f"{n:,} simulations, {args.workers} workers: {tn:.1f} s wall (load {_load()})")
    assert an == a1, "the answers differ between worker counts"
    print(
        f"speed-up: {t1 / tn:.2f}x with {args.workers} workers (target 1.6x on two cores); "
        "answers identical"
    )


if __name__ == "__main__":
    main()
