"""Searches: the highest request rate one replica serves within its SLOs, and the replicas and
cost a target traffic needs.

`max_rate` brackets the answer with the analytic fast path (engine/load/analytic.py), then
bisects on the simulator: a rate passes when the measured p90 TTFT and p99 TPOT (each
editable, None to drop it) are within the SLOs and the queue does not grow through the
measured window. Every run uses the same seed, so the arrivals of two rates are the same
draws, scaled (common random numbers: the pass/fail line is sharp). The search stops when the
bracket is within `tolerance` of its top, or after MAX_RUNS simulations. Its answer is then
confirmed (`_confirm`): rerun on several seeds with runs several times longer, and lowered by
CONFIRM_STEP a round until every one of them passes, so that rerunning the answer holds (one
short sample's percentiles are noisy, and near saturation a longer run drifts). With several
workers (an Execution) each round of the bisection also simulates, on the other workers, the
rates the search would need after either outcome of the next one (`_frontier`): the path, and
so the answer, is the serial one; `max_rate_events` bounds that path (the speculative runs, at
most workers − 1 a round, run beside it on the other workers). A confirmation round's seeds run
side by side on the workers.

Replicas for a target rate: ⌈target / max rate⌉; cost per million output tokens at that rate:
replicas · devices · price per accelerator-hour / (3600 · target · mean output tokens) · 10⁶
(the catalogue's `price_per_hour_usd`; docs/model.md, "Serving under load").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from engine.load import analytic as an
from engine.load.api import QUEUE_GREW, Instance, instance, load_events, simulate
from engine.load.grid import analytic_max_rate, limits
from engine.load.parallel import Runner
from engine.load.prefix import fast_prompt
from engine.load.results import LoadResult
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployment, HardwareRef, ModelRef
from engine.scenarios.execution import Execution
from engine.scenarios.requests import CONFIRM_SEEDS, RateSearch
from engine.scenarios.service import SLO, Scheduler
from engine.scenarios.workload import MAX_RATE, MAX_SEED, MIN_RATE, OpenLoop, Workload

MAX_RUNS = 14
SEARCH_REQUESTS = 1000
CONFIRM_ROUNDS = 5  # confirmation rounds at most, each rate CONFIRM_STEP times the last
CONFIRM_STEP = 0.95
CONFIRM_KEYS = ("rate_per_s", "seed", "requests", "ttft_ms_p90", "tpot_ms_p99", "passed")


@dataclass(frozen=True)
class MaxRate:
    """The search's answer, the run at that rate and every rate tried."""

    max_rate_per_s: float
    slo: SLO
    at_max: LoadResult | None
    analytic_max_rate_per_s: float
    saturation_rate_per_s: float  # the analytic capacity
    tried: tuple = ()  # (rate, p90 TTFT ms, p99 TPOT ms, passed)
    plan: dict = field(default_factory=dict)  # replicas and cost for a target rate
    bisection_rate_per_s: float | None = None  # the bisection's answer, before confirmation
    search_requests: int | None = None  # requests in each of the bisection's runs
    search_seed: int | None = None  # the seed of every bisection run
    confirmations: tuple = ()  # (rate, seed, requests, p90 TTFT ms, p99 TPOT ms, passed)

    def as_dict(self) -> dict[str, object]:
        head = {
            "max_rate_per_s": self.max_rate_per_s,
            "slo_ttft_ms_p90": self.slo.ttft_ms,
            "slo_tpot_ms_p99": self.slo.tpot_ms,
            "analytic_max_rate_per_s": self.analytic_max_rate_per_s,
            "saturation_rate_per_s": self.saturation_rate_per_s,
            "rates_tried": [
                dict(zip(("rate_per_s", "ttft_ms_p90", "tpot_ms_p99", "passed"), t, strict=True))
                for t in self.tried
            ],
            "bisection_max_rate_per_s": self.bisection_rate_per_s,
            "search_requests": self.search_requests,
            "search_seed": self.search_seed,
            "confirmation_runs": [
                dict(zip(CONFIRM_KEYS, t, strict=True)) for t in self.confirmations
            ],
        }
        run = self.at_max.as_dict(series=False) if self.at_max is not None else {}
        return run | head | dict(self.plan)


def passes(r: LoadResult, slo: SLO) -> bool:
    """The run meets the percentile SLOs and its queue did not grow."""
    if not r["fits_in_memory"] or any(w.code == QUEUE_GREW.code for w in r.warnings):
        return False
    if slo.ttft_ms is not None and not r["ttft_ms_p90"] <= slo.ttft_ms:
        return False
    return slo.tpot_ms is None or not r["tpot_ms_p99"] > slo.tpot_ms


def _analytic(inst: Instance, w: Workload, slo: SLO) -> tuple[float, float]:
    """(the fast path's max rate under the SLOs, its saturation rate)."""
    f, lim = inst.scenario.folded, limits(inst.scenario.folded, inst.scheduler)
    n_in, cached = fast_prompt(w, inst.pool.block_size)
    lim = lim._replace(spec=inst.spec, cached=cached)
    n_out = float(w.output_tokens)
    cap = float(an.capacity(f=f, lim=lim, n_in=n_in, n_out=n_out)["rate_per_s"])
    guess = float(
        analytic_max_rate(
            f=f,
            lim=lim,
            n_in=n_in,
            n_out=n_out,
            slo_ttft_ms_p90=slo.ttft_ms,
            slo_tpot_ms_p99=slo.tpot_ms,
            burstiness=w.burstiness,
        )
    )
    return guess, cap


class _Need(Exception):
    """The serial search's next step needs this rate's outcome."""

    def __init__(self, rate: float):
        super().__init__(rate)
        self.rate = rate


def _path(known: dict, start: float, cap: float, tolerance: float) -> tuple[float, list]:
    """The serial search replayed on the outcomes known so far (rate -> passed): (its answer,
    the rates it tried in order), or _Need(the next rate it would simulate)."""
    tried: list[float] = []

    def run(rate: float) -> bool:
        rate = min(max(rate, MIN_RATE), MAX_RATE)
        if rate not in known:
            raise _Need(rate)
        tried.append(rate)
        return known[rate]

    lo, hi = _bracket(run, start, cap)
    while hi - lo > tolerance * hi and len(tried) < MAX_RUNS:
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if run(mid) else (lo, mid)
    return lo, tried


def _frontier(known: dict, width: int, path) -> list[float]:
    """Up to `width` rates the serial search may simulate next: the one it needs, then those
    it would need after each outcome of it, breadth first (speculation: the search's decisions
    stay the serial ones, only their simulations run ahead)."""
    out: list[float] = []
    queue: list[dict] = [{}]
    while queue and len(out) < width:
        guess = queue.pop(0)
        try:
            path(known | guess)
        except _Need as need:
            if need.rate not in out:
                out.append(need.rate)
            queue += [guess | {need.rate: True}, guess | {need.rate: False}]
    return out


def _simulate_at(job: tuple) -> LoadResult:
    """One run of the search (a module-level function: a worker process can import it)."""
    inst, w, slo, rate = job
    return simulate(inst, w.at_rate(rate), slo)


def search_rate(
    inst: Instance,
    w: Workload,
    slo: SLO,
    how: RateSearch | None = None,
    execution: Execution | None = None,
) -> MaxRate:
    """Bisection on the simulator from the analytic bracket (see the module docstring), its
    simulations on `execution`'s workers: each round runs the next rates the serial search
    could need (engine/load/parallel.py), so every worker count gives the serial answer. The
    answer is then confirmed on `how.confirm_seeds` longer runs (`_confirm`)."""
    how = how or RateSearch()
    guess, cap = _analytic(inst, w, slo)
    start = guess if guess > 0 else cap / 4

    def path(known: dict) -> tuple[float, list]:
        return _path(known=known, start=start, cap=cap, tolerance=how.tolerance)

    known: dict[float, bool] = {}
    runs: dict[float, LoadResult] = {}
    with Runner(execution, total=MAX_RUNS + how.confirm_seeds) as runner:
        while True:
            try:
                lo, tried = path(known)
                break
            except _Need:
                rates = _frontier(known=known, width=runner.width, path=path)
            jobs = [(inst, w, slo, rate) for rate in rates]
            for rate, r in zip(rates, runner.map(_simulate_at, jobs), strict=True):
                runs[rate], known[rate] = r, passes(r, slo)
        at_max = runs.get(lo) if lo > 0 else None
        rate, confirmations = lo, ()
        if lo > 0 and how.confirm_seeds > 0:
            longer = confirm_workloads(w, how)
            rate, at_max, confirmations = _confirm(
                runner=runner, inst=inst, ws=longer, slo=slo, rate=lo
            )
    rows = [(t, runs[t]["ttft_ms_p90"], runs[t]["tpot_ms_p99"], known[t]) for t in tried]
    return MaxRate(
        max_rate_per_s=rate,
        slo=slo,
        at_max=at_max,
        analytic_max_rate_per_s=guess,
        saturation_rate_per_s=cap,
        tried=tuple(rows),
        bisection_rate_per_s=lo,
        search_requests=w.requests,
        search_seed=w.seed,
        confirmations=confirmations,
    )


def confirm_workloads(w: Workload, how: RateSearch) -> list[Workload]:
    """The confirmation runs' workloads: `w` with `how.confirm_count` requests, seeded from
    `w.seed` on (the first seed is the search's own)."""
    n = how.confirm_count(w.requests)
    return [
        replace(w, requests=n, seed=(w.seed + k) % (MAX_SEED + 1)) for k in range(how.confirm_seeds)
    ]


def _confirm(runner: Runner, inst: Instance, ws: list[Workload], slo: SLO, rate: float) -> tuple:
    """(the highest rate whose longer runs all pass, the first seed's run there, every
    confirmation run's row), trying the bisection's answer, then CONFIRM_STEP times lower, for
    CONFIRM_ROUNDS rounds at most; (0, None, rows) when none of them holds. A percentile of one
    1,000-request sample is noisy and a rate just below saturation drifts over a longer run:
    the bisection's answer is where its one sample passed, this is where rerunning holds."""
    rows: list[tuple] = []
    for _ in range(CONFIRM_ROUNDS):
        results = runner.map(_simulate_at, [(inst, wk, slo, rate) for wk in ws])
        ok = [passes(r, slo) for r in results]
        rows += [
            (rate, wk.seed, wk.requests, r["ttft_ms_p90"], r["tpot_ms_p99"], good)
            for wk, r, good in zip(ws, results, ok, strict=True)
        ]
        if all(ok):
            return rate, results[0], tuple(rows)
        rate *= CONFIRM_STEP
    return 0.0, None, tuple(rows)


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


def max_rate_events(
    deployment: Deployment | ModelRef | float | None = None,
    workload: Workload | HardwareRef | int | None = None,
    /,
    scheduler: Scheduler | None = None,
    **fields: object,
) -> int:
    """An upper bound of the events a `max_rate` search with the same arguments simulates:
    MAX_RUNS runs and CONFIRM_ROUNDS rounds of confirmation runs, each bounded as
    `load_events` bounds it (open loop: the rate changes what the runs take, not their bound),
    so a caller can bound its work beforehand.

    The older form `max_rate_events(input_tokens, max_batched_tokens, requests=...)` still
    answers with the older estimate of `load_events` for each of those runs."""
    if isinstance(deployment, int | float) and not isinstance(deployment, bool):
        requests = fields.pop("requests", SEARCH_REQUESTS)
        if fields:
            raise ValueError(f"max_rate_events: unexpected {', '.join(sorted(fields))}")
        longer = RateSearch().confirm_count(requests)
        confirm = CONFIRM_ROUNDS * CONFIRM_SEEDS * load_events(longer, deployment, workload)
        return MAX_RUNS * load_events(requests, deployment, workload) + confirm
    dep, w, sched, _slo, how, _ex = _bound(deployment, workload, {"scheduler": scheduler, **fields})
    longer = confirm_workloads(w, how or RateSearch())
    confirm = sum(load_events(dep, wk.at_rate(1.0), scheduler=sched) for wk in longer)
    return MAX_RUNS * load_events(dep, w.at_rate(1.0), scheduler=sched) + CONFIRM_ROUNDS * confirm


def _bound(deployment, workload, given: dict) -> tuple:
    """`max_rate`'s Deployment, Workload (SEARCH_REQUESTS requests unless given) and
    Scheduler, with what the rest of the call binds (the SLO, the search)."""
    if not isinstance(workload, Workload) and "workload" not in given:
        given.setdefault("requests", SEARCH_REQUESTS)
        if not any(given.get(k) is not None for k in ("rate", "concurrency", "trace")):
            given.setdefault("burstiness", 1.0)  # open-loop arrivals, the rate to search
    dep, w, sched, *rest = bind(
        (deployment, workload), given, Deployment, Workload, Scheduler, SLO, RateSearch, Execution
    )
    if w is None:
        raise ValueError("Workload: give input_tokens, output_tokens")
    if not isinstance(w.arrivals, OpenLoop):
        raise ValueError(
            f"max_rate searches an open-loop rate: the workload's arrivals are {w.mode}"
        )
    return dep, w, sched, *rest


def plan(result: MaxRate, inst: Instance, target_rate: float | None, mean_output: float) -> dict:
    """Replicas for `target_rate` and the cost per million output tokens at that rate."""
    if target_rate is None:
        return {}
    hw_price = inst.price_per_hour_usd
    rate = result.max_rate_per_s
    replicas = math.ceil(target_rate / rate) if rate > 0 else None
    cost = None
    if replicas is not None and hw_price is not None:
        per_hour = replicas * inst.devices * hw_price
        cost = per_hour / (3600.0 * target_rate * mean_output) * 1e6
    return {
        "target_rate_per_s": target_rate,
        "replicas": replicas,
        "devices": inst.devices,
        "price_per_hour_usd": hw_price,
        "cost_per_million_output_tokens_usd": cost,
    }


def max_rate(
    deployment: Deployment | ModelRef | None = None,
    workload: Workload | HardwareRef | None = None,
    /,
    scheduler: Scheduler | None = None,
    slo: SLO | None = None,
    search: RateSearch | None = None,
    execution: Execution | None = None,
    **fields: object,
) -> MaxRate:
    """The highest open-loop rate one replica serves with p90 TTFT ≤ `slo.ttft_ms` and p99
    TPOT ≤ `slo.tpot_ms` (docs/model.md, "Serving under load").

    Args:
        deployment, scheduler: the deployment and its scheduler, as for `serve_load`.
        workload: the requests (lengths, spread, `requests` per simulation, default
            SEARCH_REQUESTS, and `seed`, the same for every rate), arriving open-loop: the
            search sets the rate and keeps the arrivals' `burstiness`.
        slo: an SLO, or `slo_ttft_ms_p90` and `slo_tpot_ms_p99` (None: not applied).
        search: a RateSearch, or `tolerance` (stop when the bracket is within this fraction of
            its top) and `target_rate` (requests/s to plan for: adds the replicas and the cost
            per 1M output tokens).
        execution: an Execution, or `workers` (processes on this machine; Execution's default:
            one per core), `ray_address` (a Ray cluster; default the RAY_ADDRESS environment
            variable) and `progress` (a callable progress(done, total)): where the simulations
            run (None: in this process). The answer is the serial one whatever they are
            (engine/load/parallel.py).
    """
    given = {"scheduler": scheduler, "slo": slo, "search": search, "execution": execution}
    dep, w, sched, slo, how, ex = _bound(deployment, workload, given | fields)
    slo, how = slo or SLO(), how or RateSearch()
    inst = instance(dep, sched)
    result = search_rate(inst=inst, w=w, slo=slo, how=how, execution=ex)
    mean_output = float(w.output_tokens)
    return replace(
        result,
        plan=plan(result=result, inst=inst, target_rate=how.target_rate, mean_output=mean_output),
    )
