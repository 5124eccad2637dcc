"""Multi-node groups, expert parallelism and attention data parallelism in the serving model.

A toy MoE counted by hand (dispatch bytes), then properties on catalogue models: a group inside
the link domain never pays the network, TP 16 of Llama-3.1-405B leaves an H100 node but not a
GB200 NVL72 domain, attention DP's KV per device, the expert imbalance, and EP's weights.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re

import pytest

import engine
from engine.arrays import SCALAR
from engine.catalog.arch import Architecture
from engine.catalog.specs import HardwareSpec
from engine.cli.main import main
from engine.serving import operators as ops

CAT = engine.load_catalog()
# A toy MoE: 2 layers, h 16, 4 heads of 4 (4 KV heads), 8 experts of width 16, 2 per token.
TOY_MOE = Architecture(
    layers=2,
    hidden=16,
    heads=4,
    kv_heads=4,
    head_dim=4,
    intermediate=0,
    vocab=32,
    context_length=1000,
    experts=8,
    experts_per_token=2,
    expert_intermediate=16,
)
# 1 GB/s per direction and α = 1 µs on the link (no peer access: NCCL's ring and all-to-all).
TOY_HW = HardwareSpec(
    id="toy",
    name="Toy",
    peak_flop_per_s={"fp16": 1e12, "fp32": 1e11},
    memory_bandwidth_bytes_per_s=1e9,
    memory_capacity_bytes=1e9,
    dispatch_overhead_s=0.0,
    tdp_w=1.0,
    source="https://example.org/toy",
    interconnect_name="toy link",
    interconnect_bandwidth_bytes_per_s=1e9,
    interconnect_latency_s=1e-6,
    devices_per_node=8,
)
# A GB200 NVL72 built from the B200 entry: the same NVLink 5 per GPU, 72 GPUs in one domain.
NVL72 = dataclasses.replace(CAT.hardware["B200"], id="GB200-NVL72-test", devices_per_node=72)
DECODE = {"input_tokens": 1000, "output_tokens": 1000, "batch_size": 32}
# The toy's by-hand figures take the link at full bandwidth with the accelerator's own latency
# and the default expert imbalance of 1.2: the tutorial profile's assumptions, named.
TUTORIAL = engine.TUTORIAL_PROFILE


def test_toy_dispatch_and_combine_bytes_by_hand():
    # tp 4 = ep 4 with attention DP, 8 decode tokens, no imbalance. A device holds 8/4 = 2 of
    # the 8 tokens; each goes to the ranks its k = 2 experts fall on, 4·(1 − (3/4)²) = 1.75 on
    # average (whole experts: tp/ep = 1 slice each): 2 tokens · 16 · 2 B · 1.75 = 112 B out.
    # Each all-to-all: 3/4·112 B / 1 GB/s = 84 ns + 1 µs; a dispatch and a combine per layer.
    df = engine.operators(
        TOY_MOE,
        TOY_HW,
        batch_size=8,
        context=10,
        tp=4,
        ep=4,
        attention_dp=True,
        expert_imbalance=1.0,
        profile=TUTORIAL,
    ).set_index("name")
    row = df.loc["dispatch_combine"]
    assert row["bytes"] == pytest.approx(2 * 112)
    assert row["count"] == 2  # both layers are MoE layers
    assert row["time_ms"] == pytest.approx(2 * 1.084e-3)
    assert "all_reduce" not in df.index  # attention DP: no tensor-parallel all-reduce


def test_toy_expert_parallelism_without_attention_dp_all_reduces():
    # ep 4 alone: every device holds every token, sums the experts' partial outputs: two ring
    # all-reduces of 8·16·2 = 256 B per layer, 2·3/4·256/1e9 = 384 ns + 2·3 µs each
    toy = {"context": 10, "tp": 4, "ep": 4, "profile": TUTORIAL}
    df = engine.operators(TOY_MOE, TOY_HW, batch_size=8, **toy).set_index("name")
    assert df.loc["all_reduce", "time_ms"] == pytest.approx(2 * 6.384e-3)
    assert "dispatch_combine" not in df.index
    # the rank holds 8/4 = 2 whole experts: 3 matrices of 16×16 at 2 B each, 1,536 B each
    one = 3 * 16 * 16 * 2
    routed = df.loc["routed_experts"]
    # 8 tokens of top-2 touch 8·(1 − (6/8)^8) = 7.20 experts; the busiest rank reads
    # min(1.2·7.20, 8)/4 = 2 of them (all it holds); 1 token touches 2, the rank 1.2·2/4 = 0.6
    assert routed["weight_bytes"] == pytest.approx(2 * one)
    one_token = engine.operators(TOY_MOE, TOY_HW, batch_size=1, **toy)
    touched = one_token.set_index("name").loc["routed_experts", "weight_bytes"]
    assert touched == pytest.approx(0.6 * one)


def test_tp16_of_405b_pays_the_network_on_h100_not_on_an_nvl72():
    # TP 16 leaves an 8-GPU H100 node: 252 all-reduces a step on 50 GB/s per GPU (InfiniBand
    # NDR); inside a 72-GPU NVLink domain they stay on NVLink 5 at 900 GB/s.
    h100 = engine.serve("Llama-3.1-405B", "H100", tp=16, precision="fp8", **DECODE).as_dict()
    nvl = engine.serve("Llama-3.1-405B", NVL72, tp=16, precision="fp8", **DECODE).as_dict()
    assert h100["decode_comm_ms"] >= 4 * nvl["decode_comm_ms"]
    assert any("scale-out network" in w for w in h100["warnings"])
    assert not any("scale-out network" in w for w in nvl["warnings"])


@pytest.mark.parametrize(("tp", "pp"), [(2, 1), (4, 1), (8, 1), (4, 2), (1, 8)])
def test_a_group_inside_the_domain_never_pays_the_network(tp, pp):
    # a network of 1 kB/s and 1 s per step would dominate any step that used it
    slow = dataclasses.replace(
        CAT.hardware["H100"], network_bandwidth_bytes_per_s=1e3, network_latency_s=1.0
    )
    args = {"tp": tp, "pp": pp, "precision": "fp8", **DECODE}
    fast = engine.serve("Llama-3.1-70B", "H100", **args).as_dict()
    same = engine.serve("Llama-3.1-70B", slow, **args).as_dict()
    assert (same["ttft_ms"], same["tpot_ms"]) == (fast["ttft_ms"], fast["tpot_ms"])


def test_stages_across_nodes_send_on_the_network():
    # pp 4 of tp 4 on H100: 16 devices, two nodes; one of the 3 stage sends crosses them
    df = engine.operators(
        "Llama-3.1-70B", "H100", batch_size=8, context=100, tp=4, pp=4, precision="fp8"
    ).set_index("name")
    assert df.loc["stage_send", "count"] == 2
    assert df.loc["stage_send_network", "count"] == 1
    assert df.loc["stage_send_network", "time_ms"] > df.loc["stage_send", "time_ms"]


def test_attention_dp_kv_per_device():
    # Qwen3-235B: 4 KV heads. TP 8 replicates each on 2 devices: a device caches 1/4 of every
    # sequence's KV; attention DP caches its own 1/8 of the sequences whole: 1/8.
    args = {"tp": 8, "precision": "fp8", "input_tokens": 1000, "output_tokens": 1000}
    tp = engine.serve("Qwen3-235B-A22B", "H100", batch_size=64, **args).as_dict()
    dp = engine.serve("Qwen3-235B-A22B", "H100", batch_size=64, attention_dp=True, **args)
    dp = dp.as_dict()
    assert dp["kv_cache_bytes"] == tp["kv_cache_bytes"]
    assert tp["kv_cache_bytes_per_device"] == pytest.approx(tp["kv_cache_bytes"] / 4)
    assert dp["kv_cache_bytes_per_device"] == pytest.approx(dp["kv_cache_bytes"] / 8)
    # attention's weights are whole on every device: more weight bytes per device
    assert dp["weight_bytes_per_device"] > tp["weight_bytes_per_device"]


def test_expert_imbalance_raises_the_step_only_with_expert_parallelism():
    args = {"tp": 8, "precision": "fp8", **DECODE, "batch_size": 256}
    for ep, raises in ((8, True), (1, False)):
        even = engine.serve("Qwen3-235B-A22B", "H100", ep=ep, expert_imbalance=1.0, **args)
        skew = engine.serve("Qwen3-235B-A22B", "H100", ep=ep, expert_imbalance=1.5, **args)
        assert (skew.as_dict()["tpot_ms"] > even.as_dict()["tpot_ms"]) is raises
        assert skew.as_dict()["tpot_ms"] >= even.as_dict()["tpot_ms"]


def test_more_expert_parallelism_never_adds_expert_weights_per_rank():
    held = [
        engine.serve("Qwen3-235B-A22B", "H100", tp=8, ep=ep, precision="fp8", **DECODE).as_dict()[
            "weight_bytes_per_device"
        ]
        for ep in (1, 2, 4, 8)
    ]
    assert all(b <= a * (1 + 1e-12) for a, b in itertools.pairwise(held))


def test_grouped_gemm_rows_cost_time_not_work():
    args = {"tp": 8, "ep": 8, "precision": "fp8", "batch_size": 8, "context": 1000}
    none = engine.operators("Qwen3-235B-A22B", "H100", grouped_gemm_tokens=0, **args)
    some = engine.operators("Qwen3-235B-A22B", "H100", grouped_gemm_tokens=512, **args)
    none, some = none.set_index("name"), some.set_index("name")
    assert some.loc["routed_experts", "flops"] == none.loc["routed_experts", "flops"]
    assert some.loc["routed_experts", "time_ms"] >= none.loc["routed_experts", "time_ms"]


def test_expert_assumptions_are_registered_with_their_defaults():
    defaults = engine.Assumptions()
    assert (defaults.expert_imbalance, defaults.grouped_gemm_tokens) == (1.2, 90.0)
    names = {a["name"] if isinstance(a, dict) else a.name for a in engine.ASSUMPTIONS}
    assert {"expert_imbalance", "grouped_gemm_tokens"} <= names


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"tp": 8, "ep": 3}, "ep 3 must divide tp 8"),
        ({"tp": 1, "attention_dp": True}, "attention_dp needs a group"),
        ({"tp": 2, "attention_dp": "maybe"}, "attention_dp: expected on or off"),
    ],
)
def test_deployment_checks_its_split(fields, message):
    with pytest.raises(ValueError, match=message):
        engine.Deployment("Qwen3-235B-A22B", "H100", **fields)


def test_ep_must_divide_the_experts_and_needs_experts():
    with pytest.raises(ValueError, match=re.escape("ep 8: Llama-3.1-8B has no routed experts")):
        engine.serve("Llama-3.1-8B", "H100", tp=8, ep=8, input_tokens=10, output_tokens=10)
    dep = engine.Deployment("Qwen3-235B-A22B", "H100", tp=2, attention_dp="on")
    assert dep.attention_dp is True and dep.devices == 2


def test_cli_takes_ep_and_attention_dp(capsys):
    code = main(
        [
            "serve",
            "--model",
            "Qwen3-235B-A22B",
            "--hardware",
            "H100",
            "--tp",
            "8",
            "--ep",
            "8",
            "--attention-dp",
            "on",
            "--precision",
            "fp8",
            "--input-tokens",
            "100",
            "--output-tokens",
            "10",
            "--format",
            "json",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    r = json.loads(out)
    assert (r["ep"], r["attention_dp"], r["devices"]) == (8, True, 8)
    api = engine.serve(
        "Qwen3-235B-A22B",
        "H100",
        tp=8,
        ep=8,
        attention_dp=True,
        precision="fp8",
        input_tokens=100,
        output_tokens=10,
    )
    assert r["tpot_ms"] == pytest.approx(api.as_dict()["tpot_ms"])


def test_sweep_rows_equal_serve():
    df = engine.serve_sweep(
        "Qwen3-235B-A22B",
        "H100",
        tp=8,
        ep=[1, 8],
        attention_dp=[False, True],
        precisions="fp8",
        batch_sizes=[8, 256],
        input_tokens=1000,
        output_tokens=100,
    )
    assert len(df) == 8
    for r in df.to_dict("records"):
        one = engine.serve(
            "Qwen3-235B-A22B",
            "H100",
            tp=8,
            ep=int(r["ep"]),
            attention_dp=bool(r["attention_dp"]),
            precision="fp8",
            batch_size=int(r["batch_size"]),
            input_tokens=1000,
            output_tokens=100,
        ).as_dict()
        assert r["tpot_ms"] == pytest.approx(one["tpot_ms"], rel=1e-9)
        assert r["ttft_ms"] == pytest.approx(one["ttft_ms"], rel=1e-9)


def test_rank_experts_is_bounded_by_what_the_rank_holds():
    s = ops.ExpertSplit(ep=8.0, imbalance=1.2)
    moe = type("S", (), {"experts": 128.0, "experts_per_token": 8.0})()
    # 10,000 tokens touch all 128: the busiest rank reads its 16, not 1.2·16
    assert ops.rank_experts(moe, s, 10_000.0, xp=SCALAR) == pytest.approx(16.0)


def test_qwen3_235b_max_throughput_is_within_30_percent_of_its_published_figure(capsys):
    from engine.cli.main import main

    args = {"--model": "Qwen3-235B-A22B", "--hardware": "H100", "--tp": "8", "--ep": "8"}
    args |= {"--attention-dp": "on", "--precision": "fp8", "--concurrency": "max"}
    args |= {"--input-tokens": "1000", "--output-tokens": "1000", "--profile": "trtllm"}
    code = main(["load", *(word for pair in args.items() for word in pair), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    r = json.loads(out)
    # TensorRT-LLM 1.0's perf overview (data/measurements/trtllm-v1.0-perf-overview.csv, row
    # 147): 1,862.25 tokens/s per GPU on 8 H100 = 14,898 tokens/s. The row is one of the 112
    # the default profile (trtllm = trtllm-1.0) is fitted on, so this is in sample.
    assert r["profile"] == "trtllm"
    assert r["output_tokens_per_s"] == pytest.approx(14_898, rel=0.30)


def test_a_max_throughput_run_of_fewer_than_three_waves_is_measured_from_its_start():
    run = dict(tp=8, ep=8, attention_dp=True, precision="fp8", concurrency="max")
    run |= dict(input_tokens=1000, output_tokens=1000)
    short = engine.serve_load("Qwen3-235B-A22B", "H100", **run)
    (few,) = [w for w in short.warnings if w.code == "max_throughput_few_waves"]
    running = short["max_running_requests"]
    assert few.fields["requests"] == "2,000" and 3 * running >= 2000
    assert few.fields["need"] == f"{3 * running + 1:,}"
    assert few.fields["window"] == f"{short['measured_window_s']:.3g}"
    # from the start: the first wave whole, its prefill ramp and its decode, so the window is
    # at least one request's service (its margins alone gave 1.29 s before)
    assert short["measured_window_s"] >= short["e2e_latency_ms_p50"] / 1e3
    # at the number it asks for, the run measures whole waves and says nothing
    steady = engine.serve_load("Qwen3-235B-A22B", "H100", **run, requests=3 * running + 1)
    assert not [w for w in steady.warnings if w.code == "max_throughput_few_waves"]
    # the short run's figure is the first 1,800 completions' from the start, so below the
    # steady state (recorded: 15,245 and 17,735 tokens/s); both within 30 % of the published
    # 14,898 tokens/s
    assert short["output_tokens_per_s"] < steady["output_tokens_per_s"]
    for r in (short, steady):
        assert r["output_tokens_per_s"] == pytest.approx(14_898, rel=0.30)


def test_the_window_opens_at_the_start_only_for_a_short_max_throughput_run():
    # a closed loop of the same deployment keeps its margins' window whatever its length
    run = dict(tp=8, ep=8, attention_dp=True, precision="fp8", input_tokens=1000)
    run |= dict(output_tokens=1000)
    closed = engine.serve_load("Qwen3-235B-A22B", "H100", **run, concurrency=64, requests=400)
    assert not [w for w in closed.warnings if w.code == "max_throughput_few_waves"]
