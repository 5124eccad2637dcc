"""The training step by hand: FLOPs per token, memory per ZeRO stage, activations per recompute
mode, the bubble, a collective's time, the step's breakdown, and clear refusals (docs/model.md,
"Training step"). Every expected number is worked out in the comments."""

import math

import pytest

import engine
from engine.assumptions import TRAINING_NAMES
from engine.serving.parallel import ring_all_reduce_s
from engine.training.collectives import (
    Links,
    all_gather_s,
    all_to_all_s,
    link_for,
    reduce_scatter_s,
)

# A tiny GPT: L = 2 layers, h = 64, H = 4 heads of 16, V = 128, s = 16 tokens.
TINY = engine.gpt_architecture(layers=2, hidden=64, heads=4, vocab=128, seq_len=16)
EXACT = {
    "link_efficiency": 1.0,
    "link_latency_us": 0.0,
    "network_efficiency": 1.0,
    "network_latency_us": 0.0,
    "layer_overhead_us": 0.0,
}


def tiny(**kw):
    args = dict(gpus=8, global_batch_size=8, seq_len=16, micro_batch_size=1) | EXACT | kw
    return engine.train(TINY, "A100", **args)


def test_model_flops_per_token_is_6n_plus_attention():
    # N = 12·L·h² + V·h = 12·2·64² + 128·64 = 98,304 + 8,192 = 106,496 (matmul weights, the
    # tied LM head once); 6N = 638,976. Attention (PaLM): 12·L·h·s = 12·2·64·16 = 24,576.
    r = tiny()
    assert r["matmul_params"] == 106_496
    assert r["model_flops_per_token"] == 638_976 + 24_576
    assert r["model_flops_definition"].code == "model_flops_palm"
    assert "PaLM" in r.as_dict()["model_flops_definition"]


def test_hardware_flops_add_what_recomputation_runs_again():
    # Full: the layers' forward again, 2·(N − V·h) + 4·L·h·s = 2·98,304 + 4·2·64·16 = 204,800.
    # Selective: the attention core's forward, 4·L·h·s = 8,192.
    base = 638_976 + 24_576
    assert tiny(recompute="full")["hardware_flops_per_token"] == base + 204_800
    assert tiny(recompute="selective")["hardware_flops_per_token"] == base + 8_192
    assert tiny()["hardware_flops_per_token"] == base


def test_llama_flops_per_token_from_its_shapes():
    # Llama-3.1-8B: N = 32·(4096·(4096 + 2·1024) + 4096·4096 + 3·4096·14336) + 128256·4096
    #   = 32·218,103,808 + 525,336,576 = 7,504,658,432 (untied head; the embedding is a lookup)
    # attention at s = 8192: 6·L·H·(d + d)·s = 6·32·32·256·8192 = 12,884,901,888
    r = engine.train("Llama-3.1-8B", "H100", gpus=8, global_batch_size=8, seq_len=8192)
    assert r["matmul_params"] == 7_504_658_432
    assert r["model_flops_per_token"] == 6 * 7_504_658_432 + 12_884_901_888


# Weights held: per layer qkv 3h² + out h² + MLP 8h² + 2 LayerNorms of 2h (scale and bias):
# 12·4096 + 256 = 49,408; two layers 98,816; the embedding table 8,192 and the final norm 128:
# P = 107,136 parameters (biases and learned positions are not counted).
P = 107_136


@pytest.mark.parametrize(
    ("zero", "weights", "grads", "optimizer"),
    [
        (0, 2 * P, 2 * P, 12 * P),  # 214,272 / 214,272 / 1,285,632 bytes
        (1, 2 * P, 2 * P, 12 * P / 8),  # the optimizer state over dp = 8: 160,704
        (2, 2 * P, 2 * P / 8, 12 * P / 8),  # and the gradients: 26,784
        (3, 2 * P / 8, 2 * P / 8, 12 * P / 8),  # and the weights
    ],
)
def test_memory_terms_per_zero_stage(zero, weights, grads, optimizer):
    r = tiny(zero=zero)
    assert r["weight_bytes_per_gpu"] == pytest.approx(weights, rel=1e-12)
    assert r["gradient_bytes_per_gpu"] == pytest.approx(grads, rel=1e-12)
    assert r["optimizer_bytes_per_gpu"] == pytest.approx(optimizer, rel=1e-12)


@pytest.mark.parametrize(
    ("recompute", "attention", "activations"),
    [
        # Korthikanti et al.: 34h + 5·H·s bytes per token per layer = 2,176 + 320 = 2,496;
        # 16 tokens, 2 layers (one micro-batch in flight): 79,872
        ("none", "unfused", 79_872),
        ("none", "flash", 69_632),  # FlashAttention keeps no scores: 34h·16·2
        ("selective", "unfused", 69_632),  # the scores are recomputed
        ("full", "flash", 38_912),  # inputs 2h·16·2 = 4,096 + one layer rebuilt 34h·16 = 34,816
    ],
)
def test_activations_per_recompute_mode(recompute, attention, activations):
    assert tiny(recompute=recompute, attention=attention)["activation_bytes_per_gpu"] == (
        activations
    )


def test_bubble_of_1f1b_and_of_the_interleaved_schedule():
    # pp = 4, dp = 2 on 8 GPUs, B = 16, b = 1: m = 16 / 2 = 8 micro-batches
    big = engine.gpt_architecture(layers=8, hidden=64, heads=4, vocab=128, seq_len=16)
    args = dict(gpus=8, pp=4, global_batch_size=16, seq_len=16) | EXACT
    plain = engine.train(big, "A100", **args)
    assert plain["bubble_fraction"] == 3 / 8  # (p − 1)/m = 0.375
    interleaved = engine.train(big, "A100", vp=2, **args)
    assert interleaved["bubble_fraction"] == 3 / 16  # (p − 1)/(v·m) = 0.1875
    for r in (plain, interleaved):  # the bubble is that share of the m busy slots
        busy = r["step_time_s"] - r["bubble_s"] - r["comm_dp_s"] - r["optimizer_s"]
        assert r["bubble_s"] == pytest.approx(r["bubble_fraction"] * busy, rel=1e-12)


def test_ring_collectives_by_hand():
    # 1 GB over 8 devices at 100 GB/s, 1 µs a hop: (8−1)/8 · 1e9/1e11 + 7·1e-6 = 8.757 ms
    assert reduce_scatter_s(nbytes=1e9, devices=8, bandwidth=1e11, latency=1e-6) == pytest.approx(
        8.757e-3, rel=1e-12
    )
    assert all_gather_s(nbytes=1e9, devices=8, bandwidth=1e11, latency=1e-6) == reduce_scatter_s(
        nbytes=1e9, devices=8, bandwidth=1e11, latency=1e-6
    )
    # an all-reduce is a reduce-scatter then an all-gather: 17.514 ms
    assert ring_all_reduce_s(nbytes=1e9, devices=8, bandwidth=1e11, latency=1e-6) == pytest.approx(
        17.514e-3, rel=1e-12
    )
    assert all_to_all_s(nbytes=1e9, devices=8, bandwidth=1e11, latency=0.0) == pytest.approx(
        8.75e-3, rel=1e-12
    )
    assert (
        reduce_scatter_s(nbytes=1e9, devices=1, bandwidth=1e11, latency=1e-6) == 0.0
    )  # one device: nothing to do


def test_a_group_uses_nvlink_inside_a_node_and_the_network_across():
    links = Links(node_bw=300e9, node_lat=1e-6, net_bw=25e9, net_lat=3e-6, per_node=8)
    bw, lat = link_for(links, [8, 16])
    assert list(bw) == [300e9, 25e9] and list(lat) == [1e-6, 3e-6]


def test_tensor_parallel_traffic_by_hand():
    # tp = 2: per layer and pass 2 all-gathers + 2 reduce-scatters of T·h·2 = 16·64·2 = 2,048
    # bytes, each (2−1)/2 · 2,048 / 300e9 s; 2 passes (no recompute), 2 layers, m = 2
    # micro-batches (dp = 4, B = 8): 2·2·2·4 · 1,024/300e9 s
    r = tiny(tp=2)
    assert r["comm_tp_s"] == pytest.approx(32 * 1024 / 300e9, rel=1e-12)


def test_the_breakdown_adds_up_to_the_step():
    r = engine.train(
        "Llama-3.1-70B",
        "H100",
        gpus=128,
        tp=8,
        pp=4,
        vp=5,
        cp=2,
        zero=1,
        global_batch_size=256,
        seq_len=8192,
        recompute="selective",
    )
    parts = (
        "compute_s",
        "comm_tp_s",
        "comm_cp_s",
        "comm_ep_s",
        "comm_pp_s",
        "comm_dp_s",
        "overhead_s",
        "optimizer_s",
        "bubble_s",
    )
    assert sum(r[k] for k in parts) == pytest.approx(r["step_time_s"], rel=1e-12)
    assert r["tokens_per_s"] == pytest.approx(256 * 8192 / r["step_time_s"], rel=1e-12)
    assert r["mfu"] == pytest.approx(r["model_tflops_per_gpu"] * 1e12 / 989e12, rel=1e-12)


def test_time_and_cost_to_a_token_budget():
    r = engine.train(
        "Llama-3.1-8B",
        "H100",
        gpus=64,
        global_batch_size=512,
        seq_len=8192,
        zero=1,
        token_budget=15e12,
    )
    seconds = 15e12 / r["tokens_per_s"]
    assert r["time_to_train_days"] == pytest.approx(seconds / 86_400, rel=1e-12)
    # the catalogue's H100 list price, $6.16 per GPU-hour, times 64 GPUs
    assert r["cost_to_train_usd"] == pytest.approx(64 * seconds / 3600 * 6.16, rel=1e-12)
    priced = engine.train(
        "Llama-3.1-8B",
        "H100",
        gpus=64,
        global_batch_size=512,
        seq_len=8192,
        zero=1,
        price_per_gpu_hour=2.0,
    )
    assert priced["price_per_gpu_hour_usd"] == 2.0


def test_fp8_uses_the_fp8_peak_and_says_when_there_is_none():
    h100 = engine.train(
        "Llama-3.1-8B", "H100", gpus=8, global_batch_size=8, seq_len=4096, precision="fp8", zero=3
    )
    assert h100["peak_flop_per_s"] == 1979e12 and not h100.warnings
    a100 = engine.train(
        "Llama-3.1-8B", "A100", gpus=8, global_batch_size=8, seq_len=4096, precision="fp8"
    )
    assert a100["peak_precision"] == "fp16" and a100.warnings[0].code == "training_peak_fallback"
    assert "no fp8 peak" in str(a100.warnings[0])


def test_every_assumption_the_model_reads_is_echoed():
    r = tiny()
    assert tuple(r.as_dict()["assumptions"]) == TRAINING_NAMES
    assert r.as_dict()["assumptions"]["network_efficiency"] == 1.0  # the override


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tp": 3}, "tp must divide the attention heads"),
        ({"gpus": 6, "tp": 4}, "gpus is not a multiple of tp·pp·cp"),
        ({"global_batch_size": 4}, "global batch is not a multiple of dp"),
        ({"pp": 2, "vp": 3, "global_batch_size": 8}, "vp > 1 needs"),  # 1 layer per stage
        ({"ep": 2}, "ep > 1 needs a mixture of experts"),
        ({"zero": 3, "pp": 2}, "ZeRO-2/3"),
        ({"recompute": "some"}, "recompute must be one of none, selective, full"),
        ({"zero": 4}, "zero must be one of 0, 1, 2, 3"),
        ({"precision": "int8"}, "training precision must be one of bf16, fp16, fp8"),
        ({"activation_fraction": 0.2}, "does not use 'activation_fraction'"),
        ({"overlap_fraction": 2.0}, "overlap_fraction must be a number from 0 to 1"),
        ({"gpus": 0}, "gpus: expected a whole number"),
        ({"token_budget": -1.0}, "token_budget must be"),
        ({"profile": "nope"}, "unknown training profile 'nope'"),
    ],
)
def test_bad_configurations_are_refused_with_the_rule(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tiny(**kwargs)


def test_nodes_without_a_network_are_refused_beyond_one_node():
    # L4: 8 PCIe cards per node, no inter-node network catalogued
    with pytest.raises(ValueError, match="no inter-node network"):
        engine.train("Llama-3.2-1B", "L4", gpus=16, global_batch_size=16, seq_len=2048)
    ok = engine.train("Llama-3.2-1B", "L4", gpus=8, global_batch_size=16, seq_len=2048)
    assert math.isfinite(ok["step_time_s"])


def test_mixture_of_experts_counts_active_weights_and_expert_traffic():
    # Mixtral-8x7B: k = 2 of 8 experts per token; ep = 8 splits them over 8 GPUs
    r = engine.train(
        "Mixtral-8x7B",
        "H100",
        gpus=64,
        tp=2,
        pp=4,
        ep=8,
        global_batch_size=256,
        seq_len=4096,
        zero=1,
    )
    assert r["comm_ep_s"] > 0
    assert 12e9 < r["matmul_params"] < 14e9  # about 12.9 B active (Mistral AI: 12.9 B)
