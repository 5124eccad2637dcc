"""`serve_load`: an LLM serving a stream of requests with continuous batching.

`deployment(...)` checks and folds everything a run does not change (the model on TP×PP
accelerators, precision, profile and assumptions as `engine.serve` takes them, the stack's
scheduler from the profile with any overrides, the KV pool); `simulate` runs one workload on
it; `serve_load` does both. Every argument is checked before any work, with the bounds of
engine/load/workload.py and engine/catalog/scheduler.py, and a run whose events would exceed
MAX_EVENTS is refused with a message saying what to lower. docs/model.md, "Serving under load".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.catalog.profiles import Profile, get_profile
from engine.catalog.resolve import resolve_hardware
from engine.catalog.scheduler import (
    DEFAULT_SCHEDULER,
    MAX_BATCHED_TOKENS,
    SchedulerDefaults,
    with_overrides,
)
from engine.checks import MAX_TOKENS, check_whole
from engine.load import results
from engine.load.pool import PoolSize, pool_size
from engine.load.simulate import Simulator
from engine.load.workload import MAX_REQUESTS, Workload, draw, make_workload, margin
from engine.report.messages import N_
from engine.serving import inputs as si
from engine.serving.serve import warning_list

DEFAULT_SLO = {"ttft_ms": 2000.0, "tpot_ms": 100.0}  # the example: 2 s and 100 ms
MAX_SLO_MS = 1e9
MAX_EVENTS = 3_000_000  # simulated events per run (about 30 s of CPU); refused above
ID_KEYS = ("model", "hardware", "devices", "tp", "pp", "precision", "kv_precision",
           "peak_precision", "profile")  # fmt: skip


@dataclass(frozen=True)
class Deployment:
    """A checked, folded deployment with its scheduler and KV pool (no workload yet)."""

    scenario: si.Scenario
    scheduler: SchedulerDefaults
    pool: PoolSize
    price_per_hour_usd: float | None = None  # per accelerator (the catalogue's list price)

    @property
    def devices(self) -> int:
        return self.scenario.tp * self.scenario.pp


def scheduler_base(profile: object) -> SchedulerDefaults:
    """The profile's scheduler; vLLM's defaults for a profile without one (or not built-in)."""
    if isinstance(profile, Profile):
        return profile.scheduler or DEFAULT_SCHEDULER
    try:
        found = get_profile(profile)
    except ValueError:  # a custom name with explicit assumptions
        return DEFAULT_SCHEDULER
    return found.scheduler or DEFAULT_SCHEDULER


def deployment(model, hardware, *, tp=1, pp=1, precision="fp16", kv_precision=None,
               profile="tutorial", assumptions=None, catalog=None, scheduler=None,
               **overrides) -> Deployment:  # fmt: skip
    """Check and fold a deployment. `scheduler`: a dict of scheduler overrides
    (engine/catalog/scheduler.py OVERRIDABLE); `overrides`: assumptions by user name."""
    base = scheduler_base(profile)
    if isinstance(profile, Profile):
        assumptions = profile.assumptions if assumptions is None else assumptions
        profile = profile.name
    p = si.scenario(model, hardware, tp, pp, precision, kv_precision, profile, assumptions,
                    catalog, overrides)  # fmt: skip
    sched = with_overrides(base, **(scheduler or {}))
    price = resolve_hardware(hardware, catalog).price_per_hour_usd
    return Deployment(p, sched, pool_size(p.folded, sched.block_size), price)


def check_slo(slo: dict | None) -> dict:
    """SLO thresholds in ms (None: not applied); DEFAULT_SLO for what is not given."""
    out = dict(DEFAULT_SLO)
    for key, value in (slo or {}).items():
        if key not in DEFAULT_SLO:
            raise ValueError(f"unknown SLO {key!r} (known: {', '.join(DEFAULT_SLO)})")
        ok = value is None or (isinstance(value, int | float) and not isinstance(value, bool)
                               and 0 < value <= MAX_SLO_MS)  # fmt: skip
        if not ok:
            raise ValueError(f"slo_{key}: expected a number of ms above 0 (at most "
                             f"{MAX_SLO_MS:g}), got {value!r}"[:200])  # fmt: skip
        out[key] = None if value is None else float(value)
    return out


def _events(requests: int, prompt_tokens: float, max_batched_tokens: int) -> int:
    """A few events per request, plus one per prompt chunk (half a step's token budget)."""
    budget = max(max_batched_tokens // 2, 1)
    return int(4 * requests + 2 * math.ceil(prompt_tokens / budget))


def estimated_events(dep: Deployment, n_in: np.ndarray) -> int:
    """About how many events a run takes: a few per request, plus one per prompt chunk."""
    return _events(len(n_in), float(n_in.sum()), dep.scheduler.max_batched_tokens)


def load_events(requests: int, input_tokens: float, max_batched_tokens: int) -> int:
    """About how many events a run of `requests` requests of `input_tokens` prompt tokens (the
    mean) takes under a step budget of `max_batched_tokens`: the estimate `serve_load` refuses
    a run by (MAX_EVENTS), so a caller can bound its work before running anything."""
    n = check_whole(requests, "requests", high=MAX_REQUESTS)
    budget = check_whole(max_batched_tokens, "max_batched_tokens", high=MAX_BATCHED_TOKENS)
    ok = isinstance(input_tokens, int | float) and not isinstance(input_tokens, bool)
    if not (ok and math.isfinite(input_tokens) and 0 < input_tokens <= MAX_TOKENS):
        raise ValueError(f"input_tokens: expected a mean above 0, at most {MAX_TOKENS:,}")
    return _events(n, n * float(input_tokens), budget)


def load_scheduler(profile: object = "tutorial", **overrides: object) -> SchedulerDefaults:
    """The scheduler a run with `profile` uses (its `[scheduler]` table, vLLM's defaults
    without one) with the `overrides` that are not None (engine/catalog/scheduler.py
    OVERRIDABLE), checked as a run checks them."""
    return with_overrides(scheduler_base(profile), **overrides)


def _check_fit(dep: Deployment, w: Workload, n_in, n_out) -> str | None:
    """Why no request can run (None: they can), or ValueError for an impossible schedule."""
    pool, sched = dep.pool, dep.scheduler
    longest = int((n_in + n_out).max())
    if pool.blocks <= 0:
        return (f"does not fit: the weights ({pool.weight_bytes / 1e9:.1f} GB per device) leave "
                f"no room for a KV cache in {pool.usable_bytes / 1e9:.1f} GB usable")  # fmt: skip
    if pool.need(longest) > pool.blocks:
        return (f"does not fit: the KV pool holds {pool.blocks * pool.block_size:,} tokens, less "
                f"than one request of {longest:,} tokens")  # fmt: skip
    if not sched.chunked_prefill:
        prompt = longest - 1 if sched.kv_policy == "on_demand" else int(n_in.max())
        if prompt > sched.max_batched_tokens:
            raise ValueError(
                f"max_batched_tokens ({sched.max_batched_tokens:,}) is below the longest prompt "
                f"to prefill ({prompt:,} tokens, a recomputed one included) with chunked prefill "
                "off: raise max_batched_tokens or turn chunked prefill on"
            )
    return None


def simulate(dep: Deployment, w: Workload, slo: dict | None = None) -> results.LoadResult:
    """Run workload `w` on deployment `dep` and summarise the measured window."""
    slo = check_slo(slo)
    arrival, n_in, n_out = draw(w)
    events = estimated_events(dep, n_in)
    if events > MAX_EVENTS:
        raise ValueError(
            f"this run would take about {events:,} events (at most {MAX_EVENTS:,}): lower "
            "requests or input_tokens, or raise max_batched_tokens"
        )
    problem = _check_fit(dep, w, n_in, n_out)
    if problem:
        return _result(dep, w, slo, results.empty_metrics(), {}, {}, [problem], fits=False)
    warm = margin(w.requests, w.concurrency)
    sim = Simulator(dep.scenario.folded, dep.scheduler, dep.pool, arrival=arrival, n_in=n_in,
                    n_out=n_out, clients=w.concurrency, warm=warm, drain=warm,
                    max_events=20 * events + 10_000).run()  # fmt: skip
    values, req = results.metrics(sim, dep.pool, dep.devices, slo)
    notes = _run_warnings(dep, w, sim, values, n_in, n_out)
    return _result(dep, w, slo, values, req, results.timeseries(sim, dep.pool), notes, fits=True)


PREEMPTIONS = N_("{count} preemptions: the KV pool filled and requests were recomputed")


def _run_warnings(dep, w, sim, values, n_in, n_out) -> list[str]:
    notes = []
    if dep.scenario.pp > 1:
        notes.append(
            N_(
                "pp > 1: one batch is in flight at a time (no interleaved "
                "micro-batches), so throughput is a lower bound, up to pp times higher"
            )
        )
    if int((n_in + n_out).max()) > dep.scenario.folded.s.context_length:
        notes.append(N_("input + output tokens exceed the model's trained context length"))
    if values["preemptions"]:
        notes.append(PREEMPTIONS.format(count=f"{values['preemptions']:,}"))
    if int(n_out.min()) < 2:
        notes.append(N_("requests with one output token have no TPOT (left out of its statistics)"))
    if w.mode in ("open", "trace") and _queue_grew(sim):
        notes.append(
            N_(
                "the queue grew through the measured window: the arrival rate exceeds "
                "what this deployment sustains, so latencies depend on the run's length"
            )
        )
    return notes


def _queue_grew(sim: Simulator) -> bool:
    """More than a tenth of the measured requests more in the system at t1 than at t0."""
    arrival, done = np.asarray(sim.arrival), np.asarray(sim.t_done)
    done = np.where(np.isfinite(done), done, np.inf)

    def count(t: float) -> int:
        return int(((arrival <= t) & (done > t)).sum())

    measured = max(sim.k - sim.warm - sim.drain, 1)
    return count(sim.t1) - count(sim.t0) > 0.1 * measured


def _result(dep, w, slo, values, req, series, notes, *, fits) -> results.LoadResult:
    p, st = dep.scenario, dep.scenario.setup
    ids = (p.name, p.hw_id, dep.devices, p.tp, p.pp, st.precision, st.kv_precision,
           p.peak_precision, st.profile)  # fmt: skip
    pool = dep.pool
    head = dict(zip(ID_KEYS, ids, strict=True)) | w.as_dict() | {
        "input_tokens": w.input_tokens, "output_tokens": w.output_tokens,
        "slo_ttft_ms": slo["ttft_ms"], "slo_tpot_ms": slo["tpot_ms"],
    }  # fmt: skip
    memory = {
        "kv_pool_blocks": pool.blocks,
        "kv_pool_tokens": pool.blocks * pool.block_size,
        "kv_pool_bytes_per_device": pool.kv_bytes,
        "weight_bytes_per_device": pool.weight_bytes,
        "usable_memory_bytes": pool.usable_bytes,
        "fits_in_memory": fits,
    }
    bits = int(p.folded.static_warnings)
    warnings = warning_list(bits, st.notes) + notes
    return results.LoadResult(head | values | memory, dep.scheduler.as_dict(), dict(p.echo),
                              tuple(warnings), req, series)  # fmt: skip


def serve_load(model, hardware, *, tp=1, pp=1, precision="fp16", kv_precision=None,
               input_tokens=None, output_tokens=None, rate=None, concurrency=None,
               requests=2000, seed=0, profile="tutorial", assumptions=None, catalog=None,
               trace=None, burstiness=1.0, length_spread=0.0, max_num_seqs=None,
               max_batched_tokens=None, chunked_prefill=None, block_size=None, kv_policy=None,
               watermark=None, slo_ttft_ms=DEFAULT_SLO["ttft_ms"],
               slo_tpot_ms=DEFAULT_SLO["tpot_ms"], **overrides) -> results.LoadResult:  # fmt: skip
    """Serve a stream of requests with continuous batching (docs/model.md, "Serving under load").

    Args:
        model, hardware, tp, pp, precision, kv_precision, profile, assumptions, catalog,
            **overrides: the deployment, as `engine.serve` takes it.
        input_tokens, output_tokens: mean lengths (drawn ± `length_spread` when above 0).
        rate: requests/s, open loop (Poisson; gamma gaps when `burstiness` is not 1).
        concurrency: N closed-loop clients, or "max" for a max-throughput run.
        requests, seed: how many requests, and the seed of everything drawn.
        trace: a Trace (engine/load/trace.py) instead of rate/concurrency and lengths.
        max_num_seqs, max_batched_tokens, chunked_prefill, block_size, kv_policy, watermark:
            override the profile's scheduler (engine/catalog/scheduler.py).
        slo_ttft_ms, slo_tpot_ms: per-request SLOs for goodput (None: not applied).
    """
    knobs = {"max_num_seqs": max_num_seqs, "max_batched_tokens": max_batched_tokens,
             "chunked_prefill": chunked_prefill, "block_size": block_size,
             "kv_policy": kv_policy, "watermark": watermark}  # fmt: skip
    w = make_workload(input_tokens=input_tokens, output_tokens=output_tokens, rate=rate,
                      concurrency=concurrency, requests=requests, seed=seed,
                      burstiness=burstiness, length_spread=length_spread, trace=trace)  # fmt: skip
    dep = deployment(model, hardware, tp=tp, pp=pp, precision=precision,
                     kv_precision=kv_precision, profile=profile, assumptions=assumptions,
                     catalog=catalog, scheduler=knobs, **overrides)  # fmt: skip
    return simulate(dep, w, {"ttft_ms": slo_ttft_ms, "tpot_ms": slo_tpot_ms})
