"""Benchmark of serving under load: the simulator, the max-rate search and the fast path.

Targets (docs/model.md, "Serving under load"), each beside a fixed pure-Python reference
loop of one million multiply-adds (the same as bench/bench_serve.py's), so machines and loads
compare: 10,000 simulated requests in at most 10× the reference; a max-rate search's bisection
under 2 s and the whole search, its confirmation runs included, under 6 s;
the analytic fast path over 10,000 configurations under 1 s; the disaggregated fast path over
/plan's largest page of pairs (`PAIRS`) under 10 s. Not part of the test run:

    .venv/bin/python bench/bench_load.py [--repeat 3]

Times are CPU seconds of this process (`time.process_time`), the minimum and the median of
`--repeat` runs, after one warm-up run (imports, the catalogue, the folded deployment).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine

SIMULATIONS = [  # (label, serve_load keywords): 10,000 requests each
    (
        "Llama-3.1-8B on H100, 1000/200 tokens, Poisson at 10/s (45 % of capacity)",
        {
            "model": "Llama-3.1-8B",
            "hardware": "H100",
            "input_tokens": 1000,
            "output_tokens": 200,
            "rate": 10.0,
        },
    ),
    (
        "Llama-3.1-8B on H100, 1000/200 tokens, Poisson at 18/s (80 %), lengths ±50 %",
        {
            "model": "Llama-3.1-8B",
            "hardware": "H100",
            "input_tokens": 1000,
            "output_tokens": 200,
            "rate": 18.0,
            "length_spread": 0.5,
        },
    ),
    (
        "Llama-3.1-70B on 4x H100 (trtllm), 1500/300 tokens, 64 clients",
        {
            "model": "Llama-3.1-70B",
            "hardware": "H100",
            "tp": 4,
            "input_tokens": 1500,
            "output_tokens": 300,
            "concurrency": 64,
            "profile": "trtllm",
        },
    ),
    (
        "Llama-3.1-8B on L40S, 2000/1000 tokens, max throughput (KV-bound, preemptions)",
        {
            "model": "Llama-3.1-8B",
            "hardware": "L40S",
            "input_tokens": 2000,
            "output_tokens": 1000,
            "concurrency": "max",
            "length_spread": 0.2,
        },
    ),
]
SEARCH = {
    "model": "Llama-3.1-8B",
    "hardware": "H100",
    "input_tokens": 1000,
    "output_tokens": 200,
    "slo_ttft_ms_p90": 200.0,
    "slo_tpot_ms_p99": 30.0,
}
# CPU-second targets of the search: its bisection, and the whole search with the confirmation
# runs (3 seeds of 6,000 requests, one round when the bisection's answer holds)
SEARCH_TARGET_S = {"bisection only": 2, "confirmed": 6}
GRID = {
    "models": ["Llama-3.1-8B", "Llama-3.1-70B", "Mixtral-8x7B", "DeepSeek-V3", "Gemma-2-9B"],
    "hardware": ["A100", "H100", "H200", "L40S"],
    "tp": [1, 2, 4, 8],
    "rates": [0.25 * i for i in range(1, 33)],
    "input_tokens": [500, 2000],
    "output_tokens": [200, 1000],
}
# /plan's disaggregated section at its largest common size: 5 accelerators × TP × PP × 2 formats
PAIRS = {
    "models": ["Llama-3.1-70B"],
    "hardware": ["A100", "H100", "H200", "B200", "MI300X"],
    "tp": [1, 2, 4, 8],
    "pp": [1, 2],
    "precisions": ["fp16", "fp8"],
    "input_tokens": 1024,
    "output_tokens": 256,
    "slo_ttft_ms_p90": 2000.0,
    "slo_tpot_ms_p99": 50.0,
    "target_rate": 10.0,
}


def reference() -> float:
    """CPU seconds of one million Python multiply-adds."""
    start = time.process_time()
    total = 0.0
    for i in range(1_000_000):
        total += i * 0.5
    return time.process_time() - start


def timed(fn, repeat: int) -> tuple[float, float, object]:
    fn()  # warm-up
    times, out = [], None
    for _ in range(repeat):
        start = time.process_time()
        out = fn()
        times.append(time.process_time() - start)
    return min(times), statistics.median(times), out


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not 1 <= args.repeat <= 20:
        parser.error("--repeat: 1 to 20")
    ref = min(reference() for _ in range(args.repeat))
    print(f"reference: 1 M Python multiply-adds in {ref * 1e3:.0f} ms CPU (load {_load()})")
    for label, kw in SIMULATIONS:
        best, median, r = timed(lambda kw=kw: engine.serve_load(requests=10_000, **kw), args.repeat)
        print(
            f"simulate 10,000 requests, {label}: {best:.3f} s CPU (median {median:.3f}; "
            f"{best / ref:.1f}x the reference, target 10x; {r['requests_measured']:,} "
            f"measured, {r['preemptions']:,} preemptions)"
        )
    for label, confirm in (("bisection only", {"confirm_seeds": 0}), ("confirmed", {})):
        best, median, m = timed(lambda c=confirm: engine.max_rate(**SEARCH, **c), args.repeat)
        print(
            f"max-rate search, {label} ({SEARCH['model']} on {SEARCH['hardware']}, p90 TTFT <= "
            f"200 ms, p99 TPOT <= 30 ms): {best:.3f} s CPU (median {median:.3f}; target "
            f"{SEARCH_TARGET_S[label]} s), {len(m.tried)} + {len(m.confirmations)} simulations, "
            f"{m.max_rate_per_s:.2f} requests/s (bisection {m.bisection_rate_per_s:.2f}, "
            f"analytic {m.analytic_max_rate_per_s:.2f})"
        )
    best, median, df = timed(lambda: engine.load_grid(**GRID), args.repeat)
    print(
        f"analytic fast path: {len(df):,} configurations ({len(df.attrs['skipped'])} "
        f"deployments skipped) in {best:.3f} s CPU (median {median:.3f}; target 1 s; "
        f"{len(df) / best:,.0f} configurations/s)"
    )
    best, median, df = timed(lambda: engine.load_plan_disaggregated(**PAIRS), args.repeat)
    print(
        f"disaggregated fast path: {len(df):,} prefill × decode pairs of "
        f"{len(PAIRS['hardware']) * len(PAIRS['tp']) * len(PAIRS['pp']) * 2} deployments in "
        f"{best:.3f} s CPU (median {median:.3f}; {best / ref:.1f}x the reference; target 10 s)"
    )


if __name__ == "__main__":
    main()
