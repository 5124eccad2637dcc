"""Benchmark of the serving model: sweep throughput, scalar latency, sweep memory.

Targets (docs/model.md, "Serving model"): `serve_sweep` at least 1 M scenarios/s, one `serve`
under 100 µs, a 1 M-row sweep within 1 GiB. Not part of the test run:

    .venv/bin/python bench/bench_serve.py [--rows 1000000]

Times are CPU seconds of this process (`time.process_time`), so other processes on a shared
machine do not inflate them; wall-clock seconds are printed beside them.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine
from engine.serve_sweep import MAX_SERVE_SWEEP_ROWS

MODELS = ["Llama-3.1-8B", "Llama-3.1-70B", "Mixtral-8x7B", "DeepSeek-V3", "Gemma-2-9B"]
HARDWARE = ["A100", "H100", "H200", "L40S"]


def grid(rows: int) -> dict:
    """A sweep of about `rows` scenarios over every axis (batch sizes fill the remainder)."""
    fixed = len(MODELS) * len(HARDWARE) * 2 * 2 * 2 * 10 * 10  # precisions, tp, pp, I, O
    batches = max(1, round(rows / fixed))
    return {
        "models": MODELS, "hardware": HARDWARE, "precisions": ["bf16", "fp8"], "tp": [1, 8],
        "pp": [1, 2], "batch_sizes": list(range(1, batches + 1)),
        "input_tokens": [128 * 2**i for i in range(10)],
        "output_tokens": [1 + 100 * i for i in range(10)],
    }  # fmt: skip


def bench_sweep(rows: int) -> None:
    kw = grid(rows)
    engine.serve_sweep(**(kw | {"batch_sizes": [1]}))  # warm: pandas, catalogue, caches
    for run in ("first", "second", "third"):  # the first pays the fresh pages' faults
        wall, cpu = time.perf_counter(), time.process_time()
        df = engine.serve_sweep(**kw)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        n = len(df)
        print(f"serve_sweep ({run} run): {n:,} rows in {cpu:.2f} s CPU ({n / cpu / 1e6:.2f} M "
              f"rows/s; wall {wall:.2f} s, {n / wall / 1e6:.2f} M rows/s)")  # fmt: skip
        del df
    df = engine.serve_sweep(**kw)
    frame = df.memory_usage(deep=True).sum()
    del df
    tracemalloc.start()
    df = engine.serve_sweep(**kw)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    print(f"process peak resident set: {rss / 2**30:.2f} GiB (imports and the sweeps above)")
    print(f"serve_sweep memory: peak {peak / 2**30:.2f} GiB traced while building "
          f"{len(df):,} rows (the frame itself {frame / 2**30:.2f} GiB)")  # fmt: skip


def bench_scalar(calls: int) -> None:
    rng = random.Random(1)
    cases = [
        {"model": rng.choice(MODELS), "hardware": rng.choice(HARDWARE), "tp": rng.choice([1, 8]),
         "batch_size": rng.randint(1, 256), "input_tokens": rng.randint(1, 8000),
         "output_tokens": rng.randint(1, 2000)}
        for _ in range(calls)
    ]  # fmt: skip
    for case in cases[:50]:
        engine.serve(**case)  # warm
    for label, subset in (
        ("varied scenarios", cases),
        ("one scenario repeated", cases[:1] * calls),
    ):
        times = []
        for case in subset:
            start = time.process_time()
            engine.serve(**case)
            times.append(time.process_time() - start)
        print(f"serve ({label}): median {statistics.median(times) * 1e6:.0f} µs CPU, "
              f"mean {statistics.fmean(times) * 1e6:.0f} µs over {len(times):,} calls")  # fmt: skip


def bench_refusal() -> None:
    too_many = list(range(1, 1501))
    start = time.process_time()
    try:
        engine.serve_sweep("Llama-3.1-8B", "A100", batch_sizes=too_many, input_tokens=too_many,
                           output_tokens=[1])  # fmt: skip
    except ValueError as exc:
        took = (time.process_time() - start) * 1e3
        print(f"refused {len(too_many) ** 2:,} rows in {took:.1f} ms: {exc}")


def reference() -> None:
    """A fixed pure-Python workload, to compare machines (and loads) with each other."""
    start = time.process_time()
    total = 0.0
    for i in range(1_000_000):
        total += i * 0.5
    took = time.process_time() - start
    print(f"reference: 1 M Python multiply-adds in {took * 1e3:.0f} ms CPU (load {_load()})")


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    reference()
    print(f"limit: {MAX_SERVE_SWEEP_ROWS:,} rows per sweep")
    bench_sweep(args.rows)
    bench_scalar(args.calls)
    bench_refusal()


if __name__ == "__main__":
    main()
