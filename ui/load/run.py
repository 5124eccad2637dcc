"""The serving-under-load page's engine calls, each cached, and the budget that bounds them.

Four calls, all the engine's (docs/model.md, "Serving under load"):

- `curve`: the analytic fast path (`engine.load_grid`) over a sweep of open-loop rates up to a
  little past the saturation rate (which the fast path gives first), for the latency and
  throughput curves: milliseconds.
- `checks`: the simulator (`engine.serve_load`) at a few open-loop rates, as fractions of that
  saturation rate: the curves' measured points, and the goodput against rate.
- `run`: the simulator on the chosen workload (open, closed or max throughput): the timeline.
- `search`: `engine.max_rate` (bisection on the simulator, its answer confirmed on longer runs)
  with the replicas and the cost for the target rate.

Their results are shared by every session and dropped a minute after their last use
(SIMULATED, ui/runtime/memo.py).

Before simulating anything the page adds up what the simulations can take at most, by the
engine's own bound (`engine.load_events`, `engine.max_rate_events`: events, each at most
`engine.LOAD_EVENT_US` µs of CPU), and refuses the lot when that exceeds BUDGET_EVENTS (a few
seconds), saying how to narrow it; the fast path always runs, and its curves are drawn before
anything is simulated (pages/load.py).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import streamlit as st

import engine
from ui.core.budget import LOAD_EVENTS
from ui.runtime import memo
from ui.words.format import fmt
from ui.words.i18n import N_, _, ngettext
from ui.words.text import plain

BUDGET_EVENTS = LOAD_EVENTS  # simulated events per rerun (ui/core/budget.py)
CHECK_FRACTIONS = (0.25, 0.5, 0.7, 0.85, 1.0, 1.15)  # of the saturation rate
# Requests per check run, at most (the page's when fewer): a run's window opens before the
# server has filled, so a run of few request lifetimes reads low near saturation (docs/model.md,
# "What is approximated": 1,000 requests at 0.85 of the default deployment's saturation read
# 5.32 requests/s served for 6.02 offered and a growing queue, 2,000 read 5.80 and none).
CHECK_REQUESTS = 2000
SEARCH_REQUESTS = 1000  # per run of the max-rate search (the engine's search default)
MIN_REQUESTS = 100  # and at least these
CURVE_POINTS = 48
CURVE_TOP = 1.1  # the curve runs to 1.1 × the saturation rate
SIMULATIONS = {"run": N_("run"), "checks": N_("checks"), "search": N_("search")}  # in a refusal
QUEUE_GREW = "queue_grew"  # the code of the engine's warning when a run's queue grew
NO_FIT = ("no_kv_room", "kv_pool_below_one_request")  # its codes when a run does not fit
LAYOUT = ("attention_dp_schedulers", "pp_batches_in_flight")  # how the replica runs: notes
# Shared by every session, keyed on the scenario's exact text (memo.fingerprint: spec objects
# hold read-only mappings, which Streamlit's own hashing cannot copy), each dropped 60 s after
# its last use; one heavy computation at a time, /train's searches included. A run within the
# budget keeps a few MiB (its per-request arrays and time series). With /plan's grids and
# /train's searches, at most memo.HEAVY_BYTES in all.
SIMULATED = memo.Shared(
    entries=64,
    max_bytes=48 * 2**20,
    idle_s=60.0,
    size=memo.result_bytes,
    slots=memo.HEAVY,
    pool=memo.HEAVY_BYTES,
)


def workload(work: dict, extra: dict | None = None) -> engine.Workload:
    """The sidebar's workload as the engine's (`extra`: its shared prefix); ValueError for an
    impossible one (too few requests for the clients)."""
    arrivals = {
        "open": engine.OpenLoop(rate_per_s=work["rate"], burstiness=work["burstiness"]),
        "closed": engine.ClosedLoop(clients=work["concurrency"]),
        "max": engine.MaxThroughput(),
        # a trace's requests come with its file (ui/load/trace.py replays it); until then the
        # workload is the template's, drawn at the page's rate
        "trace": engine.OpenLoop(rate_per_s=work["rate"], burstiness=work["burstiness"]),
    }[work["mode"]]
    return engine.Workload(
        input_tokens=work["input_tokens"],
        output_tokens=work["output_tokens"],
        arrivals=arrivals,
        requests=work["requests"],
        length_spread=work["length_spread"],
        seed=work["seed"],
        **(extra or {}),
    )


def priced(hw, price: float | None):
    """The accelerator at the page's price per hour (None: the catalogue's list price)."""
    return hw if price is None else dataclasses.replace(hw, price_per_hour_usd=float(price))


def _grid(
    d: engine.Deployment, sched: engine.Scheduler, w: engine.Workload, slo: engine.SLO, rates
) -> pd.DataFrame:
    traffic = engine.Traffic(
        input_tokens=w.input_tokens,
        output_tokens=w.output_tokens,
        rates=list(rates),
        burstiness=w.burstiness,
        prefix=w.prefix,
    )
    return engine.load_grid(engine.Deployments.of_one(d), traffic=traffic, scheduler=sched, slo=slo)


def check(d: engine.Deployment) -> None:
    """The placement's rules, checked first so a refusal names the model (ValueError)."""
    engine.check_parallel(
        name=d.model.name,
        arch=d.model.arch,
        tp=d.tp,
        pp=d.pp,
        ep=d.ep,
        attention_dp=d.attention_dp,
    )
    engine.check_devices(d.hardware, d.tp, d.pp)


@memo.cached(SIMULATED)
def curve(
    d: engine.Deployment, sched: engine.Scheduler, w: engine.Workload, slo: engine.SLO
) -> pd.DataFrame:
    """The fast path over CURVE_POINTS open-loop rates up to CURVE_TOP × saturation (one row
    when the deployment cannot serve at all). Read-only: shared by reruns."""
    first = _grid(d=d, sched=sched, w=w, slo=slo, rates=[1.0])
    top = float(first["saturation_rate_per_s"].iloc[0])
    if not (np.isfinite(top) and top > 0 and bool(first["fits_in_memory"].iloc[0])):
        return first
    rates = np.linspace(top * CURVE_TOP / CURVE_POINTS, top * CURVE_TOP, CURVE_POINTS)
    return _grid(d=d, sched=sched, w=w, slo=slo, rates=np.minimum(rates, 1e6))


def without_speculation(
    d: engine.Deployment, sched: engine.Scheduler, w: engine.Workload, slo: engine.SLO, rates
) -> pd.DataFrame:
    """The fast path at the curve's rates with speculative decoding off (the comparison)."""
    plain_d = dataclasses.replace(d, speculation=None)
    return _grid(d=plain_d, sched=sched, w=w, slo=slo, rates=list(rates))


def saturation(grid: pd.DataFrame) -> float:
    """The fast path's saturation rate (NaN when the deployment cannot serve)."""
    value = float(grid["saturation_rate_per_s"].iloc[0])
    return value if bool(grid["fits_in_memory"].iloc[0]) and value > 0 else float("nan")


def check_rates(top: float) -> list[float]:
    return [top * f for f in CHECK_FRACTIONS] if np.isfinite(top) else []


def sim_requests(w: engine.Workload, most: int = CHECK_REQUESTS) -> int:
    """Requests per check run (or, `most` = SEARCH_REQUESTS, per run of the max-rate search):
    the page's, at most `most`, at least MIN_REQUESTS."""
    return max(min(w.requests, most), MIN_REQUESTS)


def _check_workload(w: engine.Workload, rate: float) -> engine.Workload:
    return dataclasses.replace(w.at_rate(rate), requests=sim_requests(w))


def search_workload(w: engine.Workload) -> engine.Workload:
    """The requests of every run of the max-rate search (its rate is the search's)."""
    return dataclasses.replace(w.at_rate(1.0), requests=sim_requests(w, SEARCH_REQUESTS))


def events(
    d: engine.Deployment, sched: engine.Scheduler, w: engine.Workload, top: float
) -> dict[str, int]:
    """An upper bound of what each simulation takes, by the engine's (events)."""
    out = {"run": engine.load_events(d, w, scheduler=sched)}
    rates = check_rates(top)
    if rates:
        one = engine.load_events(d, _check_workload(w, rates[-1]), scheduler=sched)
        out["checks"] = len(rates) * one
        out["search"] = engine.max_rate_events(d, search_workload(w), scheduler=sched)
    return out


def seconds(events: int) -> str:
    """The CPU time `events` take at most, at the engine's measured rate (LOAD_EVENT_US)."""
    return fmt(events * engine.LOAD_EVENT_US * 1e-6, "s")


def refusal(counts: dict[str, int], w: engine.Workload) -> str | None:
    """Why the simulations are refused (None: within the budget), with how to narrow it."""
    total = sum(counts.values())
    if total <= BUDGET_EVENTS:
        return None
    parts = ", ".join(f"{_(SIMULATIONS[name])} {n:,}" for name, n in counts.items())
    return _(
        "The simulations would take up to {total} events ({parts}), up to {seconds} of CPU, "
        "more than this page's budget of {budget} ({budget_seconds}). Lower the requests (now "
        "{requests}; each rate check takes {each} of them, {low} to {high}, and each run of the "
        "max-rate search {search}, {low} to {search_high}) or the input tokens (now "
        "{input_tokens}) or the output tokens (now {output_tokens}), or max_num_seqs, or raise "
        "max_batched_tokens; the fast-path curves need no simulation."
    ).format(
        total=f"{total:,}",
        parts=parts,
        seconds=seconds(total),
        budget=f"{BUDGET_EVENTS:,}",
        budget_seconds=seconds(BUDGET_EVENTS),
        requests=f"{w.requests:,}",
        each=f"{sim_requests(w):,}",
        search=f"{sim_requests(w, SEARCH_REQUESTS):,}",
        low=f"{MIN_REQUESTS:,}",
        high=f"{CHECK_REQUESTS:,}",
        search_high=f"{SEARCH_REQUESTS:,}",
        input_tokens=f"{w.input_tokens:,}",
        output_tokens=f"{w.output_tokens:,}",
    )


def refusal_of(
    d: engine.Deployment, sched: engine.Scheduler, w: engine.Workload, top: float
) -> str | None:
    """The budget's refusal of this page's simulations (None: they run), or the engine's own
    refusal of the workload."""
    try:
        return refusal(events(d=d, sched=sched, w=w, top=top), w)
    except ValueError as exc:
        return _("The simulator refused this workload: {error}").format(error=plain(exc))


@memo.cached(SIMULATED)
def run(d: engine.Deployment, sched: engine.Scheduler, w: engine.Workload, slo: engine.SLO):
    """The chosen workload, simulated (engine.serve_load)."""
    return engine.serve_load(d, w, scheduler=sched, slo=slo)


@memo.cached(SIMULATED)
def checks(
    d: engine.Deployment, sched: engine.Scheduler, w: engine.Workload, slo: engine.SLO, top: float
) -> pd.DataFrame:
    """The simulator at each check rate: one row of its figures per rate."""
    rows = []
    for rate in check_rates(top):
        r = run(d, sched, _check_workload(w, rate), slo)
        grew = any(x.code == QUEUE_GREW for x in r.warnings)
        rows.append(r.as_dict(series=False) | {"queue_grew": grew})
    keep = [k for k in rows[0] if k not in ("scheduler", "assumptions", "warnings")] if rows else []
    return pd.DataFrame(rows, columns=keep)


@memo.cached(SIMULATED)
def search(
    d: engine.Deployment,
    sched: engine.Scheduler,
    w: engine.Workload,
    slo: engine.SLO,
    target: float | None,
):
    """engine.max_rate: the highest open-loop rate meeting the SLOs, replicas and cost."""
    search = engine.RateSearch(target_rate=target)
    return engine.max_rate(d, search_workload(w), scheduler=sched, slo=slo, search=search)


def simulate_all(
    d: engine.Deployment,
    sched: engine.Scheduler,
    w: engine.Workload,
    slo: engine.SLO,
    top: float,
    target: float | None,
):
    """The run, the check rates and the search, with progress shown (st.status); returns
    (run, checks, search, an error from the engine or None)."""
    with st.status(_("Simulating…"), expanded=False) as status:
        try:
            status.write(
                _("The chosen workload: {requests} requests").format(requests=f"{w.requests:,}")
            )
            r = run(d, sched, w, slo)
            n = len(check_rates(top))
            status.write(
                ngettext(
                    "{n} open-loop rate to check the curves",
                    "{n} open-loop rates to check the curves",
                    n,
                ).format(n=n)
            )
            pts = checks(d=d, sched=sched, w=w, slo=slo, top=top)
            status.write(
                _(
                    "The highest rate meeting the SLOs (bisection on the simulator, confirmed on "
                    "longer runs)"
                )
            )
            m = search(d=d, sched=sched, w=w, slo=slo, target=target) if np.isfinite(top) else None
        except ValueError as exc:
            status.update(label=_("The simulator refused this scenario"), state="error")
            return None, None, None, str(exc)
        status.update(
            label=_("Simulated: the run, {n} rates and the search").format(n=len(pts)),
            state="complete",
        )
    return r, pts, m, None
