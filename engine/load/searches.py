"""`max_rates`: the max-rate search of many deployments at once, the searches spread over the
workers of an Execution (engine/load/parallel.py): one deployment's search runs on one worker,
serially, so each answer is exactly `max_rate`'s for that deployment, in the order asked. The
planner's candidates, each simulated on the same workload, scale out with the workers (a process
pool on one machine, a Ray cluster beyond it). docs/model.md, "Simulations in parallel".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engine.load.api import instance
from engine.load.parallel import run_all
from engine.load.search import SEARCH_REQUESTS, MaxRate, plan, search_rate
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployment
from engine.scenarios.execution import Execution
from engine.scenarios.requests import RateSearch
from engine.scenarios.service import SLO, Scheduler
from engine.scenarios.workload import OpenLoop, Workload

MAX_DEPLOYMENTS = 10_000  # searches in one call, refused above
ARRIVALS = ("rate", "concurrency", "trace")


def _one(job: tuple) -> MaxRate:
    """One deployment's search (a module-level function: a worker process imports it)."""
    dep, w, sched, slo, how = job
    inst = instance(dep, sched)
    found = search_rate(inst=inst, w=w, slo=slo, how=how)
    sized = plan(result=found, inst=inst, target_rate=how.target_rate, mean_output=w.output_tokens)
    return replace(found, plan=sized)


def max_rates(
    deployments: Sequence[Deployment],
    workload: Workload | None = None,
    /,
    scheduler: Scheduler | None = None,
    slo: SLO | None = None,
    search: RateSearch | None = None,
    execution: Execution | None = None,
    **fields: object,
) -> list[MaxRate]:
    """`max_rate` for each of `deployments` on the same workload, the searches on `execution`'s
    workers (None: in this process); the answers in the deployments' order, each equal to
    `max_rate(deployment, workload, ...)`.

    Args:
        deployments: Deployment objects (at most MAX_DEPLOYMENTS).
        workload, scheduler, slo, search: as `max_rate` takes them (objects, or their fields
            as keywords: input_tokens, output_tokens, requests, seed, burstiness, ...).
        execution: an Execution, or `workers`, `ray_address` and `progress`
            (progress(done, total) after each deployment's search).
    """
    deps = list(deployments)
    if not deps or len(deps) > MAX_DEPLOYMENTS:
        raise ValueError(f"deployments: give 1 to {MAX_DEPLOYMENTS:,} Deployment objects")
    if not all(isinstance(d, Deployment) for d in deps):
        raise ValueError("deployments: expected Deployment objects (engine.Deployment)")
    given = {"scheduler": scheduler, "slo": slo, "search": search, "execution": execution}
    if workload is None and not any(fields.get(k) is not None for k in ARRIVALS):
        fields = {"burstiness": 1.0, "requests": SEARCH_REQUESTS} | fields  # as max_rate
    w, sched, slo, how, ex = bind(
        (workload, None), given | fields, Workload, Scheduler, SLO, RateSearch, Execution
    )
    if w is None:
        raise ValueError("Workload: give input_tokens, output_tokens")
    if not isinstance(w.arrivals, OpenLoop):
        raise ValueError(f"max_rates searches an open-loop rate: the arrivals are {w.mode}")
    jobs = [(d, w, sched, slo or SLO(), how or RateSearch()) for d in deps]
    return run_all(_one, jobs, ex)
