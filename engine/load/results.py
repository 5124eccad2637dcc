"""A load run's result: per-request latencies and the measured window's statistics.

Per request (the measured ones: see engine/load/workload.py and window.py):

    TTFT      = first token − arrival (queueing included)
    TPOT      = (e2e − TTFT) / (O − 1)   (O ≥ 2: the mean time per output token after the first)
    e2e       = last token − arrival
    queueing  = first admission − arrival

Each is summarised by its mean and its 50th, 90th and 99th percentiles (numpy's linear
interpolation between order statistics, as vLLM's benchmark_serving reports them). Over the
window [t0, t1] (engine/load/window.py; never of zero length): requests/s (completions in the
window per second), output tokens/s (tokens produced in the window), goodput (requests/s times
the share of measured requests meeting every SLO, as benchmark_serving's `--goodput`), the
time-averaged running batch, requests in the system and KV-pool occupancy, and the
preemptions. `as_dict()` is the CLI's JSON object.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.load.pool import PoolSize
from engine.load.simulate import Simulator, thin
from engine.report.messages import Message
from engine.scenarios.service import SLO

STATS = ("mean", "p50", "p90", "p99")
LATENCIES = ("ttft_ms", "tpot_ms", "e2e_latency_ms", "queueing_ms")
NAN = float("nan")
# Relative rounding of a difference of two sums of many products (about 1e-13 in practice):
# a time average below 0 by no more than this share of its terms is 0.
ROUNDING = 1e-9


@dataclass(frozen=True)
class LoadResult:
    """One load run. `values` holds the identifiers and the metrics (JSON-ready); the
    per-request arrays and the time series are numpy arrays for tables and charts."""

    values: dict
    scheduler: dict
    assumptions: dict
    warnings: tuple[Message, ...]
    per_request: dict = field(default_factory=dict)  # measured requests, seconds and tokens
    timeseries: dict = field(default_factory=dict)  # time_s, running, queued, kv_in_use

    def __getitem__(self, key: str):
        return self.values[key]

    def as_dict(self, series: bool = True) -> dict[str, object]:
        """The metrics, then scheduler, assumptions and warnings; the time series as lists
        unless `series` is False."""
        out = dict(self.values) | {
            "scheduler": dict(self.scheduler),
            "assumptions": dict(self.assumptions),
            "warnings": [str(w) for w in self.warnings],
        }
        if series:
            out["timeseries"] = {k: v.tolist() for k, v in self.timeseries.items()}
        return out


def summary(values: np.ndarray, scale: float, name: str) -> dict[str, float]:
    """mean, p50, p90, p99 of the finite values (NaN when there are none), scaled."""
    finite = values[np.isfinite(values)]
    if not finite.size:
        return {f"{name}_{s}": NAN for s in STATS}
    p50, p90, p99 = np.percentile(finite, [50, 90, 99])
    return {
        f"{name}_mean": float(finite.mean()) * scale,
        f"{name}_p50": float(p50) * scale,
        f"{name}_p90": float(p90) * scale,
        f"{name}_p99": float(p99) * scale,
    }


def measured(sim: Simulator) -> np.ndarray:
    """Indices of the measured requests: open loop, those arriving in the window; closed loop
    and max throughput, those completing in it."""
    last = sim.requests.count - sim.drain
    if sim.requests.open_loop:
        return np.arange(sim.warmup, last)
    return np.array(sim.completed[sim.warmup : last], dtype=int)


def per_request(sim: Simulator, idx: np.ndarray) -> dict[str, np.ndarray]:
    requests = sim.requests
    arrival = np.asarray(requests.arrival_s)[idx]
    first, done = np.asarray(requests.first_token_s)[idx], np.asarray(requests.done_s)[idx]
    n_out = np.asarray(requests.output_tokens, dtype=float)[idx]
    ttft, e2e = first - arrival, done - arrival
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(n_out >= 2, (e2e - ttft) / (n_out - 1), NAN)
    return {
        "arrival_s": arrival,
        "input_tokens": np.asarray(requests.input_tokens, dtype=float)[idx],
        "output_tokens": n_out,
        "ttft_s": ttft,
        "tpot_s": tpot,
        "e2e_latency_s": e2e,
        "queueing_s": np.asarray(requests.admitted_s)[idx] - arrival,
        "preemptions": np.asarray(requests.preemptions, dtype=float)[idx],
    }


def in_system(sim: Simulator) -> float:
    """Σ over every request of the time it spent in the system within the window (Little's
    L times the window's length): arrival to completion, clipped to [t0, t1]."""
    t0, t1 = sim.window.start_s, sim.window.end_s
    arrival, done = np.asarray(sim.requests.arrival_s), np.asarray(sim.requests.done_s)
    arrived = np.isfinite(arrival)
    end = np.where(np.isfinite(done), done, t1)
    start = np.maximum(arrival[arrived], t0)
    return float(np.maximum(np.minimum(end[arrived], t1) - start, 0.0).sum())


def queue_grew(sim: Simulator) -> bool:
    """More than a tenth of the measured requests more in the system at the window's end
    than at its start (the arrival rate exceeds what the deployment sustains)."""
    arrival, done = np.asarray(sim.requests.arrival_s), np.asarray(sim.requests.done_s)
    done = np.where(np.isfinite(done), done, np.inf)

    def count(t: float) -> int:
        return int(((arrival <= t) & (done > t)).sum())

    measured = max(sim.requests.count - sim.warmup - sim.drain, 1)
    return count(sim.window.end_s) - count(sim.window.start_s) > 0.1 * measured


def at_least_zero(value: float, scale: float) -> float:
    """`value`, or 0 when it is below 0 by rounding only (at most ROUNDING · `scale`): a
    difference of two integrals whose exact value cannot be negative."""
    return 0.0 if -ROUNDING * scale <= value < 0 else value


def window_metrics(sim: Simulator, pool: PoolSize, req: dict, devices: int, slo: SLO) -> dict:
    """The window's rates and time averages (the window has a length: engine/load/window.py)."""
    window = sim.window
    span = window.end_s - window.start_s
    n = len(req["arrival_s"])
    if not (span > 0 and math.isfinite(span)):
        span = NAN
    per_s = window.completions / span
    tokens = window.tokens / span
    meets = np.ones(n, dtype=bool)
    if slo.ttft_ms is not None:
        meets &= req["ttft_s"] * 1e3 <= slo.ttft_ms
    if slo.tpot_ms is not None:
        meets &= ~(req["tpot_s"] * 1e3 > slo.tpot_ms)  # NaN (one token) passes
    running = window.running_s / span
    system = in_system(sim) / span
    # blocks held by prompts are a float sum and difference with sliding-window layers (a
    # fraction of a block per layer share): an emptied pool can keep a rounding error below 0
    kv = at_least_zero(window.kv_block_s / span / pool.blocks, scale=1.0) if pool.blocks else NAN
    return {
        "requests_per_s": per_s,
        "arrival_rate_per_s": n / span,
        "output_tokens_per_s": tokens,
        "output_tokens_per_s_per_gpu": tokens / devices,
        "goodput_requests_per_s": per_s * float(meets.mean()) if n else NAN,
        "slo_attainment": float(meets.mean()) if n else NAN,
        "mean_running_requests": running,
        # every running request is in the system: the difference is ≥ 0 but for rounding
        # (−8.9e-16 was seen with no request ever queued)
        "mean_queued_requests": at_least_zero(system - running, scale=system),
        "mean_requests_in_system": system,
        "kv_cache_utilisation": kv,
        "measured_window_s": span,
    }


def timeseries(sim: Simulator, pool: PoolSize) -> dict[str, np.ndarray]:
    rows = thin(sim.series)
    blocks = max(pool.blocks, 1)
    return {
        "time_s": rows[:, 0],
        "running": rows[:, 1],
        "queued": rows[:, 2],
        "kv_in_use": rows[:, 3] / blocks,
    }


def metrics(sim: Simulator, pool: PoolSize, devices: int, slo: SLO) -> tuple[dict, dict]:
    """(the metric values, the measured requests' arrays) of a finished run."""
    idx = measured(sim)
    req = per_request(sim, idx)
    out: dict[str, object] = {"requests_measured": len(idx)}
    for name, key in zip(
        LATENCIES, ("ttft_s", "tpot_s", "e2e_latency_s", "queueing_s"), strict=True
    ):
        out |= summary(req[key], 1e3, name)
    out |= window_metrics(sim=sim, pool=pool, req=req, devices=devices, slo=slo)
    out["preemptions"] = int(sum(sim.requests.preemptions))
    prefix = sim.prefix
    out["prefix_hit_rate"] = None if prefix is None else prefix.hit_rate(idx, req["input_tokens"])
    out["max_running_requests"] = int(max((row[1] for row in sim.series), default=0))
    return out, req


def empty_metrics() -> dict:
    """The metric keys with no value (a deployment whose KV pool cannot hold a request)."""
    out: dict[str, object] = {"requests_measured": 0}
    for name in LATENCIES:
        out |= {f"{name}_{s}": NAN for s in STATS}
    keys = (
        "requests_per_s",
        "arrival_rate_per_s",
        "output_tokens_per_s",
        "output_tokens_per_s_per_gpu",
        "goodput_requests_per_s",
        "slo_attainment",
        "mean_running_requests",
        "mean_queued_requests",
        "mean_requests_in_system",
        "kv_cache_utilisation",
        "measured_window_s",
    )
    zero = {"preemptions": 0, "max_running_requests": 0, "prefix_hit_rate": None}
    return out | dict.fromkeys(keys, NAN) | zero
