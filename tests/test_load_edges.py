"""Edge cases of serving under load (engine/load): measured windows that would have no length,
rates so low that each request runs alone, and time averages that float noise could push
below zero."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_serving_operators import TOY, TOY_HW

from engine import TUTORIAL_PROFILE, serve, serve_load
from engine.scenarios.trace import trace_from_arrays
from engine.scenarios.workload import MIN_RATE

ROOT = Path(__file__).resolve().parent.parent
# The toy (tests/test_serving_operators.py) has 1 GB of memory: under the trtllm-1.0 default its
# pool rule sets 1 GiB of workspace aside and nothing is left, so the toy runs name the tutorial
# profile (its figures and 16-token blocks are the ones these tests reason with).
TOY_PROFILE = {"profile": TUTORIAL_PROFILE}
L8 = {"model": "Llama-3.1-8B", "hardware": "H100", "input_tokens": 1000, "output_tokens": 200}
FLOOR = "rate: expected at least 0.0001 requests per second (one every 2.8 hours"

WINDOW_METRICS = (
    "requests_per_s",
    "arrival_rate_per_s",
    "output_tokens_per_s",
    "output_tokens_per_s_per_gpu",
    "goodput_requests_per_s",
    "mean_running_requests",
    "mean_queued_requests",
    "mean_requests_in_system",
    "kv_cache_utilisation",
    "measured_window_s",
)


def test_a_max_throughput_wave_completing_at_once_has_a_window_from_the_start():
    # 300 prompts of 16 tokens fit one step of TensorRT-LLM's 8,192-token budget, and each
    # request's second token comes from the next step: all 300 complete at once, so the
    # completions of ranks 30 and 270 (the window's edges) coincide. The window opens at the
    # run's start instead, when every request arrives: [0, T], T the e2e latency of each.
    r = serve_load(
        "Llama-3.1-8B",
        "H100",
        input_tokens=16,
        output_tokens=2,
        profile="trtllm",
        requests=300,
        concurrency="max",
    )
    assert all(math.isfinite(r[k]) for k in WINDOW_METRICS), {k: r[k] for k in WINDOW_METRICS}
    e2e_s = r["e2e_latency_ms_mean"] / 1e3
    assert r["e2e_latency_ms_p99"] == pytest.approx(r["e2e_latency_ms_p50"])  # one wave
    assert r["measured_window_s"] == pytest.approx(e2e_s)
    assert r["requests_per_s"] == pytest.approx(300 / e2e_s)  # every completion is in it
    assert r["output_tokens_per_s"] == pytest.approx(2 * 300 / e2e_s)  # 2 tokens each
    assert r["goodput_requests_per_s"] == pytest.approx(r["requests_per_s"])  # SLOs met
    assert r["mean_running_requests"] == pytest.approx(300)  # all admitted at 0, running to T
    # TensorRT-LLM's reservation: 16 + 2 tokens, one 32-token block each, held from 0 to T
    assert r["kv_cache_utilisation"] == pytest.approx(300 / r["kv_pool_blocks"])


def test_a_toy_wave_completing_at_once_has_a_window_from_the_start():
    # 10 toy prompts of 9 tokens share one step, then one decode step: all complete at T
    r = serve_load(
        TOY,
        TOY_HW,
        input_tokens=9,
        output_tokens=2,
        concurrency="max",
        requests=10,
        **TOY_PROFILE,
    )
    assert r["requests_measured"] == 8  # ranks 2 … 9: the first and last are warm-up, drain
    e2e_s = r["e2e_latency_ms_mean"] / 1e3
    assert r["measured_window_s"] == pytest.approx(e2e_s)
    assert r["requests_per_s"] == pytest.approx(10 / e2e_s)
    assert r["output_tokens_per_s"] == pytest.approx(20 / e2e_s)
    assert r["mean_running_requests"] == pytest.approx(10)
    assert r["mean_queued_requests"] == 0


def test_a_trace_arriving_at_once_is_measured_to_its_last_measured_completion():
    # 10 requests at t = 5 s (shifted to 0): the window's edges, the arrivals of the first
    # measured request and of the first drained one, coincide. It ends instead at the last
    # measured completion. Outputs 2, 3, … 11 tokens: request i completes after i + 1 decode
    # steps, so the drained one (11 tokens) completes after the window and the others in it.
    n = 10
    trace = trace_from_arrays(np.full(n, 5.0), np.full(n, 9), np.arange(2, n + 2))
    r = serve_load(TOY, TOY_HW, trace=trace, **TOY_PROFILE)
    assert all(math.isfinite(r[k]) for k in WINDOW_METRICS), {k: r[k] for k in WINDOW_METRICS}
    last_measured_s = float(r.per_request["e2e_latency_s"].max())  # every arrival is at 0
    assert r["measured_window_s"] == pytest.approx(last_measured_s)
    assert r["requests_per_s"] == pytest.approx(9 / last_measured_s)  # all but the drained
    assert r["arrival_rate_per_s"] == pytest.approx(8 / last_measured_s)  # the measured


@pytest.mark.parametrize("output_tokens", [1, 3])
def test_a_request_alone_holds_its_block_through_the_window(output_tokens):
    # one client: the measured request (the second) runs alone through the whole window, from
    # its predecessor's completion (its own arrival) to its own completion. Its cache (9 prompt
    # tokens, at most 11 with its output) fits one 16-token block, held throughout: KV use is
    # one block. (Sampled before each event's admissions and without the last step, it was 0.)
    r = serve_load(
        TOY,
        TOY_HW,
        input_tokens=9,
        output_tokens=output_tokens,
        concurrency=1,
        requests=3,
        **TOY_PROFILE,
    )
    assert r["requests_measured"] == 1
    assert r["kv_cache_utilisation"] == pytest.approx(1 / r["kv_pool_blocks"])


@pytest.mark.parametrize("rate", [1e-15, 1e-12, 1e-308, 0.99e-4])
def test_a_rate_below_the_floor_is_refused_naming_it(rate):
    # at 1e-15 requests/s the arrivals pass 1e16 s, where floats are 2 s apart: every TTFT and
    # TPOT came out 0.0; at 1e-308 the arrival times overflowed to inf (NaN latencies)
    with pytest.raises(ValueError, match=r"^rate: expected at least 0\.0001 requests per second"):
        serve_load(**L8, rate=rate, requests=100)


def test_the_cli_refuses_a_tiny_rate_in_one_line_without_warnings():
    flags = ["--model", "Llama-3.1-8B", "--hardware", "H100", "--input-tokens", "1000"]
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine",
            "load",
            *flags,
            "--output-tokens",
            "200",
            "--rate",
            "1e-308",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and FLOOR in run.stderr, run.stderr


def test_at_the_floor_every_request_runs_alone_at_the_batch_1_latency():
    # one request every 2.8 hours: each runs on an idle server, so its TTFT and TPOT are the
    # serving model's batch-1 figures; 2,000 arrivals reach about 2e7 s, where floats are
    # 4e-9 s apart, far below a step of milliseconds (within 1e-6, not only the 5 % asked)
    s = serve(**L8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning either
        r = serve_load(**L8, rate=MIN_RATE, requests=2000)
    assert r["requests_measured"] == 1600
    for stat in ("mean", "p50", "p99"):
        assert r[f"ttft_ms_{stat}"] == pytest.approx(s["ttft_ms"], rel=1e-6)
        assert r[f"tpot_ms_{stat}"] == pytest.approx(s["tpot_ms"], rel=1e-6)
    assert r["queueing_ms_p99"] == 0


def test_a_queue_never_formed_averages_zero_queued_not_below():
    # 16 clients on 2,048 sequence slots (trtllm-1.0's), every prompt fitting the step's
    # budget: each request is admitted at the event it arrives, so none ever waits. Taken as
    # the requests in the system less the running ones (two sums of thousands of products) it
    # was −3.6e-15.
    r = serve_load(
        "Llama-3.1-8B",
        "H100",
        input_tokens=700,
        output_tokens=150,
        concurrency=16,
        requests=600,
        chunked_prefill=False,
        seed=2,
    )
    assert r["queueing_ms_p99"] == 0  # nobody waited
    assert r["mean_queued_requests"] == 0


@settings(max_examples=30, deadline=None)
@given(
    clients=st.one_of(st.integers(1, 12), st.just("max")),
    seed=st.integers(0, 1000),
    spread=st.sampled_from([0.0, 0.5]),
    kv_policy=st.sampled_from(["on_demand", "reserve"]),
)
def test_time_averages_are_never_negative(clients, seed, spread, kv_policy):
    r = serve_load(
        TOY,
        TOY_HW,
        input_tokens=9,
        output_tokens=5,
        concurrency=clients,
        requests=40,
        seed=seed,
        length_spread=spread,
        kv_policy=kv_policy,
        **TOY_PROFILE,
    )
    for key in (
        "mean_running_requests",
        "mean_queued_requests",
        "mean_requests_in_system",
        "kv_cache_utilisation",
    ):
        assert r[key] >= 0, key
    queued = r["mean_requests_in_system"] - r["mean_running_requests"]
    assert r["mean_queued_requests"] == pytest.approx(max(queued, 0.0), abs=1e-12)
