"""Searches: the highest request rate one replica serves within its SLOs, and the replicas and
cost a target traffic needs.

`max_rate` brackets the answer with the analytic fast path (engine/load/analytic.py), then
bisects on the simulator: a rate passes when the measured p90 TTFT and p99 TPOT (each
editable, None to drop it) are within the SLOs and the queue does not grow through the
measured window. Every run uses the same seed, so the arrivals of two rates are the same
draws, scaled (common random numbers: the pass/fail line is sharp). The search stops when the
bracket is within `tolerance` of its top, or after MAX_RUNS simulations.

Replicas for a target rate: ⌈target / max rate⌉; cost per million output tokens at that rate:
replicas · devices · price per accelerator-hour / (3600 · target · mean output tokens) · 10⁶
(the catalogue's `price_per_hour_usd`; docs/model.md, "Serving under load").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from engine.load import analytic as an
from engine.load.api import (
    DEFAULT_SLO,
    Deployment,
    check_slo,
    deployment,
    load_events,
    simulate,
)
from engine.load.grid import analytic_max_rate, limits
from engine.load.results import LoadResult
from engine.load.workload import MAX_RATE, make_workload

MAX_RUNS = 14
SEARCH_REQUESTS = 1000
GREW = "the queue grew"


@dataclass(frozen=True)
class MaxRate:
    """The search's answer, the run at that rate and every rate tried."""

    max_rate_per_s: float
    slo: dict
    at_max: LoadResult | None
    analytic_max_rate_per_s: float
    saturation_rate_per_s: float  # the analytic capacity
    tried: tuple = ()  # (rate, p90 TTFT ms, p99 TPOT ms, passed)
    plan: dict = field(default_factory=dict)  # replicas and cost for a target rate

    def as_dict(self) -> dict[str, object]:
        head = {"max_rate_per_s": self.max_rate_per_s,
                "slo_ttft_ms_p90": self.slo["ttft_ms"], "slo_tpot_ms_p99": self.slo["tpot_ms"],
                "analytic_max_rate_per_s": self.analytic_max_rate_per_s,
                "saturation_rate_per_s": self.saturation_rate_per_s,
                "rates_tried": [dict(zip(("rate_per_s", "ttft_ms_p90", "tpot_ms_p99", "passed"),
                                         t, strict=True)) for t in self.tried]}  # fmt: skip
        run = self.at_max.as_dict(series=False) if self.at_max is not None else {}
        return run | head | dict(self.plan)


def passes(r: LoadResult, slo: dict) -> bool:
    """The run meets the percentile SLOs and its queue did not grow."""
    if not r["fits_in_memory"] or any(w.startswith(GREW) for w in r.warnings):
        return False
    if slo["ttft_ms"] is not None and not r["ttft_ms_p90"] <= slo["ttft_ms"]:
        return False
    return slo["tpot_ms"] is None or not r["tpot_ms_p99"] > slo["tpot_ms"]


def _analytic(dep: Deployment, n_in: float, n_out: float, slo: dict, burstiness: float):
    f, lim = dep.scenario.folded, limits(dep.scenario.folded, dep.scheduler)
    cap = float(an.capacity(f, lim, n_in, n_out)["rate_per_s"])
    guess = float(analytic_max_rate(f, lim, n_in, n_out, slo["ttft_ms"], slo["tpot_ms"],
                                    burstiness))  # fmt: skip
    return guess, cap


def search(dep: Deployment, *, input_tokens, output_tokens, slo: dict, requests: int, seed: int,
           burstiness: float, length_spread: float, tolerance: float) -> MaxRate:  # fmt: skip
    """Bisection on the simulator from the analytic bracket (see the module docstring)."""
    guess, cap = _analytic(dep, float(input_tokens), float(output_tokens), slo, burstiness)
    tried, runs = [], {}

    def run(rate: float) -> bool:
        rate = min(max(rate, 1e-9), MAX_RATE)
        w = make_workload(input_tokens=input_tokens, output_tokens=output_tokens, rate=rate,
                          requests=requests, seed=seed, burstiness=burstiness,
                          length_spread=length_spread)  # fmt: skip
        r = simulate(dep, w, slo)
        ok = passes(r, slo)
        runs[rate] = r
        tried.append((rate, r["ttft_ms_p90"], r["tpot_ms_p99"], ok))
        return ok

    lo, hi = _bracket(run, guess if guess > 0 else cap / 4, cap)
    while hi - lo > tolerance * hi and len(tried) < MAX_RUNS:
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if run(mid) else (lo, mid)
    best = runs.get(lo) if lo > 0 else None
    return MaxRate(lo, slo, best, guess, cap, tuple(tried))


def _bracket(run, start: float, cap: float) -> tuple[float, float]:
    """(a passing rate or 0, a failing rate) around `start`, widening by 1.3× (down by 0.6×)."""
    if run(start):
        lo, hi = start, start * 1.3
        while run(hi):
            lo, hi = hi, hi * 1.3
            if hi > 2.0 * cap:  # beyond any steady state: the simulator keeps failing above
                return lo, hi
        return lo, hi
    hi, lo = start, start * 0.6
    for _ in range(4):
        if run(lo):
            return lo, hi
        hi, lo = lo, lo * 0.6
    return 0.0, hi


def max_rate_events(input_tokens: float, max_batched_tokens: int,
                    requests: int = SEARCH_REQUESTS) -> int:  # fmt: skip
    """About how many events a `max_rate` search takes at most: MAX_RUNS simulations of
    `requests` requests (engine.load.api.load_events each), to bound the work beforehand."""
    return MAX_RUNS * load_events(requests, input_tokens, max_batched_tokens)


def plan(result: MaxRate, dep: Deployment, target_rate: float | None, mean_output: float) -> dict:
    """Replicas for `target_rate` and the cost per million output tokens at that rate."""
    if target_rate is None:
        return {}
    hw_price = dep.price_per_hour_usd
    rate = result.max_rate_per_s
    replicas = math.ceil(target_rate / rate) if rate > 0 else None
    cost = None
    if replicas is not None and hw_price is not None:
        per_hour = replicas * dep.devices * hw_price
        cost = per_hour / (3600.0 * target_rate * mean_output) * 1e6
    return {"target_rate_per_s": target_rate, "replicas": replicas, "devices": dep.devices,
            "price_per_hour_usd": hw_price, "cost_per_million_output_tokens_usd": cost}  # fmt: skip


def max_rate(model, hardware, *, input_tokens, output_tokens,
             slo_ttft_ms_p90=DEFAULT_SLO["ttft_ms"], slo_tpot_ms_p99=DEFAULT_SLO["tpot_ms"],
             requests=SEARCH_REQUESTS, seed=0, burstiness=1.0, length_spread=0.0,
             tolerance=0.02, target_rate=None, tp=1, pp=1, precision="fp16", kv_precision=None,
             profile="tutorial", assumptions=None, catalog=None, max_num_seqs=None,
             max_batched_tokens=None, chunked_prefill=None, block_size=None, kv_policy=None,
             watermark=None, **overrides) -> MaxRate:  # fmt: skip
    """The highest Poisson (or gamma, `burstiness`) rate one replica serves with p90 TTFT ≤
    `slo_ttft_ms_p90` and p99 TPOT ≤ `slo_tpot_ms_p99` (docs/model.md, "Serving under load").

    Args:
        model, hardware, tp, pp, precision, kv_precision, profile, assumptions, catalog,
            **overrides, and the scheduler settings: the deployment, as for `serve_load`.
        input_tokens, output_tokens, length_spread: the requests (means, and their spread).
        requests, seed: each simulation's requests and seed (the same for every rate).
        tolerance: stop when the bracket is within this fraction of its top.
        target_rate: requests/s to plan for: adds replicas and the cost per 1M output tokens.
    """
    if not (isinstance(tolerance, int | float) and 0.001 <= tolerance <= 0.5):
        raise ValueError(f"tolerance: expected a fraction from 0.001 to 0.5, got {tolerance!r}")
    if target_rate is not None and not (isinstance(target_rate, int | float)
                                        and 0 < target_rate <= MAX_RATE):  # fmt: skip
        raise ValueError(f"target_rate: expected requests/s above 0 (at most {MAX_RATE:g})")
    slo = check_slo({"ttft_ms": slo_ttft_ms_p90, "tpot_ms": slo_tpot_ms_p99})
    make_workload(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        rate=1.0,
        requests=requests,
        seed=seed,
        burstiness=burstiness,
        length_spread=length_spread,
    )  # fmt: skip  (checks every argument first)
    knobs = {"max_num_seqs": max_num_seqs, "max_batched_tokens": max_batched_tokens,
             "chunked_prefill": chunked_prefill, "block_size": block_size,
             "kv_policy": kv_policy, "watermark": watermark}  # fmt: skip
    dep = deployment(model, hardware, tp=tp, pp=pp, precision=precision,
                     kv_precision=kv_precision, profile=profile, assumptions=assumptions,
                     catalog=catalog, scheduler=knobs, **overrides)  # fmt: skip
    result = search(dep, input_tokens=input_tokens, output_tokens=output_tokens, slo=slo,
                    requests=requests, seed=seed, burstiness=burstiness,
                    length_spread=length_spread, tolerance=tolerance)  # fmt: skip
    return replace(result, plan=plan(result, dep, target_rate, float(output_tokens)))
