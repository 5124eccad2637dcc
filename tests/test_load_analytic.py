"""The analytic fast path (engine/load/analytic.py, grid.py) against the simulator on a grid:
means within 10 % below saturation, the saturation rate within 5 %; the grid's columns and
limits; the max-rate search, replicas and cost."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import get_profile as engine_profile
from engine import load_grid, max_rate, serve, serve_load
from engine.load import analytic as an
from engine.load.api import instance
from engine.load.grid import limits
from engine.scenarios.deployment import Deployment

GRID = [  # (model, hardware, tp, profile, input, output): bound by max_num_seqs, by the
    # step's tokens, by the KV pool (vLLM and TensorRT-LLM policies), a mixture of experts
    ("Llama-3.1-8B", "H100", 1, "tutorial", 1000, 200),
    ("Llama-3.1-8B", "A100", 1, "tutorial", 2000, 500),
    ("Llama-3.1-70B", "H100", 4, "trtllm", 1500, 300),
    ("Mixtral-8x7B", "H100", 2, "tutorial", 500, 300),
    ("Qwen2.5-7B", "L40S", 1, "tutorial", 3000, 100),
]


def fast(model, hardware, tp, profile):
    dep = instance(Deployment(model, hardware, tp=tp, profile=profile))
    return dep.scenario.folded, limits(dep.scenario.folded, dep.scheduler)


@pytest.mark.parametrize(("model", "hardware", "tp", "profile", "n_in", "n_out"), GRID)
def test_the_fast_path_matches_the_simulator_below_saturation(
    model, hardware, tp, profile, n_in, n_out
):
    f, lim = fast(model=model, hardware=hardware, tp=tp, profile=profile)
    cap = float(an.capacity(f=f, lim=lim, n_in=float(n_in), n_out=float(n_out))["rate_per_s"])
    # the saturation rate: every request queued at once (lengths ±20 %: see
    # tests/test_load_properties.py for why) against the fast path's capacity
    top = serve_load(
        model,
        hardware,
        tp=tp,
        profile=profile,
        input_tokens=n_in,
        output_tokens=n_out,
        concurrency="max",
        requests=3000,
        length_spread=0.2,
    )
    assert cap == pytest.approx(top["requests_per_s"], rel=0.05)
    for load in (0.25, 0.5, 0.65):
        a = an.open_loop(f=f, lim=lim, rate=load * cap, n_in=float(n_in), n_out=float(n_out))
        r = serve_load(
            model,
            hardware,
            tp=tp,
            profile=profile,
            input_tokens=n_in,
            output_tokens=n_out,
            rate=load * cap,
            requests=3000,
        )
        for key in ("ttft", "tpot", "e2e_latency"):
            assert float(a[f"{key}_s_mean"]) * 1e3 == pytest.approx(r[f"{key}_ms_mean"], rel=0.1)
        if load <= 0.5:
            running = float(a["mean_running_requests"])
            assert running == pytest.approx(r["mean_running_requests"], rel=0.1)


def test_pipeline_stages_match_the_simulator_at_saturation():
    """pp = 4 keeps a batch in flight on each stage in both models: the fast path's capacity
    within 5 % of the simulated max-throughput run, and about pp times that of a single batch
    through the stages (the earlier model's)."""
    kw = {"tp": 1, "pp": 4, "profile": "trtllm-1.0", "input_tokens": 1000, "output_tokens": 300}
    dep = instance(Deployment("Llama-3.1-70B", "H100", tp=1, pp=4, profile="trtllm-1.0"))
    f = dep.scenario.folded
    lim = limits(f, dep.scheduler)
    cap = float(an.capacity(f=f, lim=lim, n_in=1000.0, n_out=300.0)["rate_per_s"])
    top = serve_load(
        "Llama-3.1-70B", "H100", **kw, concurrency="max", requests=3000, length_spread=0.2
    )
    assert cap == pytest.approx(top["requests_per_s"], rel=0.05)
    one = float(
        an.capacity(f=f._replace(micro=1.0), lim=lim, n_in=1000.0, n_out=300.0)["rate_per_s"]
    )
    # up to pp times: no stage idles, none works faster (less: each batch passes the LM head)
    assert 2.5 < cap / one <= 4.0 + 1e-9
    assert dep.scheduler.max_num_seqs == 4 * 2048  # TensorRT-LLM: max_batch_size × stages
    assert dep.scheduler.max_batched_tokens == 4 * 8192  # a token budget per batch in flight


def test_vllm_keeps_one_sequence_limit_over_its_batches_in_flight():
    """vLLM's V1 engine feeds a queue of pp batches from one scheduler: each batch has its own
    token budget, but max_num_seqs bounds them all; TensorRT-LLM bounds each (its profiles say
    `seqs_per_stage`). The fast path's limits and the simulator's scheduler agree on both."""
    for profile, seqs in (("vllm", 256), ("trtllm-1.0", 4 * 2048)):
        dep = instance(Deployment("Llama-3.1-70B", "H100", tp=2, pp=4, profile=profile))
        base = engine_profile(profile).scheduler
        assert dep.scheduler.max_num_seqs == seqs
        assert dep.scheduler.max_batched_tokens == 4 * base.max_batched_tokens
        grid = limits(dep.scenario.folded, base, stages=4.0)
        assert float(grid.seqs) == dep.scheduler.max_running
        assert float(grid.tokens) == dep.scheduler.max_batched_tokens


@pytest.mark.parametrize(("model", "hardware", "tp", "profile", "n_in", "n_out"), GRID[:4])
def test_closed_loops_match_the_simulator(model, hardware, tp, profile, n_in, n_out):
    f, lim = fast(model=model, hardware=hardware, tp=tp, profile=profile)
    for clients in (1, 8, 64):
        a = an.closed_loop(
            f=f, lim=lim, clients=float(clients), n_in=float(n_in), n_out=float(n_out)
        )
        r = serve_load(
            model,
            hardware,
            tp=tp,
            profile=profile,
            input_tokens=n_in,
            output_tokens=n_out,
            concurrency=clients,
            requests=max(6 * clients, 300),
        )
        assert float(a["requests_per_s"]) == pytest.approx(r["requests_per_s"], rel=0.1)
        assert float(a["tpot_s_mean"]) * 1e3 == pytest.approx(r["tpot_ms_mean"], rel=0.1)
        assert float(a["e2e_latency_s_mean"]) * 1e3 == pytest.approx(
            r["e2e_latency_ms_mean"], rel=0.1
        )


def test_one_client_is_serve_at_batch_one():
    f, lim = fast(model="Llama-3.1-8B", hardware="H100", tp=1, profile="tutorial")
    a = an.closed_loop(f=f, lim=lim, clients=1.0, n_in=700.0, n_out=150.0)
    s = serve("Llama-3.1-8B", "H100", input_tokens=700, output_tokens=150, profile="tutorial")
    assert float(a["ttft_s_mean"]) * 1e3 == pytest.approx(s["ttft_ms"], rel=1e-9)
    # every decode step is memory-bound: its time is linear in the context, so the mean step
    # is the step at the mean context
    assert float(a["tpot_s_mean"]) * 1e3 == pytest.approx(s["tpot_ms"], rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    low=st.floats(0.02, 0.9),
    step=st.floats(0.01, 0.09),
    n_in=st.integers(50, 4000),
    n_out=st.integers(2, 800),
)
def test_the_fast_path_is_monotone_in_the_rate(low, step, n_in, n_out):
    f, lim = fast(model="Llama-3.1-8B", hardware="H100", tp=1, profile="tutorial")
    cap = float(an.capacity(f=f, lim=lim, n_in=float(n_in), n_out=float(n_out))["rate_per_s"])
    rates = np.array([low, low + step]) * cap
    out = an.open_loop(f=f, lim=lim, rate=rates, n_in=float(n_in), n_out=float(n_out))
    for key in (
        "ttft_s_mean",
        "tpot_s_mean",
        "e2e_latency_s_mean",
        "mean_running_requests",
        "kv_cache_utilisation",
        "ttft_s_p90",
    ):
        assert out[key][1] >= out[key][0] * (1 - 1e-9), key
    # the p99 TPOT's normal approximation may dip by a hair where one more prompt per step
    # spills into the next
    assert out["tpot_s_p99"][1] >= out["tpot_s_p99"][0] * (1 - 1e-2)


def test_beyond_saturation_latencies_are_unbounded():
    f, lim = fast(model="Llama-3.1-8B", hardware="H100", tp=1, profile="tutorial")
    cap = float(an.capacity(f=f, lim=lim, n_in=1000.0, n_out=200.0)["rate_per_s"])
    out = an.open_loop(f=f, lim=lim, rate=np.array([0.5, 1.2]) * cap, n_in=1000.0, n_out=200.0)
    assert out["stable"].tolist() == [True, False]
    assert math.isinf(out["ttft_s_mean"][1]) and math.isfinite(out["ttft_s_mean"][0])


def test_load_grid_prices_every_deployment_and_rate():
    df = load_grid(
        ["Llama-3.1-8B", "Llama-3.1-70B"],
        ["H100", "A100"],
        tp=[1, 3, 4],
        rates=[1.0, 2.0, 500.0],
        input_tokens=[1000],
        output_tokens=[200, 400],
        profile="tutorial",  # the fast path below is the tutorial profile's
    )
    # tp 3 divides neither model's heads: left out, and said so
    assert len(df.attrs["skipped"]) == 4 and "tp 3" in df.attrs["skipped"][0]
    assert len(df) == 2 * 2 * 2 * 3 * 2  # models × hardware × tp {1, 4} × rates × outputs
    row = df[
        (df.model == "Llama-3.1-8B")
        & (df.hardware == "H100")
        & (df.tp == 1)
        & (df.rate_per_s == 1.0)
        & (df.output_tokens == 200)
    ].iloc[0]
    f, lim = fast(model="Llama-3.1-8B", hardware="H100", tp=1, profile="tutorial")
    one = an.open_loop(f=f, lim=lim, rate=1.0, n_in=1000.0, n_out=200.0)
    assert row["ttft_ms_mean"] == pytest.approx(float(one["ttft_s_mean"]) * 1e3)
    assert row["output_tokens_per_s"] == pytest.approx(200.0)  # every request's 200 tokens
    # one H100 at its catalogued $/hour serving 200 tokens/s: price / (200 · 3600) · 10⁶
    assert row["cost_per_million_output_tokens_usd"] == pytest.approx(
        row["price_per_hour_usd"] / (200 * 3600) * 1e6
    )
    assert not df[df.rate_per_s == 500.0]["stable"].any()  # far beyond every capacity
    assert not df[df.rate_per_s == 500.0]["meets_slo"].any()
    with pytest.raises(ValueError, match="at most 1,000,000 are computed"):
        load_grid(
            ["Llama-3.1-8B"],
            ["H100"],
            rates=list(range(1, 1001)),
            input_tokens=list(range(1, 1001)),
            output_tokens=[2, 3],
        )


def test_max_rate_meets_the_slos_and_plans_replicas():
    r = max_rate(
        "Llama-3.1-8B",
        "H100",
        input_tokens=1000,
        output_tokens=200,
        slo_ttft_ms_p90=200,
        slo_tpot_ms_p99=30,
        target_rate=50,
        tolerance=0.02,
    )
    d = r.as_dict()
    assert d["max_rate_per_s"] == r.max_rate_per_s > 0
    assert d["ttft_ms_p90"] <= 200 and d["tpot_ms_p99"] <= 30  # the run at the answer passes
    found = r.bisection_rate_per_s  # the bisection's answer, before the confirmation
    above = [t for t in r.tried if t[0] > found]
    assert (
        above and min(t[0] for t in above) <= found * 1.03 and not any(t[3] for t in above)
    )  # the next rate tried above it fails
    # the confirmation keeps it or lowers it 5 % a round (tests/test_load_confirm.py)
    rounds = round(math.log(r.max_rate_per_s / found) / math.log(0.95))
    assert 0 <= rounds < 5 and r.max_rate_per_s == pytest.approx(found * 0.95**rounds)
    # the fast path's estimate against the simulator's bisection (recorded: 25.40 and 24.45
    # requests/s, +3.9 %); the confirmation's longer runs then lower the answer (22.07)
    assert r.analytic_max_rate_per_s == pytest.approx(found, rel=0.05)
    assert r.max_rate_per_s < r.saturation_rate_per_s
    # replicas: ⌈50 / max rate⌉; cost: replicas · 1 device · $/h / (3600 s · 50/s · 200 tokens)
    replicas = math.ceil(50 / r.max_rate_per_s)
    assert d["replicas"] == replicas
    assert d["cost_per_million_output_tokens_usd"] == pytest.approx(
        replicas * d["price_per_hour_usd"] / (3600 * 50 * 200) * 1e6
    )


def test_max_rate_is_zero_when_even_one_request_misses():
    r = max_rate(
        "Llama-3.1-8B",
        "H100",
        input_tokens=1000,
        output_tokens=200,
        slo_ttft_ms_p90=1.0,
        slo_tpot_ms_p99=None,
    )
    assert r.max_rate_per_s == 0 and r.at_max is None
    with pytest.raises(ValueError, match="tolerance"):
        max_rate("Llama-3.1-8B", "H100", input_tokens=10, output_tokens=2, tolerance=0.0)
    with pytest.raises(ValueError, match="slo_ttft_ms"):
        max_rate("Llama-3.1-8B", "H100", input_tokens=10, output_tokens=2, slo_ttft_ms_p90=-5)


def test_a_run_says_the_limits_of_its_ranks_and_of_its_stages_apart():
    """Attention DP over 8 ranks and 2 pipeline stages (TensorRT-LLM): the ranks' note gives one
    stage's limits (8 × 2,048 sequences, at the engine's 16,384 cap; 8 × 8,192 tokens), the
    stages' note the replica's (twice the tokens: a budget per batch in flight)."""
    dep = Deployment(
        "Qwen3-235B-A22B", "H100", tp=8, pp=2, ep=8, attention_dp=True, profile="trtllm-1.0"
    )
    r = serve_load(dep, input_tokens=1000, output_tokens=300, rate=2.0, requests=200)
    said = " | ".join(map(str, r.warnings))
    assert "each of the 8 ranks schedules its own batch, so the replica runs up to 16,384 " in said
    assert "sequences and 65,536 tokens a step (8 times" in said
    assert "pp = 2: 2 batches are in flight" in said and "131,072 tokens a step" in said
