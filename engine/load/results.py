"""A load run's result: per-request latencies and the measured window's statistics.

Per request (the measured ones: see engine/load/workload.py for the window):

    TTFT      = first token − arrival (queueing included)
    TPOT      = (e2e − TTFT) / (O − 1)   (O ≥ 2: the mean time per output token after the first)
    e2e       = last token − arrival
    queueing  = first admission − arrival

Each is summarised by its mean and its 50th, 90th and 99th percentiles (numpy's linear
interpolation between order statistics, as vLLM's benchmark_serving reports them). Over the
window [t0, t1]: requests/s (completions in the window per second), output tokens/s (tokens
produced in the window), goodput (requests/s times the share of measured requests meeting
every SLO, as benchmark_serving's `--goodput`), the time-averaged running batch, requests in
the system and KV-pool occupancy, and the preemptions. `as_dict()` is the CLI's JSON object.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.load.pool import PoolSize
from engine.load.simulate import Simulator, thin

STATS = ("mean", "p50", "p90", "p99")
LATENCIES = ("ttft_ms", "tpot_ms", "e2e_latency_ms", "queueing_ms")
NAN = float("nan")


@dataclass(frozen=True)
class LoadResult:
    """One load run. `values` holds the identifiers and the metrics (JSON-ready); the
    per-request arrays and the time series are numpy arrays for tables and charts."""

    values: dict
    scheduler: dict
    assumptions: dict
    warnings: tuple[str, ...]
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
            "warnings": list(self.warnings),
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
    return {f"{name}_mean": float(finite.mean()) * scale, f"{name}_p50": float(p50) * scale,
            f"{name}_p90": float(p90) * scale, f"{name}_p99": float(p99) * scale}  # fmt: skip


def measured(sim: Simulator) -> np.ndarray:
    """Indices of the measured requests: open loop, those arriving in the window; closed loop
    and max throughput, those completing in it."""
    if sim.open:
        return np.arange(sim.warm, sim.k - sim.drain)
    return np.array(sim.completed[sim.warm : sim.k - sim.drain], dtype=int)


def per_request(sim: Simulator, idx: np.ndarray) -> dict[str, np.ndarray]:
    arrival = np.asarray(sim.arrival)[idx]
    first, done = np.asarray(sim.t_first)[idx], np.asarray(sim.t_done)[idx]
    n_out = np.asarray(sim.n_out, dtype=float)[idx]
    ttft, e2e = first - arrival, done - arrival
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(n_out >= 2, (e2e - ttft) / (n_out - 1), NAN)
    return {
        "arrival_s": arrival,
        "input_tokens": np.asarray(sim.n_in, dtype=float)[idx],
        "output_tokens": n_out,
        "ttft_s": ttft,
        "tpot_s": tpot,
        "e2e_latency_s": e2e,
        "queueing_s": np.asarray(sim.t_admit)[idx] - arrival,
        "preemptions": np.asarray(sim.preempted, dtype=float)[idx],
    }


def in_system(sim: Simulator) -> float:
    """Σ over every request of the time it spent in the system within the window (Little's
    L times the window's length): arrival to completion, clipped to [t0, t1]."""
    arrival, done = np.asarray(sim.arrival), np.asarray(sim.t_done)
    arrived = np.isfinite(arrival)
    end = np.where(np.isfinite(done), done, sim.t1)
    start = np.maximum(arrival[arrived], sim.t0)
    return float(np.maximum(np.minimum(end[arrived], sim.t1) - start, 0.0).sum())


def window_metrics(sim: Simulator, pool: PoolSize, req: dict, devices: int, slo: dict) -> dict:
    """The window's rates and time averages (NaN when the window has no length)."""
    span = sim.t1 - sim.t0
    n = len(req["arrival_s"])
    if not (span > 0 and math.isfinite(span)):
        span = NAN
    done = sim.acc["done_in_window"] if sim.open else n
    per_s = done / span
    tokens = sim.acc["tokens"] / span
    meets = np.ones(n, dtype=bool)
    if slo.get("ttft_ms") is not None:
        meets &= req["ttft_s"] * 1e3 <= slo["ttft_ms"]
    if slo.get("tpot_ms") is not None:
        meets &= ~(req["tpot_s"] * 1e3 > slo["tpot_ms"])  # NaN (one token) passes
    running = sim.acc["running"] / span
    system = in_system(sim) / span
    return {
        "requests_per_s": per_s,
        "arrival_rate_per_s": n / span,
        "output_tokens_per_s": tokens,
        "output_tokens_per_s_per_gpu": tokens / devices,
        "goodput_requests_per_s": per_s * float(meets.mean()) if n else NAN,
        "slo_attainment": float(meets.mean()) if n else NAN,
        "mean_running_requests": running,
        "mean_queued_requests": system - running,
        "mean_requests_in_system": system,
        "kv_cache_utilisation": sim.acc["kv"] / span / pool.blocks if pool.blocks else NAN,
        "measured_window_s": span,
    }


def timeseries(sim: Simulator, pool: PoolSize) -> dict[str, np.ndarray]:
    rows = thin(sim.series)
    blocks = max(pool.blocks, 1)
    return {"time_s": rows[:, 0], "running": rows[:, 1], "queued": rows[:, 2],
            "kv_in_use": rows[:, 3] / blocks}  # fmt: skip


def metrics(sim: Simulator, pool: PoolSize, devices: int, slo: dict) -> tuple[dict, dict]:
    """(the metric values, the measured requests' arrays) of a finished run."""
    idx = measured(sim)
    req = per_request(sim, idx)
    out: dict[str, object] = {"requests_measured": len(idx)}
    for name, key in zip(LATENCIES, ("ttft_s", "tpot_s", "e2e_latency_s", "queueing_s"),
                         strict=True):  # fmt: skip
        out |= summary(req[key], 1e3, name)
    out |= window_metrics(sim, pool, req, devices, slo)
    out["preemptions"] = int(sum(sim.preempted))
    out["max_running_requests"] = int(max((row[1] for row in sim.series), default=0))
    return out, req


def empty_metrics() -> dict:
    """The metric keys with no value (a deployment whose KV pool cannot hold a request)."""
    out: dict[str, object] = {"requests_measured": 0}
    for name in LATENCIES:
        out |= {f"{name}_{s}": NAN for s in STATS}
    keys = ("requests_per_s", "arrival_rate_per_s", "output_tokens_per_s",
            "output_tokens_per_s_per_gpu", "goodput_requests_per_s", "slo_attainment",
            "mean_running_requests", "mean_queued_requests", "mean_requests_in_system",
            "kv_cache_utilisation", "measured_window_s")  # fmt: skip
    return out | dict.fromkeys(keys, NAN) | {"preemptions": 0, "max_running_requests": 0}
