"""Replicas behind a router and disaggregated prefill/decode serving (engine/load/router.py,
engine/load/disagg.py): the KV transfer by hand, the issue's two comparisons, the CLI's keys."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine import ROUTERS, Disaggregated, Replicas, parse_trace, serve_load
from engine.cli.main import main
from engine.load.api import instance
from engine.load.disagg import exposed_s, kv_link, kv_transfer_s
from engine.load.search import _analytic
from engine.scenarios.deployment import Deployment
from engine.scenarios.service import SLO, Scheduler
from engine.scenarios.workload import OpenLoop, Workload

L70 = Deployment("Llama-3.1-70B", "H100", tp=4, precision="fp8")
L8 = Deployment("Llama-3.1-8B", "H100", tp=1, precision="fp8")
SLOS = SLO()


def test_the_kv_transfer_by_hand():
    # Llama-3.1-70B: 80 layers, 8 KV heads of 128 (K) + 128 (V) elements, fp8 KV: 1 byte each
    # → 80 · 8 · 256 · 1 = 163,840 B per token; a 4,000-token prompt 655,360,000 B. One 4-GPU
    # prefill and one 4-GPU decode worker fit one 8-GPU NVLink domain: 4 lanes of NVLink 4 at
    # 450 GB/s per direction (H100 datasheet) → 655.36e6 / 1.8e12 = 364.0889 µs, + 0.6 µs.
    link = kv_link(Disaggregated(L70, L70))
    assert (link.name, link.lanes, link.bandwidth_bytes_per_s) == ("nvlink", 4, 450e9)
    seconds = kv_transfer_s(instance(L70), np.array([4000]), link)
    assert seconds[0] == pytest.approx(655.36e6 / 1.8e12 + 0.6e-6, rel=1e-9)


def test_a_deployment_beyond_one_nvlink_domain_sends_over_the_network():
    link = kv_link(Disaggregated(L70, L70, prefill_workers=2, decode_workers=1))  # 12 > 8 GPUs
    assert link.name == "network"
    assert link.bandwidth_bytes_per_s < 450e9


def test_layer_wise_sending_hides_what_the_prompt_compute_covers():
    whole, prefill = np.array([0.08, 0.08]), np.array([0.05, 0.5])
    # 80 layers: max(0.08/80, 0.08 − 0.05 · 79/80) = 0.030625; the long prefill hides all but
    # the last layer's 0.001
    assert exposed_s(whole, prefill, 80, overlap=True) == pytest.approx([0.030625, 0.001])
    assert exposed_s(whole, prefill, 80, overlap=False) == pytest.approx(whole)


def test_disaggregated_beats_aggregated_decode_at_twice_the_rate():
    """The issue's comparison: Llama-3.1-70B fp8, 4,000/300 tokens; one 4-GPU prefill and one
    4-GPU decode worker at 2R against one aggregated 4-GPU replica at R, R = 0.6 × its
    saturation (the analytic capacity `max_rate` reports as saturation_rate_per_s)."""
    w = Workload(input_tokens=4000, output_tokens=300, arrivals=OpenLoop(1.0), requests=600)
    saturation = _analytic(instance(L70), w, SLOS)[1]
    rate = 0.6 * saturation
    aggregated = serve_load(L70, w.at_rate(rate))
    split = serve_load(Disaggregated(L70, L70), w.at_rate(2 * rate))
    assert split["tpot_ms_p99"] < aggregated["tpot_ms_p99"]
    assert split["kv_transfer_ms_mean"] > 0
    assert aggregated["kv_transfer_ms_mean"] == 0
    assert split["devices"] == 8 and aggregated["devices"] == 4
    # the first token waits for the transfer: TTFT ≥ the transfer, every request
    assert split.per_request["ttft_s"].min() * 1e3 >= split["kv_transfer_ms_mean"]


def test_least_outstanding_routing_is_no_worse_than_round_robin_on_bursts():
    """Four replicas, bursty arrivals (gamma shape 0.2), lengths spread ± 90 %, each replica's
    sequence slots binding (max_num_seqs 16): a request sent in turn to a full replica waits."""
    sched = Scheduler(max_num_seqs=16)
    w = Workload(
        input_tokens=500,
        output_tokens=1000,
        arrivals=OpenLoop(1.0, burstiness=0.2),
        requests=1500,
        length_spread=0.9,
    )
    saturation = _analytic(instance(L8, sched), w, SLOS)[1]
    at = w.at_rate(4 * 0.8 * saturation)
    rr = serve_load(Replicas(L8, 4, "round-robin"), at, scheduler=sched)
    lo = serve_load(Replicas(L8, 4, "least-outstanding"), at, scheduler=sched)
    assert lo["ttft_ms_p99"] <= rr["ttft_ms_p99"]
    assert lo["requests_measured"] == rr["requests_measured"] == 1200


def test_one_replica_behind_a_router_is_the_plain_simulator():
    w = Workload(input_tokens=1000, output_tokens=200, arrivals=OpenLoop(15.0), requests=300)
    plain = serve_load(L8, w)
    for router in ("round-robin", "least-outstanding"):
        fleet = serve_load(Replicas(L8, 1, router), w)
        for key in ("ttft_ms_p99", "tpot_ms_mean", "e2e_latency_ms_p90", "output_tokens_per_s"):
            assert fleet[key] == pytest.approx(plain[key], rel=1e-9), key


def test_prefix_aware_routing_falls_back_to_least_outstanding():
    w = Workload(input_tokens=800, output_tokens=100, arrivals=OpenLoop(40.0), requests=200)
    lo = serve_load(Replicas(L8, 2, "least-outstanding"), w)
    pa = serve_load(Replicas(L8, 2, "prefix-aware"), w)
    assert pa["ttft_ms_p99"] == lo["ttft_ms_p99"]
    assert "prefix_router_fallback" in [m.code for m in pa.warnings]


def test_a_fleet_refuses_the_techniques_it_does_not_simulate_rather_than_drop_them():
    prefixed = Workload.of(
        input_tokens=800, output_tokens=100, rate=4.0, requests=100, prefix_tokens=500
    )
    with pytest.raises(ValueError, match="a shared prefix with replicas"):
        serve_load(Replicas(L8, 2), prefixed)
    eagle = dataclasses.replace(L8, speculation=engine.Speculation("eagle"))
    plain = Workload(input_tokens=800, output_tokens=100, arrivals=OpenLoop(4.0), requests=100)
    with pytest.raises(ValueError, match="speculative decoding"):
        serve_load(Disaggregated(eagle, L8), plain)


def test_a_fleet_takes_open_loop_arrivals_only():
    w = Workload.of(input_tokens=800, output_tokens=100, concurrency=4, requests=100)
    with pytest.raises(ValueError, match="open-loop"):
        serve_load(Replicas(L8, 2), w)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Replicas(L8, 0), "replicas"),
        (lambda: Replicas(L8, 2, "random"), "router"),
        (lambda: Disaggregated(L8, L70), "same model"),
        (lambda: Disaggregated(L8, L8, kv_overlap="maybe"), "kv_overlap"),
    ],
)
def test_bad_fleets_are_refused_with_their_field(make, match):
    with pytest.raises(ValueError, match=match):
        make()


BASE = [
    "load",
    "--model",
    "Llama-3.1-8B",
    "--hardware",
    "H100",
    "--precision",
    "fp8",
    "--input-tokens",
    "1000",
    "--output-tokens",
    "100",
    "--rate",
    "20",
    "--requests",
    "200",
    "--format",
    "json",
]


def run_cli(capsys, *extra: str) -> dict:
    assert main([*BASE, *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_cli_keys_of_replicas_and_disaggregated_runs(capsys):
    plain = run_cli(capsys)
    assert plain["kv_transfer_ms_mean"] == 0
    fleet = run_cli(capsys, "--replicas", "2", "--router", "least-outstanding")
    assert (fleet["replicas"], fleet["router"], fleet["devices"]) == (2, "least-outstanding", 2)
    split = run_cli(capsys, "--prefill-workers", "1", "--prefill-tp", "2", "--decode-workers", "2")
    assert split["disaggregated"] is True
    assert (split["prefill_tp"], split["decode_tp"], split["devices"]) == (2, 1, 4)
    assert split["kv_link"] == "nvlink" and split["kv_transfer_ms_mean"] > 0


def test_the_cli_refuses_a_fleet_with_a_search_or_clients(capsys):
    assert main([*BASE, "--replicas", "2", "--max-rate"]) == 2
    assert "--max-rate" in capsys.readouterr().err


def test_one_token_requests_of_a_trace_finish_on_the_prefill_side_and_the_rest_decode():
    """A request of one output token is done once its KV arrives (no decode step); the decode
    workers idle between arrivals rather than jumping past them (a regression: they once
    jumped to the end of time after such a request)."""
    rows = "".join(f"{i * 0.05},{500 + i % 7 * 100},{1 + i % 50}\n" for i in range(200))
    trace = parse_trace(f"arrival_s,input_tokens,output_tokens\n{rows}".encode(), "t.csv")
    r = serve_load(Disaggregated(L8, L8), trace=trace)
    req = r.per_request
    assert np.isfinite(req["e2e_latency_s"]).all() and r["requests_measured"] == 160
    one = req["output_tokens"] == 1
    assert one.any() and np.all(req["e2e_latency_s"][one] == req["ttft_s"][one])
    assert np.isfinite(req["tpot_s"][~one]).all()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("policy", ["on_demand", "reserve"])
def test_every_request_of_a_fleet_is_served_once(seed, policy):
    """Conservation: every request is routed to one replica and completes there, with its
    output tokens, under either KV policy; first token before the last."""
    w = Workload(
        input_tokens=800,
        output_tokens=120,
        arrivals=OpenLoop(30.0, burstiness=0.3),
        requests=240,
        length_spread=0.8,
        seed=seed,
    )
    sched = Scheduler(kv_policy=policy, max_num_seqs=24)
    for fleet in (
        Replicas(L8, 3, "least-outstanding"),
        Disaggregated(L8, L8, prefill_workers=2, decode_workers=1),
    ):
        r = serve_load(fleet, w, scheduler=sched)
        req = r.per_request
        assert np.isfinite(req["e2e_latency_s"]).all()
        assert np.all(req["ttft_s"] <= req["e2e_latency_s"] + 1e-12)
        assert np.all(req["queueing_s"] >= 0)


def test_a_fleet_names_its_accelerator_in_its_deployments():
    with pytest.raises(ValueError, match="second argument is its Workload"):
        serve_load(Replicas(L8, 2), "H100", input_tokens=100, output_tokens=10, rate=1.0)


def test_the_cli_refuses_a_router_with_nothing_to_route(capsys):
    assert main([*BASE, "--router", "least-outstanding"]) == 2
    assert "--router" in capsys.readouterr().err
    one = run_cli(capsys, "--replicas", "1")  # one replica asked for: a fleet of one
    assert (one["replicas"], one["router"]) == (1, "round-robin")


@settings(max_examples=6, deadline=None)
@given(
    replicas=st.integers(1, 3),
    router=st.sampled_from(ROUTERS),
    seed=st.integers(0, 2**16),
    spread=st.sampled_from([0.0, 0.5, 0.9]),
)
def test_a_fleet_serves_every_token_it_is_sent(replicas, router, seed, spread):
    """Whatever the router: each measured request completes after its first token, and the
    fleet never runs more than its replicas' max_num_seqs at once (the summed time series)."""
    w = Workload(
        input_tokens=600,
        output_tokens=80,
        arrivals=OpenLoop(25.0 * replicas, burstiness=0.5),
        requests=200,
        length_spread=spread,
        seed=seed,
    )
    r = serve_load(Replicas(L8, replicas, router), w, scheduler=Scheduler(max_num_seqs=32))
    req = r.per_request
    assert np.isfinite(req["e2e_latency_s"]).all()
    assert np.all(req["ttft_s"] <= req["e2e_latency_s"])
    assert r["max_running_requests"] <= 32 * replicas
    assert r["mean_running_requests"] <= 32 * replicas
