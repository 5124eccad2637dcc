"""The continuous-batching simulator (engine/load): hand-computed toy runs, the KV pool and its
block counts, preemption and admission policies, workloads and traces, and hypothesis
properties (determinism by seed, conservation of requests and tokens, latency bounds)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_serving_operators import TOY, TOY_HW

from engine import TUTORIAL_PROFILE, parse_trace, serve, serve_load
from engine.catalog.scheduler import SchedulerDefaults
from engine.load.api import instance
from engine.load.pool import BlockCounter, last_fitting
from engine.load.requests import DONE
from engine.load.simulate import Simulator
from engine.load.workload import draw
from engine.scenarios.deployment import Deployment
from engine.scenarios.trace import MAX_TRACE_ROWS, TraceError, trace_from_arrays
from engine.scenarios.workload import Workload

# Toy steps by hand (tests/test_serving_operators.py's toy: 2 layers, every operator
# memory-bound at 1 GB/s, 2 layers · 10 µs of overhead per step). Bytes per operator for T new
# tokens from B sequences:
#   norms 4·(16 + 32·T); qkv 2·(256 + 48·T); o_proj 2·(128 + 32·T); mlp 2·(768 + 160·T);
#   embedding 32·T; final norm 16 + 32·T; lm_head 512 + 80·B (the sequences producing a token);
#   attention: prefill 2·64 per prompt token, decode 2·(48 + 16·context) per sequence.
TOY_PREFILL_9 = 30.176e-6  # T = 9: 1216+1376+1152+832+4416+288+304+592 = 10176 B + 20 µs
TOY_PREFILL_2X9 = 37.456e-6  # T = 18, 2 prompts: 2368+2240+2304+1408+7296+576+592+672 = 17456 B
TOY_DECODE_2_AT_10 = 25.232e-6  # B = 2 at context 10: 320+704+832+384+2176+64+80+672 = 5232 B
TOY_DECODE_1 = (24.064e-6, 24.096e-6)  # B = 1 at contexts 10, 11: 4064 B, then 32 B more


def toy(**kw):
    # the toy's figures are by hand with the tutorial profile (10 µs per layer, full bandwidth,
    # 0.9 of the memory) and its vLLM scheduler (blocks of 16, 2048 tokens a step)
    return serve_load(TOY, TOY_HW, **({"input_tokens": 9, "profile": TUTORIAL_PROFILE} | kw))


def test_toy_one_request_at_a_time_by_hand():
    # one client: each request runs alone; the measured one (the second) prefills its 9 tokens
    # in one step, then decodes at contexts 10 and 11
    r = toy(output_tokens=3, concurrency=1, requests=3)
    assert r["requests_measured"] == 1
    assert r["ttft_ms_mean"] == pytest.approx(TOY_PREFILL_9 * 1e3)
    assert r["tpot_ms_mean"] == pytest.approx(sum(TOY_DECODE_1) / 2 * 1e3)
    assert r["e2e_latency_ms_mean"] == pytest.approx((TOY_PREFILL_9 + sum(TOY_DECODE_1)) * 1e3)
    assert r["queueing_ms_mean"] == 0  # it arrives as its predecessor finishes, at a step end
    s = serve(TOY, TOY_HW, input_tokens=9, output_tokens=3, profile=TUTORIAL_PROFILE)
    assert r["ttft_ms_mean"] == pytest.approx(s["ttft_ms"])  # and so does the serving model
    assert r["tpot_ms_mean"] == pytest.approx(s["tpot_ms"])


def test_toy_two_requests_share_their_steps_by_hand():
    # max throughput, 2 requests: one step prefills both prompts, one step decodes both
    r = toy(output_tokens=2, concurrency="max", requests=2)
    assert r["requests_measured"] == 2
    assert r["ttft_ms_p99"] == pytest.approx(TOY_PREFILL_2X9 * 1e3)
    assert r["tpot_ms_p50"] == pytest.approx(TOY_DECODE_2_AT_10 * 1e3)
    assert r["e2e_latency_ms_mean"] == pytest.approx((TOY_PREFILL_2X9 + TOY_DECODE_2_AT_10) * 1e3)
    # with chunked prefill off the scheduler still puts both whole prompts in one step
    off = toy(output_tokens=2, concurrency="max", requests=2, chunked_prefill=False)
    assert off["ttft_ms_mean"] == pytest.approx(r["ttft_ms_mean"])


def test_toy_kv_pool_size_by_hand():
    # usable 0.9 GB less 3408 B of weights, in blocks of 16 tokens · 2 layers · 16 B = 512 B:
    # ⌊899,996,592 / 512⌋ = 1,757,805 blocks
    r = toy(output_tokens=2, concurrency=1, requests=3)
    assert r["kv_pool_blocks"] == 1_757_805
    assert r["kv_pool_tokens"] == 1_757_805 * 16
    assert r["weight_bytes_per_device"] == 3408
    assert r["fits_in_memory"]


def tiny(**kw):
    """The toy on a device with room for exactly 10 blocks: 3408 B of weights + 10 · 512 B
    (the tutorial profile's pool rule and blocks of 16 tokens)."""
    hw = replace(TOY_HW, id="tiny", memory_capacity_bytes=3408.0 + 10 * 512)
    return serve_load(
        TOY,
        hw,
        profile=TUTORIAL_PROFILE,
        input_tokens=16,
        output_tokens=40,
        concurrency="max",
        requests=3,
        memory_reserve=0.0,
        watermark=0.0,
        **kw,
    )


def test_preemption_by_recompute_by_hand():
    # Three prompts of 16 tokens (a block each) start together. Decoding, each cache takes a
    # 2nd block at 17 tokens, a 3rd at 33, a 4th at 49: 3 · 4 = 12 > 10, so the newest is
    # preempted (its 3 blocks freed) and the two others go on to 4 blocks (8 ≤ 10) and finish.
    # Then it recomputes its 16 + 33 tokens (4 blocks) and produces its last 7 tokens.
    r = tiny()
    assert r["kv_pool_blocks"] == 10
    assert r["preemptions"] == 1
    e2e = r.per_request["e2e_latency_s"]
    ttft = r.per_request["ttft_s"]
    assert e2e[2] > e2e[0] == pytest.approx(e2e[1])
    assert ttft[2] == pytest.approx(ttft[0])  # its first token came before the preemption
    (said,) = [w for w in r.warnings if w.code == "preemptions"]
    assert str(said) == "1 preemptions: the KV pool filled and requests were recomputed"


def test_the_reserve_policy_admits_whole_requests_and_never_preempts():
    # TensorRT-LLM's GUARANTEED_NO_EVICT: each request reserves ⌈(16 + 40)/16⌉ = 4 blocks, so
    # two run (8 ≤ 10) and the third waits for the first to finish.
    r = tiny(kv_policy="reserve")
    assert r["preemptions"] == 0
    q, e2e = r.per_request["queueing_s"], r.per_request["e2e_latency_s"]
    assert q[0] == q[1] == 0 and q[2] == pytest.approx(e2e[0])


def test_block_counter_equals_the_per_sequence_sum():
    rng = np.random.default_rng(3)
    for b in (1, 2, 16, 32):
        counter, bases = BlockCounter(b), rng.integers(-500, 500, size=40).tolist()
        for cb in bases:
            counter.add(cb)
        counter.remove(bases.pop())
        for step in range(600, 700):
            assert counter.blocks(step) == sum(math.ceil((cb + step) / b) for cb in bases)


def test_last_fitting_finds_the_most_steps():
    used = [0, 1, 1, 2, 3, 5, 8, 13]
    assert last_fitting(used=lambda k: used[k], start=0, steps=7, limit=5) == 5
    assert last_fitting(used=lambda k: used[k], start=0, steps=7, limit=100) == 7
    assert last_fitting(used=lambda k: used[k], start=1, steps=6, limit=0.5) == 0


def test_workloads_are_drawn_as_documented():
    w = Workload.of(input_tokens=1000, output_tokens=200, rate=4.0, requests=20_000, seed=1)
    arrival, n_in, n_out = draw(w)
    assert arrival[0] == 0 and np.all(np.diff(arrival) >= 0)
    assert 1 / np.diff(arrival).mean() == pytest.approx(4.0, rel=0.03)  # Poisson at 4/s
    assert set(n_in) == {1000} and set(n_out) == {200}
    w = Workload.of(
        input_tokens=1000,
        output_tokens=200,
        rate=4.0,
        requests=20_000,
        seed=1,
        burstiness=0.25,
        length_spread=0.5,
    )
    arrival, n_in, n_out = draw(w)
    gaps = np.diff(arrival)
    assert gaps.std() / gaps.mean() == pytest.approx(2.0, rel=0.1)  # CV = 1/√0.25
    assert (n_in.min(), n_in.max()) == (500, 1500)  # ⌊1000·0.5⌋ … ⌈1000·1.5⌉
    assert n_in.mean() == pytest.approx(1000, rel=0.02)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"rate": 1.0, "concurrency": 2}, "exactly one of"),
        ({}, "exactly one of"),
        ({"rate": -1.0}, "rate"),
        ({"rate": math.nan}, "rate"),
        ({"rate": 1.0, "requests": 0}, "requests: expected a whole number from 1 to 100,000"),
        ({"concurrency": 0}, "concurrency: expected a whole number"),
        ({"concurrency": 30, "requests": 50}, "give at least 61 requests"),
        ({"rate": 1.0, "burstiness": 0.0}, "burstiness"),
        ({"rate": 1.0, "length_spread": 1.0}, "length_spread"),
        ({"rate": 1.0, "seed": -1}, "seed"),
    ],
)
def test_bad_workloads_are_refused_before_any_work(kw, message):
    with pytest.raises(ValueError, match=message):
        Workload.of(input_tokens=100, output_tokens=10, **kw)


def test_bad_scheduler_settings_are_refused():
    with pytest.raises(ValueError, match="max_num_seqs: expected a whole number from 1 to 16,384"):
        toy(output_tokens=2, rate=1.0, max_num_seqs=0)
    with pytest.raises(ValueError, match="kv_policy must be one of"):
        toy(output_tokens=2, rate=1.0, kv_policy="lru")
    with pytest.raises(ValueError, match="turn chunked prefill on"):
        toy(
            output_tokens=2,
            rate=1.0,
            chunked_prefill=False,
            max_batched_tokens=256,
            max_num_seqs=8,
            input_tokens=300,
        )


def test_a_run_too_large_is_refused_with_what_to_lower():
    # the tutorial profile's vLLM scheduler chunks every prompt into 2048-token steps, so 10^12
    # prompt tokens are far too many events (trtllm-1.0 does not chunk: each prompt is a step)
    with pytest.raises(ValueError, match="lower requests or input_tokens"):
        serve_load(
            "Llama-3.1-8B",
            "H100",
            input_tokens=10_000_000,
            output_tokens=1,
            rate=1.0,
            requests=100_000,
            profile=TUTORIAL_PROFILE,
        )


def test_a_request_larger_than_the_pool_does_not_fit():
    r = serve_load(
        "Llama-3.1-70B", "L40S", input_tokens=1000, output_tokens=10, rate=1.0, requests=10
    )
    assert not r["fits_in_memory"] and r["requests_measured"] == 0
    assert math.isnan(r["ttft_ms_mean"]) and r.warnings[-1].code == "no_kv_room"
    assert str(r.warnings[-1]).startswith("does not fit: the weights (")


def test_traces_are_read_sorted_and_checked():
    data = b"arrival_s,input_tokens,output_tokens\n2.5,100,10\n1.5,200,20\n1.5,300,5\n"
    t = parse_trace(data, "t.csv")
    assert t.arrival_s.tolist() == [0.0, 0.0, 1.0]  # shifted to 0, stable for equal times
    assert t.input_tokens.tolist() == [200, 300, 100]
    r = serve_load(TOY, TOY_HW, trace=t, profile=TUTORIAL_PROFILE)  # the toy's 1 GB: no workspace
    assert r["mode"] == "trace" and r["requests_measured"] == 3 and r["trace"] == "t.csv"
    bad = b"arrival_s,input_tokens,output_tokens\n0,10,1\n-1,10,1\n0,2.5,1\n0,1\n"
    with pytest.raises(TraceError) as err:
        parse_trace(bad, "bad.csv")
    assert err.value.problems[:3] == [
        "row 2, column 'arrival_s': must be seconds from 0 to 1e+09, got '-1'",
        "row 3, column 'input_tokens': must be a whole number from 1 to 10,000,000, got '2.5'",
        "row 4: expected 3 cells",
    ]
    with pytest.raises(TraceError, match="column 'arrival_s' is missing"):
        parse_trace(b"input_tokens,output_tokens\n1,1\n")
    with pytest.raises(TraceError, match=r"the limit is 1\.0 MB"):
        parse_trace(b" " * 1_000_001)
    with pytest.raises(TraceError, match=f"give 1 to {MAX_TRACE_ROWS:,} requests"):
        trace_from_arrays([], [], [])


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    rate=st.floats(1.0, 40.0),
    spread=st.floats(0.0, 0.9),
    burstiness=st.floats(0.2, 5.0),
)
def test_runs_are_deterministic_by_seed(seed, rate, spread, burstiness):
    kw = {
        "input_tokens": 300,
        "output_tokens": 50,
        "rate": rate,
        "requests": 200,
        "length_spread": spread,
        "burstiness": burstiness,
    }
    a = serve_load("Llama-3.1-8B", "A100", seed=seed, **kw)
    b = serve_load("Llama-3.1-8B", "A100", seed=seed, **kw)
    assert a.as_dict() == b.as_dict()
    assert all(
        np.array_equal(a.per_request[k], b.per_request[k], equal_nan=True) for k in a.per_request
    )
    c = serve_load("Llama-3.1-8B", "A100", seed=(seed + 1) % 2**32, **kw)
    assert not np.array_equal(a.per_request["arrival_s"], c.per_request["arrival_s"])


@settings(max_examples=15, deadline=None)
@given(rate=st.floats(1.0, 15.0), more=st.floats(1.25, 3.0), seed=st.integers(0, 1000))
def test_more_traffic_means_more_requests_in_the_system(rate, more, seed):
    # one seed: the faster run's arrivals are the slower run's, compressed in time
    kw = {"input_tokens": 500, "output_tokens": 100, "requests": 400, "seed": seed}
    slow = serve_load("Llama-3.1-8B", "H100", rate=rate, **kw)
    fast = serve_load("Llama-3.1-8B", "H100", rate=rate * more, **kw)
    assert fast["mean_requests_in_system"] > slow["mean_requests_in_system"]
    assert fast["mean_running_requests"] > slow["mean_running_requests"]
    assert fast["tpot_ms_mean"] >= slow["tpot_ms_mean"]


SCHEDULERS = st.builds(
    SchedulerDefaults,
    max_num_seqs=st.integers(1, 8),
    max_batched_tokens=st.integers(8, 400),
    chunked_prefill=st.booleans(),
    block_size=st.sampled_from([1, 4, 16]),
    kv_policy=st.sampled_from(["on_demand", "reserve"]),
    watermark=st.sampled_from([0.0, 0.01]),
)


@settings(max_examples=60, deadline=None)
@given(
    sched=SCHEDULERS,
    n=st.integers(1, 25),
    seed=st.integers(0, 1000),
    rate=st.one_of(st.floats(1e3, 1e6), st.none()),
    blocks=st.integers(40, 400),
)
def test_every_request_completes_once_with_all_its_tokens(sched, n, seed, rate, blocks):
    if sched.max_batched_tokens < sched.max_num_seqs:
        return
    rng = np.random.default_rng(seed)
    n_in, n_out = rng.integers(1, 120, n), rng.integers(1, 30, n)
    if not sched.chunked_prefill and int((n_in + n_out).max()) > sched.max_batched_tokens:
        return  # refused by serve_load before any work (tested above)
    hw = replace(TOY_HW, id="small", memory_capacity_bytes=3408.0 + blocks * 32 * sched.block_size)
    dep = instance(Deployment(TOY, hw, overrides={"memory_reserve": 0.0}))
    dep = replace(
        dep, scheduler=sched, pool=replace(dep.pool, blocks=blocks, block_size=sched.block_size)
    )
    if dep.pool.need(int((n_in + n_out).max())) > blocks:
        return
    arrival = None if rate is None else np.cumsum(rng.exponential(1 / rate, n)) - 1 / rate
    sim = Simulator(
        dep.scenario.folded,
        sched,
        dep.pool,
        arrival_s=arrival,
        input_tokens=n_in,
        output_tokens=n_out,
        clients=None,
        warmup=0,
        drain=0,
        max_events=100_000,
    ).run()
    requests = sim.requests
    assert requests.state == [DONE] * n  # conservation: every request done, exactly once
    assert sorted(sim.completed) == list(range(n))
    assert sim.produced == int(n_out.sum())  # every output token produced exactly once
    arrival, admit, first, done = (
        np.asarray(x)
        for x in (requests.arrival_s, requests.admitted_s, requests.first_token_s, requests.done_s)
    )
    assert np.all(arrival <= admit) and np.all(admit < first) and np.all(first <= done)
    # every block returned: none decoding, none held by a prompt or a reservation
    assert sim.decoders.count == 0 and sim.policy.used(sim.decoders.step) == 0
    assert not sim.prefilling


@settings(max_examples=25, deadline=None)
@given(rate=st.floats(0.5, 60.0), seed=st.integers(0, 100))
def test_latencies_are_bounded_below_by_an_idle_server(rate, seed):
    # TTFT is at least the prompt's prefill alone and TPOT at least a batch-1 decode step:
    # the step cost only grows with the tokens and sequences in it
    r = serve_load(
        "Llama-3.1-8B",
        "H100",
        input_tokens=400,
        output_tokens=40,
        rate=rate,
        requests=200,
        seed=seed,
    )
    alone = serve("Llama-3.1-8B", "H100", input_tokens=400, output_tokens=2)
    req = r.per_request
    assert np.all(req["ttft_s"] * 1e3 >= alone["ttft_ms"] * (1 - 1e-9))
    assert np.all(req["tpot_s"] * 1e3 >= alone["tpot_ms"] * (1 - 1e-9))
    assert np.all(req["e2e_latency_s"] >= req["ttft_s"]) and np.all(req["queueing_s"] >= 0)


def test_a_token_budget_below_the_sequence_limit_caps_the_running_batch():
    # TensorRT-LLM deployments set max_num_tokens below max_batch_size (e.g. 1,536 and 2,048):
    # every running sequence puts a token in each step, so at most 16 run at once here
    r = serve_load(
        "Llama-3.1-8B",
        "H100",
        input_tokens=8,
        output_tokens=64,
        concurrency="max",
        requests=200,
        max_num_seqs=64,
        max_batched_tokens=16,
    )
    assert r["fits_in_memory"] and 0 < r["mean_running_requests"] <= 16
    assert max(r.timeseries["running"]) <= 16
