"""`serve_load`: an LLM serving a stream of requests with continuous batching.

`deployment(...)` checks and folds everything a run does not change (the model on TP×PP
accelerators, precision, profile and assumptions as `engine.serve` takes them, the stack's
scheduler from the profile with any overrides, the KV pool); `simulate` runs one workload on
it; `serve_load` does both. Every argument is checked before any work, with the bounds of
engine/load/workload.py and engine/catalog/scheduler.py, and a run whose work bound (`run_work`:
its events and the preemptions it allows) exceeds MAX_EVENTS is refused with its figures and
what to lower. docs/model.md, "Serving under load".
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from engine.catalog.profiles import DEFAULT_PROFILE, Profile, get_profile
from engine.catalog.resolve import resolve_hardware
from engine.catalog.scheduler import (
    DEFAULT_SCHEDULER,
    MAX_BATCHED_TOKENS,
    MAX_NUM_SEQS,
    SchedulerDefaults,
    with_overrides,
)
from engine.checks import MAX_TOKENS, check_whole
from engine.load import results
from engine.load.pool import PoolSize, pool_size
from engine.load.prefix import prefix_cache
from engine.load.simulate import STEADY_WAVES, Simulator, few_waves
from engine.load.speculation import SpecCost, spec_cost, step_pricer
from engine.load.workload import draw
from engine.report.messages import Message, MessageKind
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployment, HardwareRef, ModelRef
from engine.scenarios.service import SLO, Scheduler
from engine.scenarios.workload import MAX_REQUESTS, OpenLoop, Workload, margin
from engine.serving import inputs as si
from engine.serving.kernel import WARNING_KINDS, Warn
from engine.serving.serve import warning_list

EVENT_US = 15.0  # µs of CPU per event: the slowest kind measured (bench/load_events.py)
MAX_EVENTS = 2_000_000  # events per run, refused above: at most about 30 s of CPU
ID_KEYS = (
    "model",
    "hardware",
    "devices",
    "tp",
    "pp",
    "ep",
    "attention_dp",
    "precision",
    "kv_precision",
    "peak_precision",
    "profile",
)


@dataclass(frozen=True)
class Instance:
    """One serving instance: a checked, folded deployment with its scheduler and KV pool (no
    workload yet)."""

    scenario: si.Scenario
    scheduler: SchedulerDefaults
    pool: PoolSize
    price_per_hour_usd: float | None = None  # per accelerator (the catalogue's list price)
    spec: SpecCost | None = None  # speculative decoding and its drafter (None: off)
    ranks_scheduler: SchedulerDefaults | None = None  # over the attention-DP ranks, one stage's

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


def per_replica(sched: SchedulerDefaults, ranks: int, stages: int = 1) -> SchedulerDefaults:
    """The scheduler of a replica that runs `ranks` attention data-parallel ranks, each with the
    stack's scheduler on its own batch (TensorRT-LLM's attention DP, SGLang's DP attention,
    vLLM's data-parallel engines), over `stages` pipeline stages, each with a batch in flight
    under its own token budget: `ranks` × `stages` times the step tokens, and `ranks` times the
    sequences, times `stages` too where the stack bounds each stage's batch
    (`seqs_per_stage`: TensorRT-LLM admits max_batch_size × micro-batches requests; vLLM's V1
    engine keeps one max_num_seqs over its queue of batches), within the engine's limits."""
    if ranks * stages <= 1:
        return sched
    seqs = ranks * (stages if sched.seqs_per_stage else 1)
    return dataclasses.replace(
        sched,
        max_num_seqs=min(sched.max_num_seqs * seqs, MAX_NUM_SEQS),
        max_batched_tokens=min(sched.max_batched_tokens * ranks * stages, MAX_BATCHED_TOKENS),
    )


def instance(dep: Deployment, scheduler: Scheduler | None = None) -> Instance:
    """Fold `dep` and size its KV pool under its profile's scheduler with `scheduler`'s
    overrides (per attention data-parallel rank: `per_replica`)."""
    base = scheduler_base(dep.profile)
    p = si.scenario(dep)
    sched = base if scheduler is None else scheduler.applied_to(base)
    ranks = per_replica(sched, dep.tp if dep.attention_dp else 1)
    sched = per_replica(sched, dep.tp if dep.attention_dp else 1, stages=dep.pp)
    price = resolve_hardware(dep.hardware, dep.catalog).price_per_hour_usd
    return Instance(
        scenario=p,
        scheduler=sched,
        pool=pool_size(p.folded, sched.block_size),
        price_per_hour_usd=price,
        spec=spec_cost(dep),
        ranks_scheduler=ranks,
    )


EDGE_EVENTS = 8  # the measured window's two edges: a run stops before each, one crosses it
PREEMPTION_SLACK = 2.0  # the preemption allowance's margin over its estimate (see below)


@dataclass(frozen=True)
class Work:
    """An upper bound of one run's simulation (docs/model.md, "Serving under load", "The
    work a run takes"): its `events` (the event loop's iterations and one per admission) when
    at most `preemptions` requests are preempted; the simulator refuses a run past either."""

    events: int
    preemptions: int


def preemption_allowance(inst: Instance, n_in: np.ndarray, n_out: np.ndarray, running: int) -> int:
    """The preemptions a run may take: none when they cannot happen (TensorRT-LLM's reserve
    policy, or the `running` longest requests fit the KV pool whole); otherwise PREEMPTION_SLACK
    × min(the running requests' final demand over the pool, a request's final length over the
    shortest prompt − 1, the running requests) per request, plus one per running request (the
    first wave). vLLM admits a request when its prompt fits and preempts the newest when the
    running ones outgrow the pool, so a request is preempted about as often as the pool is
    over-committed, and not more often than its prompt fits in its final length. An estimate,
    not a proof: tests/test_load_work.py measures it against random runs."""
    pool, sched = inst.pool, inst.scheduler
    if sched.kv_policy == "reserve" or pool.blocks <= 0:
        return 0
    lengths = n_in.astype(np.int64) + n_out.astype(np.int64)
    longest = np.sort(lengths)[-running:]
    demand = sum(pool.need(int(t) + 1) for t in longest)  # + 1: the next step's token
    if demand <= pool.blocks:
        return 0  # every request the scheduler may run at once fits: nothing is ever preempted
    over = demand / pool.blocks
    growth = float(lengths.max()) / float(n_in.min()) - 1.0
    per_request = PREEMPTION_SLACK * min(over, growth, float(running))
    return math.ceil(per_request * len(n_in)) + running


def run_work(
    inst: Instance, n_in: np.ndarray, n_out: np.ndarray, *, open_loop: bool, clients: int | None
) -> Work:
    """An upper bound of the simulator's work on these requests (N of them), each term a
    count the event loop cannot exceed (engine/load/simulate.py), given P preemptions:

    - steps with prompt chunks: each completes a prompt (N + P of them) or spends the step's
      whole token budget on prompts, at least B − C + 1 tokens (B max_batched_tokens, C the
      requests running at once, at most max_num_seqs); the prompts total Σ input tokens plus,
      per preemption, the recomputed prompt (at most the longest request less one token);
    - runs of decode steps (priced in closed form, whatever their length): each ends at a
      completion (N), an arrival (open loop: N), a preemption (P, and P stale entries of the
      preempted), a sequence reaching its sliding window (N + P, and P stale), or an edge of
      the measured window (EDGE_EVENTS);
    - open loop: a jump to the next arrival when nothing runs (N);
    - one event per admission (N + P): admitting, the last chunk and the completion are the
      work that grows with the requests rather than the steps.
    """
    sched = inst.scheduler
    n = len(n_in)
    running = min(sched.max_num_seqs, n, clients or n)
    p = preemption_allowance(inst=inst, n_in=n_in, n_out=n_out, running=running)
    arrivals = n if open_loop else 0
    longest = int((n_in + n_out).max())
    prompts = n + p
    if sched.chunked_prefill:  # without it every step with a prompt completes it
        tokens = float(n_in.sum()) + p * (longest - 1)
        prompts += math.ceil(tokens / max(sched.max_batched_tokens - running + 1, 1))
    decode_runs = n + arrivals + 2 * p + EDGE_EVENTS
    if inst.pool.window < math.inf:
        decode_runs += n + 2 * p
    return Work(events=prompts + decode_runs + arrivals + n + p, preemptions=p)


def estimated_events(inst: Instance, w: Workload) -> int:
    """An upper bound of the events simulating `w` on `inst` takes (`run_work`)."""
    arrival, n_in, n_out = draw(w)
    return _work(inst=inst, w=w, arrival=arrival, n_in=n_in, n_out=n_out).events


def _work(inst: Instance, w: Workload, arrival, n_in, n_out) -> Work:
    return run_work(inst, n_in, n_out, open_loop=arrival is not None, clients=w.concurrency)


def _legacy_events(requests: int, input_tokens: float, max_batched_tokens: int) -> int:
    """The older estimate from three figures: four events per request and two per prompt
    chunk of half the budget (neither decode runs nor preemptions: below the upper bound)."""
    n = check_whole(requests, "requests", high=MAX_REQUESTS)
    budget = check_whole(max_batched_tokens, "max_batched_tokens", high=MAX_BATCHED_TOKENS)
    ok = isinstance(input_tokens, int | float) and not isinstance(input_tokens, bool)
    if not (ok and math.isfinite(input_tokens) and 0 < input_tokens <= MAX_TOKENS):
        raise ValueError(f"input_tokens: expected a mean above 0, at most {MAX_TOKENS:,}")
    half = max(budget // 2, 1)
    return int(4 * n + 2 * math.ceil(n * float(input_tokens) / half))


def load_events(
    deployment: Deployment | ModelRef | int | None = None,
    workload: Workload | HardwareRef | float | None = None,
    /,
    scheduler: Scheduler | int | None = None,
    **fields: object,
) -> int:
    """An upper bound of the events `serve_load` with the same arguments simulates, the figure
    it refuses a run by (MAX_EVENTS), so a caller can bound its work before running anything
    (`run_work`; about EVENT_US microseconds of CPU each on the machine measured).

    Takes what `serve_load` takes (a Deployment and a Workload, or the keyword form), the
    arrivals included (a trace counts its own requests). The older form
    `load_events(requests, input_tokens, max_batched_tokens)` still answers with the older
    estimate (four events per request and the prompt chunks: no decode runs or preemptions).
    """
    if isinstance(deployment, int | np.integer) and not isinstance(deployment, bool):
        return _legacy_events(int(deployment), workload, scheduler)
    given = {"scheduler": scheduler, **fields}
    dep, w, sched = bind((deployment, workload), given, Deployment, Workload, Scheduler)
    if w is None:
        raise ValueError("Workload: give input_tokens, output_tokens")
    check_arrivals(w)
    return estimated_events(instance(dep, sched), w)


def load_scheduler(profile: object = DEFAULT_PROFILE, **overrides: object) -> SchedulerDefaults:
    """The scheduler a run with `profile` uses (its `[scheduler]` table, vLLM's defaults
    without one) with the `overrides` that are not None (engine/catalog/scheduler.py
    OVERRIDABLE), checked as a run checks them."""
    return with_overrides(scheduler_base(profile), **overrides)


NO_KV_ROOM = MessageKind(
    "no_kv_room",
    "does not fit: the weights ({weights} GB per device) leave no room for a KV cache in "
    "{usable} GB usable",
)
POOL_BELOW_ONE_REQUEST = MessageKind(
    "kv_pool_below_one_request",
    "does not fit: the KV pool holds {tokens} tokens, less than one request of {longest} tokens",
)


def check_arrivals(w: Workload) -> None:
    """A run needs its arrivals, and open-loop ones their rate."""
    if isinstance(w.arrivals, OpenLoop) and w.arrivals.rate_per_s is None:
        raise ValueError(
            "give exactly one of rate (requests/s, open loop), concurrency (clients, or 'max' "
            "for a max-throughput run) or trace; got none"
        )


def _check_fit(inst: Instance, w: Workload, n_in, n_out) -> Message | None:
    """Why no request can run (None: they can), or ValueError for an impossible schedule."""
    pool, sched = inst.pool, inst.scheduler
    longest = int((n_in + n_out).max())
    if pool.blocks <= 0:
        return NO_KV_ROOM(
            weights=f"{pool.weight_bytes / 1e9:.1f}", usable=f"{pool.usable_bytes / 1e9:.1f}"
        )
    if pool.need(longest) > pool.blocks:
        return POOL_BELOW_ONE_REQUEST(
            tokens=f"{pool.blocks * pool.block_size:,}", longest=f"{longest:,}"
        )
    if not sched.chunked_prefill:
        prompt = longest - 1 if sched.kv_policy == "on_demand" else int(n_in.max())
        if prompt > sched.max_batched_tokens:
            raise ValueError(
                f"max_batched_tokens ({sched.max_batched_tokens:,}) is below the longest prompt "
                f"to prefill ({prompt:,} tokens, a recomputed one included) with chunked prefill "
                "off: raise max_batched_tokens or turn chunked prefill on"
            )
    return None


def too_many_events(work: Work) -> str:
    """The refusal of a run over MAX_EVENTS, with its figures and what to lower."""
    said = f"{work.preemptions:,} preemptions allowed" if work.preemptions else "no preemption"
    return (
        f"this run would take up to {work.events:,} events ({said}; about "
        f"{work.events * EVENT_US / 1e6:,.0f} s of CPU), more than {MAX_EVENTS:,} (about "
        f"{MAX_EVENTS * EVENT_US / 1e6:,.0f} s): lower requests or input_tokens (or "
        "output_tokens, or max_num_seqs), or raise max_batched_tokens"
    )


def simulate(inst: Instance, w: Workload, slo: SLO, recorder=None) -> results.LoadResult:
    """Run workload `w` on instance `inst` and summarise the measured window (`recorder`: an
    engine/load/trace_export.py StepRecorder told of every step, or None)."""
    check_arrivals(w)
    arrival, n_in, n_out = draw(w)
    work = _work(inst=inst, w=w, arrival=arrival, n_in=n_in, n_out=n_out)
    if work.events > MAX_EVENTS:
        raise ValueError(too_many_events(work))
    problem = _check_fit(inst=inst, w=w, n_in=n_in, n_out=n_out)
    if problem:
        return _result(
            inst=inst,
            w=w,
            slo=slo,
            values=results.empty_metrics(),
            req={},
            series={},
            notes=[problem],
            fits=False,
        )
    warm = margin(w.requests, w.concurrency)
    sim = Simulator(
        inst.scenario.folded,
        inst.scheduler,
        inst.pool,
        arrival_s=arrival,
        input_tokens=n_in,
        output_tokens=n_out,
        clients=w.concurrency,
        warmup=warm,
        drain=warm,
        max_events=work.events,
        max_preemptions=work.preemptions,
        pricer=step_pricer(inst.scenario.folded, inst.scheduler.max_running, inst.spec),
        prefix=prefix_cache(w, n_in=n_in, n_out=n_out, pool=inst.pool),
        recorder=recorder,
    ).run()
    values, req = results.metrics(sim=sim, pool=inst.pool, devices=inst.devices, slo=slo)
    notes = _run_warnings(inst=inst, w=w, sim=sim, values=values, n_in=n_in, n_out=n_out)
    return _result(
        inst=inst,
        w=w,
        slo=slo,
        values=values,
        req=req,
        series=results.timeseries(sim, inst.pool),
        notes=notes,
        fits=True,
    )


PP_IN_FLIGHT = MessageKind(
    "pp_batches_in_flight",
    "pp = {pp}: {pp} batches are in flight, one on each stage, each with its own token budget, "
    "so the replica runs up to {seqs} sequences and {tokens} tokens a step; a step lasts as "
    "long as one batch takes to pass every stage",
)
PREEMPTIONS = MessageKind(
    "preemptions", "{count} preemptions: the KV pool filled and requests were recomputed"
)
NO_TPOT = MessageKind(
    "one_token_requests_no_tpot",
    "requests with one output token have no TPOT (left out of its statistics)",
)
QUEUE_GREW = MessageKind(
    "queue_grew",
    "the queue grew through the measured window: the arrival rate exceeds what this "
    "deployment sustains, so latencies depend on the run's length",
)
RANK_SCHEDULERS = MessageKind(
    "attention_dp_schedulers",
    "attention DP: each of the {ranks} ranks schedules its own batch, so the replica runs up "
    "to {seqs} sequences and {tokens} tokens a step ({ranks} times the stack's per-rank limits)",
)
FEW_WAVES = MessageKind(
    "max_throughput_few_waves",
    "max throughput: up to {running} requests ran at once, so {requests} requests are fewer "
    "than three such waves and the run has no steady state: it is measured from its start "
    "({window} s); simulate at least {need} requests for the steady state",
)
KINDS = (
    NO_KV_ROOM,
    POOL_BELOW_ONE_REQUEST,
    PP_IN_FLIGHT,
    PREEMPTIONS,
    NO_TPOT,
    QUEUE_GREW,
    RANK_SCHEDULERS,
    FEW_WAVES,
)


def _limits_text(sched: SchedulerDefaults) -> dict[str, str]:
    return {"seqs": f"{sched.max_num_seqs:,}", "tokens": f"{sched.max_batched_tokens:,}"}


def _run_warnings(inst, w, sim, values, n_in, n_out) -> list[Message]:
    notes = []
    if inst.scenario.split.attention_dp and inst.ranks_scheduler is not None:
        ranks = f"{inst.scenario.tp}"  # one stage's batches, over the ranks
        notes.append(RANK_SCHEDULERS(ranks=ranks, **_limits_text(inst.ranks_scheduler)))
    if inst.scenario.pp > 1:  # the replica's: every stage's batch
        notes.append(PP_IN_FLIGHT(pp=f"{inst.scenario.pp}", **_limits_text(inst.scheduler)))
    if int((n_in + n_out).max()) > inst.scenario.folded.s.context_length:
        notes.append(WARNING_KINDS[Warn.BEYOND_CONTEXT]())  # the serving model's words
    if values["preemptions"]:
        notes.append(PREEMPTIONS(count=f"{values['preemptions']:,}"))
    if int(n_out.min()) < 2:
        notes.append(NO_TPOT())
    if w.mode in ("open", "trace") and results.queue_grew(sim):
        notes.append(QUEUE_GREW())
    running = int(values["max_running_requests"])  # the series' maximum, as the simulator's
    if w.mode == "max" and few_waves(running, w.requests):  # measured from the run's start
        need = STEADY_WAVES * running + 1
        window = f"{values['measured_window_s']:.3g}"
        notes.append(
            FEW_WAVES(
                running=f"{running:,}", requests=f"{w.requests:,}", window=window, need=f"{need:,}"
            )
        )
    return notes


def _result(inst, w, slo, values, req, series, notes, *, fits) -> results.LoadResult:
    p, st = inst.scenario, inst.scenario.setup
    ids = (
        p.name,
        p.hw_id,
        inst.devices,
        p.tp,
        p.pp,
        p.split.ep,
        p.split.attention_dp,
        st.precision,
        st.kv_precision,
        p.peak_precision,
        st.profile,
    )
    pool = inst.pool
    head = (
        dict(zip(ID_KEYS, ids, strict=True))
        | w.as_dict()
        | {
            "input_tokens": w.input_tokens,
            "output_tokens": w.output_tokens,
            "slo_ttft_ms": slo.ttft_ms,
            "slo_tpot_ms": slo.tpot_ms,
        }
        | spec_settings(inst)
    )
    memory = {
        "kv_transfer_ms_mean": 0.0,  # one replica: no KV crosses a link (engine/load/disagg.py)
        "kv_pool_blocks": pool.blocks,
        "kv_pool_tokens": pool.blocks * pool.block_size,
        "kv_pool_bytes_per_device": pool.kv_bytes,
        "weight_bytes_per_device": pool.weight_bytes,
        "usable_memory_bytes": pool.usable_bytes,
        "fits_in_memory": fits,
    }
    bits = int(p.folded.static_warnings)
    warnings = warning_list(bits, st.notes) + notes
    return results.LoadResult(
        values=head | values | memory,
        scheduler=inst.scheduler.as_dict(),
        assumptions=dict(p.echo),
        warnings=tuple(warnings),
        per_request=req,
        timeseries=series,
    )


def spec_settings(inst: Instance) -> dict[str, object]:
    """The speculation a run used, and its mean accepted tokens per pass (None: off)."""
    spec = inst.spec.speculation if inst.spec is not None else None
    if spec is None:
        keys = ("spec_method", "spec_tokens", "spec_acceptance", "draft_model")
        return dict.fromkeys(keys) | {"spec_accepted_tokens_mean": None}
    return spec.as_dict() | {"spec_accepted_tokens_mean": spec.mean_accepted}


def serve_load(
    deployment: Deployment | ModelRef | None = None,
    workload: Workload | HardwareRef | None = None,
    /,
    scheduler: Scheduler | None = None,
    slo: SLO | None = None,
    **fields: object,
) -> results.LoadResult:
    """Serve a stream of requests with continuous batching (docs/model.md, "Serving under load").

    Args:
        deployment: a Deployment, or (the keyword form) the model, with the accelerator second
            and the Deployment's other fields as keywords, as `engine.serve` takes them
            (`engine.serve_load` also takes a fleet: engine/load/disagg.py).
        workload: a Workload (engine/scenarios/workload.py), or its fields as keywords:
            input_tokens, output_tokens (means, drawn ± `length_spread` when above 0), the
            arrivals as `rate` (requests/s, open loop: Poisson, or gamma gaps when
            `burstiness` is not 1), `concurrency` (N closed-loop clients, or "max" for a
            max-throughput run) or `trace` (a Trace: its arrivals and lengths), `requests`
            and `seed` (of everything drawn).
        scheduler: a Scheduler, or its settings as keywords (max_num_seqs, max_batched_tokens,
            chunked_prefill, block_size, kv_policy, watermark): overrides of the profile's.
        slo: an SLO, or `slo_ttft_ms`/`slo_tpot_ms` (None: not applied): the per-request
            limits goodput counts against.
    """
    given = {"scheduler": scheduler, "slo": slo, **fields}
    dep, w, sched, slo = bind((deployment, workload), given, Deployment, Workload, Scheduler, SLO)
    if w is None:
        raise ValueError("Workload: give input_tokens, output_tokens")
    return simulate(instance(dep, sched), w, slo or SLO())
