"""The serving-under-load page's engine calls, each cached, and the budget that bounds them.

Four calls, all the engine's (docs/model.md, "Serving under load"):

- `curve`: the analytic fast path (`engine.load_grid`) over a sweep of open-loop rates up to a
  little past the saturation rate (which the fast path gives first), for the latency and
  throughput curves: milliseconds.
- `checks`: the simulator (`engine.serve_load`) at a few open-loop rates, as fractions of that
  saturation rate: the curves' measured points, and the goodput against rate.
- `run`: the simulator on the chosen workload (open, closed or max throughput): the timeline.
- `search`: `engine.max_rate` (bisection on the simulator) with the replicas and the cost for
  the target rate.

Before simulating anything the page adds up what the simulations would take, by the engine's own
estimate (`engine.load_events`, `engine.max_rate_events`), and refuses the lot when that exceeds
BUDGET_EVENTS (a few seconds), saying how to narrow it; the fast path always runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import engine
from ui.core.budget import LOAD_EVENTS
from ui.core.i18n import N_, _, ngettext

BUDGET_EVENTS = LOAD_EVENTS  # simulated events per rerun (ui/core/budget.py)
CHECK_FRACTIONS = (0.25, 0.5, 0.7, 0.85, 1.0, 1.15)  # of the saturation rate
CHECK_REQUESTS = 1000  # requests per check run and search run (the engine's search default)
MIN_REQUESTS = 100  # and at least these
CURVE_POINTS = 48
CURVE_TOP = 1.1  # the curve runs to 1.1 × the saturation rate
SIMULATIONS = {"run": N_("run"), "checks": N_("checks"), "search": N_("search")}  # in a refusal
GREW = "the queue grew"  # the engine's warning when a run's queue grew (matched, not shown)
NO_FIT = "does not fit"  # the engine's warning when a run does not fit (matched, not shown)


@dataclass(frozen=True)
class Deploy:
    """Everything but the workload: hashable, so it keys the caches."""

    model: object  # ModelSpec
    hw: object  # HardwareSpec, its price the page's
    tp: int
    pp: int
    precision: str
    kv_precision: str | None
    profile: str
    scheduler: tuple  # ((name, value), ...) overrides set

    def kwargs(self) -> dict:
        return {
            "tp": self.tp,
            "pp": self.pp,
            "precision": self.precision,
            "kv_precision": self.kv_precision,
            "profile": self.profile,
        }


@dataclass(frozen=True)
class Workload:
    mode: str  # open | closed | max
    rate: float
    burstiness: float
    concurrency: int
    input_tokens: int
    output_tokens: int
    length_spread: float
    requests: int
    seed: int

    def kwargs(self) -> dict:
        how = {"rate": self.rate, "burstiness": self.burstiness} if self.mode == "open" else {}
        if self.mode != "open":
            how = {"concurrency": "max" if self.mode == "max" else self.concurrency}
        return how | {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "length_spread": self.length_spread,
            "requests": self.requests,
            "seed": self.seed,
        }


# the caches key on the scenario's exact text (spec objects hold read-only mappings, which
# Streamlit's own hashing cannot copy)
HASH = {Deploy: repr, Workload: repr}


def priced(hw, price: float | None):
    """The accelerator at the page's price per hour (None: the catalogue's list price)."""
    return hw if price is None else dataclasses.replace(hw, price_per_hour_usd=float(price))


def _grid(d: Deploy, w: Workload, slo: tuple, rates) -> pd.DataFrame:
    return engine.load_grid(
        [d.model],
        [d.hw],
        rates=list(rates),
        input_tokens=w.input_tokens,
        output_tokens=w.output_tokens,
        precisions=d.precision,
        burstiness=w.burstiness,
        slo_ttft_ms_p90=slo[0],
        slo_tpot_ms_p99=slo[1],
        scheduler=dict(d.scheduler),
        **{k: v for k, v in d.kwargs().items() if k != "precision"},
    )


def check(d: Deploy) -> None:
    """The placement's rules, checked first so a refusal names the model (ValueError)."""
    engine.check_parallel(d.model.name, d.model.arch, d.tp, d.pp)
    engine.check_devices(d.hw, d.tp, d.pp)


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=HASH)
def curve(d: Deploy, w: Workload, slo: tuple) -> pd.DataFrame:
    """The fast path over CURVE_POINTS open-loop rates up to CURVE_TOP × saturation (one row
    when the deployment cannot serve at all). Read-only: shared by reruns."""
    first = _grid(d, w, slo, [1.0])
    top = float(first["saturation_rate_per_s"].iloc[0])
    if not (np.isfinite(top) and top > 0 and bool(first["fits_in_memory"].iloc[0])):
        return first
    rates = np.linspace(top * CURVE_TOP / CURVE_POINTS, top * CURVE_TOP, CURVE_POINTS)
    return _grid(d, w, slo, np.minimum(rates, 1e6))


def saturation(grid: pd.DataFrame) -> float:
    """The fast path's saturation rate (NaN when the deployment cannot serve)."""
    value = float(grid["saturation_rate_per_s"].iloc[0])
    return value if bool(grid["fits_in_memory"].iloc[0]) and value > 0 else float("nan")


def check_rates(top: float) -> list[float]:
    return [top * f for f in CHECK_FRACTIONS] if np.isfinite(top) else []


def sim_requests(w: Workload) -> int:
    """Requests per check run and per run of the max-rate search: the page's, at most
    CHECK_REQUESTS (the engine's search default), at least MIN_REQUESTS."""
    return max(min(w.requests, CHECK_REQUESTS), MIN_REQUESTS)


def _check_workload(w: Workload, rate: float) -> Workload:
    return dataclasses.replace(w, mode="open", rate=rate, requests=sim_requests(w))


def events(d: Deploy, w: Workload, top: float) -> dict[str, int]:
    """What each simulation would take, by the engine's estimate (events)."""
    sched = engine.load_scheduler(d.profile, **dict(d.scheduler))
    budget = sched.max_batched_tokens
    out = {"run": engine.load_events(w.requests, w.input_tokens, budget)}
    rates = check_rates(top)
    if rates:
        n = sim_requests(w)
        out["checks"] = len(rates) * engine.load_events(n, w.input_tokens, budget)
        out["search"] = engine.max_rate_events(w.input_tokens, budget, requests=n)
    return out


def refusal(counts: dict[str, int], w: Workload) -> str | None:
    """Why the simulations are refused (None: within the budget), with how to narrow it."""
    total = sum(counts.values())
    if total <= BUDGET_EVENTS:
        return None
    parts = ", ".join(f"{_(SIMULATIONS[name])} {n:,}" for name, n in counts.items())
    return _(
        "The simulations would take about {total} events ({parts}), more than this page's "
        "budget of {budget} (a few seconds). Lower the requests (now {requests}; the rate "
        "checks and each run of the max-rate search take {each} of them, {low} to {high}) or "
        "the input tokens (now {input_tokens}), or raise max_batched_tokens; the fast-path "
        "curves below need no simulation."
    ).format(
        total=f"{total:,}",
        parts=parts,
        budget=f"{BUDGET_EVENTS:,}",
        requests=f"{w.requests:,}",
        each=f"{sim_requests(w):,}",
        low=f"{MIN_REQUESTS:,}",
        high=f"{CHECK_REQUESTS:,}",
        input_tokens=f"{w.input_tokens:,}",
    )


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=HASH)
def run(d: Deploy, w: Workload, slo: tuple):
    """The chosen workload, simulated (engine.serve_load)."""
    return engine.serve_load(
        d.model,
        d.hw,
        **d.kwargs(),
        **w.kwargs(),
        **dict(d.scheduler),
        slo_ttft_ms=slo[0],
        slo_tpot_ms=slo[1],
    )


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=HASH)
def checks(d: Deploy, w: Workload, slo: tuple, top: float) -> pd.DataFrame:
    """The simulator at each check rate: one row of its figures per rate."""
    rows = []
    for rate in check_rates(top):
        r = run(d, _check_workload(w, rate), slo)
        grew = any(x.startswith(GREW) for x in r.warnings)
        rows.append(r.as_dict(series=False) | {"queue_grew": grew})
    keep = [k for k in rows[0] if k not in ("scheduler", "assumptions", "warnings")] if rows else []
    return pd.DataFrame(rows, columns=keep)


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=HASH)
def search(d: Deploy, w: Workload, slo: tuple, target: float | None):
    """engine.max_rate: the highest open-loop rate meeting the SLOs, replicas and cost."""
    return engine.max_rate(
        d.model,
        d.hw,
        **d.kwargs(),
        **dict(d.scheduler),
        input_tokens=w.input_tokens,
        output_tokens=w.output_tokens,
        burstiness=w.burstiness,
        length_spread=w.length_spread,
        seed=w.seed,
        requests=sim_requests(w),
        slo_ttft_ms_p90=slo[0],
        slo_tpot_ms_p99=slo[1],
        target_rate=target,
    )


def simulate_all(d: Deploy, w: Workload, slo: tuple, top: float, target: float | None):
    """The run, the check rates and the search, with progress shown (st.status); returns
    (run, checks, search, an error from the engine or None)."""
    with st.status(_("Simulating…"), expanded=False) as status:
        try:
            status.write(
                _("The chosen workload: {requests} requests").format(requests=f"{w.requests:,}")
            )
            r = run(d, w, slo)
            n = len(check_rates(top))
            status.write(
                ngettext(
                    "{n} open-loop rate to check the curves",
                    "{n} open-loop rates to check the curves",
                    n,
                ).format(n=n)
            )
            pts = checks(d, w, slo, top)
            status.write(_("The highest rate meeting the SLOs (bisection on the simulator)"))
            m = search(d, w, slo, target) if np.isfinite(top) else None
        except ValueError as exc:
            status.update(label=_("The simulator refused this scenario"), state="error")
            return None, None, None, str(exc)
        status.update(
            label=_("Simulated: the run, {n} rates and the search").format(n=len(pts)),
            state="complete",
        )
    return r, pts, m, None
