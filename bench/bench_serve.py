"""Benchmark of the serving model: sweep throughput, scalar latency, sweep memory.

Targets (docs/model.md, "Serving model"): `serve_sweep` at least 1 M scenarios/s, one `serve`
under 100 µs, a 1 M-row sweep within 1 GiB. Not part of the test run:

    .venv/bin/python bench/bench_serve.py [--rows 1000000] [--fresh 5]

Times are CPU seconds of this process (`time.process_time`), so other processes on a shared
machine do not inflate them; wall-clock seconds are printed beside them. A process's first
sweep also pays for the first touch of the frame's fresh memory, so `--fresh N` repeats that
first sweep in N new processes and prints every figure with their minimum, median and maximum.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine
from engine.serving.inputs import forget_scenarios
from engine.serving.sweep import MAX_SERVE_SWEEP_ROWS

MODELS = ["Llama-3.1-8B", "Llama-3.1-70B", "Mixtral-8x7B", "DeepSeek-V3", "Gemma-2-9B"]
HARDWARE = ["A100", "H100", "H200", "L40S"]


def grid(rows: int) -> dict:
    """A sweep of about `rows` scenarios over every axis (batch sizes fill the remainder)."""
    fixed = len(MODELS) * len(HARDWARE) * 2 * 2 * 2 * 10 * 10  # precisions, tp, pp, I, O
    batches = max(1, round(rows / fixed))
    return {
        "models": MODELS,
        "hardware": HARDWARE,
        "precisions": ["bf16", "fp8"],
        "tp": [1, 8],
        "pp": [1, 2],
        "batch_sizes": list(range(1, batches + 1)),
        "input_tokens": [128 * 2**i for i in range(10)],
        "output_tokens": [1 + 100 * i for i in range(10)],
    }


def timed_sweep(kw: dict) -> tuple[int, float, float]:
    """Rows, CPU seconds and wall seconds of one `serve_sweep`."""
    wall, cpu = time.perf_counter(), time.process_time()
    n = len(engine.serve_sweep(**kw))
    return n, time.process_time() - cpu, time.perf_counter() - wall


def line(label: str, n: int, cpu: float, wall: float) -> str:
    return (
        f"serve_sweep ({label}): {n:,} rows in {cpu:.2f} s CPU ({n / cpu / 1e6:.2f} M rows/s; "
        f"wall {wall:.2f} s, {n / wall / 1e6:.2f} M rows/s)"
    )


def bench_sweep(rows: int) -> None:
    kw = grid(rows)
    engine.serve_sweep(**(kw | {"batch_sizes": [1]}))  # warm: pandas, catalogue, caches
    for run in ("first", "second", "third"):  # the first pays the fresh pages' faults
        print(line(f"{run} run", *timed_sweep(kw)))
    df = engine.serve_sweep(**kw)
    frame = df.memory_usage(deep=True).sum()
    shared = sum(df[k].memory_usage(index=False) for k in df if _shared(df[k]))
    del df
    tracemalloc.start()
    df = engine.serve_sweep(**kw)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    print(f"process peak resident set: {rss / 2**30:.2f} GiB (imports and the sweeps above)")
    print(
        f"serve_sweep memory: peak {peak / 2**30:.2f} GiB traced while building "
        f"{len(df):,} rows (the frame itself {(frame - shared) / 2**30:.2f} GiB; pandas "
        f"counts {shared / 2**30:.2f} GiB more for the constant columns, which share one "
        "value)"
    )


def _shared(column) -> bool:
    """A constant column with no memory per row (a zero-stride view)."""
    values = column.to_numpy()
    return values.ndim == 1 and len(values) > 1 and values.strides == (0,)


def first_sweep(rows: int) -> None:
    """The child of `bench_fresh`: warm up, then one timed sweep, as JSON on stdout."""
    kw = grid(rows)
    engine.serve_sweep(**(kw | {"batch_sizes": [1]}))
    n, cpu, wall = timed_sweep(kw)
    print(json.dumps({"rows": n, "cpu_s": cpu, "wall_s": wall}))


def bench_fresh(rows: int, processes: int) -> None:
    """The first sweep of `processes` new processes, one after another."""
    runs = []
    for i in range(processes):
        cmd = [sys.executable, __file__, "--rows", str(rows), "--first-only"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        runs.append(json.loads(out.splitlines()[-1]))
        print(line(f"first run, fresh process {i + 1}", *runs[-1].values()))
    for key in ("cpu_s", "wall_s"):
        xs = [r[key] for r in runs]
        print(
            f"first runs over {processes} fresh processes, {key[:-2]} seconds: min {min(xs):.2f},"
            f" median {statistics.median(xs):.2f}, max {max(xs):.2f} (slowest: "
            f"{runs[0]['rows'] / max(xs) / 1e6:.2f} M rows/s)"
        )


def bench_scalar(calls: int) -> None:
    rng = random.Random(1)
    cases = [
        {
            "model": rng.choice(MODELS),
            "hardware": rng.choice(HARDWARE),
            "tp": rng.choice([1, 8]),
            "batch_size": rng.randint(1, 256),
            "input_tokens": rng.randint(1, 8000),
            "output_tokens": rng.randint(1, 2000),
        }
        for _ in range(calls)
    ]
    for case in cases[:50]:
        engine.serve(**case)  # warm
    cat = engine.default_catalog()  # a page passes spec objects: the same cache as ids
    specs = [
        case | {"model": cat.find_model(case["model"]), "hardware": cat.hardware[case["hardware"]]}
        for case in cases
    ]
    for label, subset, forget in (
        ("varied scenarios", cases, False),
        ("varied scenarios, spec objects as a page passes them", specs, False),
        ("one scenario repeated", cases[:1] * calls, False),
        ("varied scenarios, every deployment new: cache emptied before each call", cases, True),
    ):
        times = []
        for case in subset:
            if forget:
                forget_scenarios()
            start = time.process_time()
            engine.serve(**case)
            times.append(time.process_time() - start)
        print(
            f"serve ({label}): median {statistics.median(times) * 1e6:.0f} µs CPU, "
            f"mean {statistics.fmean(times) * 1e6:.0f} µs over {len(times):,} calls"
        )


def bench_refusal() -> None:
    too_many = list(range(1, 1501))
    start = time.process_time()
    try:
        engine.serve_sweep(
            "Llama-3.1-8B", "A100", batch_sizes=too_many, input_tokens=too_many, output_tokens=[1]
        )
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
    parser.add_argument("--fresh", type=int, default=5, help="new processes timing a first sweep")
    parser.add_argument("--first-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 1 <= args.rows <= MAX_SERVE_SWEEP_ROWS or args.fresh < 0 or args.calls < 1:
        parser.error(
            f"--rows: 1 to {MAX_SERVE_SWEEP_ROWS:,}; --fresh: 0 or more; --calls: 1 or more"
        )
    if args.first_only:
        first_sweep(args.rows)
        return
    reference()
    print(f"limit: {MAX_SERVE_SWEEP_ROWS:,} rows per sweep")
    bench_sweep(args.rows)
    bench_fresh(args.rows, args.fresh)
    bench_scalar(args.calls)
    bench_refusal()


if __name__ == "__main__":
    main()
