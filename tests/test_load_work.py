"""What a page needs to bound its work before it simulates: the scheduler a run uses and an upper
bound of the events a run (or a max-rate search) takes, the figure `serve_load` refuses a run
by (engine/load/api.py `run_work`; docs/model.md, "The work a run takes").

The bound counts the event loop's iterations (steps with prompt chunks, runs of decode steps,
jumps to the next arrival) and one event per admission, given the preemptions it allows; the
simulator refuses a run past either, so no run takes more than its bound. Hypothesis draws
small random runs and checks both against the simulator's own counts."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_serving_operators import TOY, TOY_HW

import engine
from engine.catalog.scheduler import SchedulerDefaults
from engine.load.api import EVENT_US, MAX_EVENTS, instance, run_work
from engine.load.simulate import Simulator
from engine.scenarios.deployment import Deployment

HEAVY = {"model": "Llama-3.1-8B", "hardware": "H100", "tp": 1, "profile": "tutorial"}
HEAVY |= {"concurrency": "max", "input_tokens": 1, "output_tokens": 99_999, "requests": 54_000}


def test_the_scheduler_is_the_profiles_with_the_overrides_checked():
    trt = engine.load_scheduler("trtllm")
    assert trt == engine.get_profile("trtllm").scheduler
    assert (trt.max_num_seqs, trt.max_batched_tokens, trt.chunked_prefill) == (2048, 8192, False)
    edited = engine.load_scheduler("trtllm", max_num_seqs=64, chunked_prefill=True)
    assert (edited.max_num_seqs, edited.chunked_prefill, edited.block_size) == (64, True, 32)
    assert engine.load_scheduler("trtllm", max_num_seqs=None) == trt  # None: the profile's
    # a sequence limit above the token budget is allowed (TensorRT-LLM deployments run
    # max_num_tokens below max_batch_size); the budget then caps the running batch
    wide = engine.load_scheduler("tutorial", max_num_seqs=4096)  # its budget: 2,048 tokens
    assert (wide.max_num_seqs, wide.max_running) == (4096, 2048)


def test_a_run_reports_the_scheduler_load_scheduler_gives():
    r = engine.serve_load(
        "Llama-3.1-8B",
        "H100",
        input_tokens=256,
        output_tokens=32,
        rate=2.0,
        requests=60,
        profile="trtllm",
        max_num_seqs=16,
    )
    assert r.scheduler == engine.load_scheduler("trtllm", max_num_seqs=16).as_dict()


def toy_instance(sched: SchedulerDefaults, blocks: int):
    """The toy model (tests/test_serving_operators.py) on a pool of `blocks` blocks."""
    hw = replace(TOY_HW, id="small", memory_capacity_bytes=3408.0 + blocks * 32 * sched.block_size)
    inst = instance(Deployment(TOY, hw, overrides={"memory_reserve": 0.0}))
    pool = replace(inst.pool, blocks=blocks, block_size=sched.block_size)
    return replace(inst, scheduler=sched, pool=pool)


def test_the_bound_by_hand():
    # 10 requests of 100 + 10 tokens, open loop; max_num_seqs 4, a 64-token budget, chunked
    # prefill; TensorRT-LLM's reserve policy: no preemption.
    #   steps with prompt chunks: 10 completing a prompt + ⌈1000 / (64 − 4 + 1)⌉ = 17 others
    #   runs of decode steps: 10 completions + 10 arrivals + 8 at the window's edges
    #   jumps to the next arrival: 10; admissions: 10          total 27 + 28 + 10 + 10 = 75
    sched = SchedulerDefaults(max_num_seqs=4, max_batched_tokens=64, kv_policy="reserve")
    n_in, n_out = np.full(10, 100), np.full(10, 10)
    work = run_work(toy_instance(sched, 400), n_in, n_out, open_loop=True, clients=None)
    assert (work.events, work.preemptions) == (75, 0)
    # closed loop, 2 clients: no arrivals to jump to, at most 2 running: ⌈1000 / 63⌉ = 16
    work = run_work(toy_instance(sched, 400), n_in, n_out, open_loop=False, clients=2)
    assert work.events == (10 + 16) + (10 + 8) + 10


def test_preemptions_are_allowed_only_when_the_pool_can_overflow():
    sched = SchedulerDefaults(max_num_seqs=4, max_batched_tokens=64, block_size=1)
    n_in, n_out = np.full(10, 20), np.full(10, 10)
    # 4 running requests of 30 tokens (+1 for the next step's) need 124 blocks
    assert (
        run_work(toy_instance(sched, 124), n_in, n_out, open_loop=False, clients=None).preemptions
        == 0
    )
    # on 62 blocks they need twice the pool: 2 × min(2, 30/20 − 1, 4) = 1 per request, + 4
    work = run_work(toy_instance(sched, 62), n_in, n_out, open_loop=False, clients=None)
    assert work.preemptions == 10 * 1 + 4
    reserve = replace(sched, kv_policy="reserve")  # whole requests reserved: never preempted
    assert (
        run_work(toy_instance(reserve, 62), n_in, n_out, open_loop=False, clients=None).preemptions
        == 0
    )


SCHEDULERS = st.builds(
    SchedulerDefaults,
    max_num_seqs=st.integers(1, 8),
    max_batched_tokens=st.integers(8, 400),
    chunked_prefill=st.booleans(),
    block_size=st.sampled_from([1, 4, 16]),
    kv_policy=st.sampled_from(["on_demand", "reserve"]),
    watermark=st.sampled_from([0.0, 0.01, 0.05]),
)


@settings(max_examples=150, deadline=None)
@given(
    sched=SCHEDULERS,
    n=st.integers(1, 40),
    seed=st.integers(0, 10**6),
    rate=st.one_of(st.floats(1e2, 1e6), st.none()),
    clients=st.one_of(st.none(), st.integers(1, 6)),
    blocks=st.integers(10, 400),
    longest=st.tuples(st.integers(1, 200), st.integers(1, 200)),
)
def test_the_bound_holds_on_random_small_runs(sched, n, seed, rate, clients, blocks, longest):
    if sched.max_batched_tokens < sched.max_num_seqs:
        return  # refused by the scheduler's own check
    rng = np.random.default_rng(seed)
    n_in, n_out = rng.integers(1, longest[0] + 1, n), rng.integers(1, longest[1] + 1, n)
    if not sched.chunked_prefill and int((n_in + n_out).max()) > sched.max_batched_tokens:
        return  # refused by serve_load before any work
    inst = toy_instance(sched, blocks)
    if inst.pool.need(int((n_in + n_out).max())) + sched.watermark * blocks + 1 > blocks:
        return  # one request fills the pool: refused, or never admitted past the watermark
    clients = None if rate is not None or (clients and n < 2 * clients + 1) else clients
    arrival = None if rate is None else np.cumsum(rng.exponential(1 / rate, n)) - 1 / rate
    work = run_work(inst, n_in, n_out, open_loop=arrival is not None, clients=clients)
    sim = Simulator(
        inst.scenario.folded,
        sched,
        inst.pool,
        arrival_s=arrival,
        input_tokens=n_in,
        output_tokens=n_out,
        clients=clients,
        warmup=0,
        drain=0,
        max_events=10**7,  # unbounded here: the bound is what is tested
    ).run()
    assert sim.preemptions <= work.preemptions
    assert sim.events + n + sim.preemptions <= work.events  # iterations and admissions


@pytest.mark.parametrize(
    "kw",
    [
        # preempting hard: short prompts growing far past what the pool holds at once
        {"tp": 2, "model": "Llama-3.1-70B", "input_tokens": 100, "output_tokens": 4000},
        {"input_tokens": 1, "output_tokens": 20_000, "requests": 300},
        {"model": "Gemma-2-9B", "input_tokens": 100, "output_tokens": 6000},  # sliding window
        {"input_tokens": 8000, "output_tokens": 8000, "length_spread": 0.5},
        {"profile": "trtllm", "input_tokens": 16, "output_tokens": 2, "requests": 20_000},
    ],
)
def test_the_bound_holds_on_real_models_preempting_hard(kw, monkeypatch):
    kw = HEAVY | {"requests": 500} | kw
    runs = []
    run = Simulator.run
    monkeypatch.setattr(Simulator, "run", lambda self: runs.append(run(self)) or runs[-1])
    bound = engine.load_events(**kw)
    engine.serve_load(**kw)
    (sim,) = runs
    assert sim.events + sim.requests.count + sim.preemptions <= bound
    assert sim.preemptions <= sim.max_preemptions


def test_serve_load_refuses_by_the_bound_with_its_figures_and_quickly():
    bound = engine.load_events(**HEAVY)
    assert bound > MAX_EVENTS  # 54,000 requests of 99,999 tokens: preempted over and over
    start = time.process_time()
    with pytest.raises(ValueError, match=f"up to {bound:,} events") as info:
        engine.serve_load(**HEAVY)
    assert time.process_time() - start < 5  # refused before any step (it took 44-46 s)
    said = str(info.value)
    assert f"about {bound * EVENT_US / 1e6:,.0f} s of CPU" in said
    assert f"more than {MAX_EVENTS:,}" in said and "preemptions allowed" in said
    assert "lower requests or input_tokens (or output_tokens" in said


def test_a_run_past_its_preemption_allowance_is_refused_saying_so():
    sched = SchedulerDefaults(max_num_seqs=4, max_batched_tokens=64, block_size=1, watermark=0.05)
    inst = toy_instance(sched, 62)
    n_in, n_out = np.full(10, 5), np.full(10, 25)  # 4 prompts of 5 admitted, growing to 30
    sim = Simulator(
        inst.scenario.folded,
        sched,
        inst.pool,
        arrival_s=None,
        input_tokens=n_in,
        output_tokens=n_out,
        clients=None,
        warmup=0,
        drain=0,
        max_events=10_000,
    ).run()
    assert sim.preemptions > 1  # it preempts ...
    with pytest.raises(ValueError, match="the KV pool thrashes: more than 1 preemptions"):
        Simulator(  # ... more than an allowance of one
            inst.scenario.folded,
            sched,
            inst.pool,
            arrival_s=None,
            input_tokens=n_in,
            output_tokens=n_out,
            clients=None,
            warmup=0,
            drain=0,
            max_events=10_000,
            max_preemptions=1,
        ).run()


def test_the_typed_bound_counts_a_trace_and_a_search():
    d = engine.Deployment("Llama-3.1-8B", "H100", profile="tutorial")
    rows = "\n".join(["arrival_s,input_tokens,output_tokens"] + ["0,1,99999"] * 70_000)
    trace = engine.parse_trace(rows.encode())
    replay = engine.Workload(arrivals=engine.Replay(trace))
    assert engine.load_events(d, replay) > MAX_EVENTS  # the 70,000-row trace: refused
    w = engine.Workload(
        input_tokens=512, output_tokens=128, arrivals=engine.OpenLoop(2.0), requests=1000
    )
    one = engine.load_events(d, w)
    longer = engine.load_events(d, replace(w, requests=6000))
    # at most 14 bisection runs of its requests, then 5 rounds of 3 seeds' runs 6 times as long
    assert engine.max_rate_events(d, w) == 14 * one + 5 * 3 * longer
    assert engine.max_rate_events(d, w, confirm_seeds=0) == 14 * one  # no confirmation
    two = engine.load_events(d, replace(w, requests=2000))
    assert (
        engine.max_rate_events(d, w, confirm_seeds=1, confirm_requests=2000) == 14 * one + 5 * two
    )
    kw = {"input_tokens": 512, "output_tokens": 128, "profile": "tutorial"}
    # 1,000 requests each by default
    assert engine.max_rate_events("Llama-3.1-8B", "H100", **kw) == 14 * one + 5 * 3 * longer
    assert engine.load_events("Llama-3.1-8B", "H100", rate=2.0, requests=1000, **kw) == one


def test_the_older_three_figure_form_still_answers_as_before():
    # four events per request and two per prompt chunk of half the budget (no decode runs,
    # no preemptions): kept for callers that know only these figures
    events = engine.load_events(100_000, 100_000, 2048)
    assert events == 4 * 100_000 + 2 * -(-100_000 * 100_000 // 1024)
    base = engine.load_events(1000, 1500, 2048)
    assert engine.load_events(2000, 1500, 2048) > base
    assert engine.load_events(1000, 6000, 2048) > base
    assert engine.load_events(1000, 1500, 8192) < base
    longer = engine.load_events(6000, 1500, 2048)
    # at most 14 runs of 1,000, then 5 rounds of 3 confirmation runs of 6,000
    assert engine.max_rate_events(1500, 2048) == 14 * base + 5 * 3 * longer


@pytest.mark.parametrize(
    ("args", "word"),
    [((0, 10, 2048), "requests"), ((10, 0, 2048), "input_tokens"), ((10, 10, 0), "max_batched")],
)
def test_the_estimate_checks_its_arguments(args, word):
    with pytest.raises(ValueError, match=word):
        engine.load_events(*args)
