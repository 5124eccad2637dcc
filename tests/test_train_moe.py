"""MoE training: the busiest expert rank's imbalance in the all-to-all and the expert GEMMs,
and the published MoE layouts (DeepSeek-V3, Qwen3-235B) accepted."""

import pytest

import engine

BASE = dict(gpus=64, global_batch_size=64, seq_len=4096, tp=1, pp=1, micro_batch_size=1)
BASE |= dict(zero=1, recompute="full")


def step(imbalance, **kw):
    return engine.train("Qwen3-30B-A3B", "H100", expert_imbalance=imbalance, **(BASE | kw))


def test_the_all_to_all_carries_the_busiest_ranks_tokens():
    one, half, two = (step(x, ep=8)["comm_ep_s"] for x in (1.0, 1.5, 2.0))
    # bytes ∝ imbalance, latency fixed: t(x) = a·x + b, so t(2) − t(1) = 2·(t(1.5) − t(1))
    assert two - one == pytest.approx(2 * (half - one))
    assert two > 1.9 * one  # the bytes dominate at 4,096 tokens per micro-batch
    assert step(1.2, ep=8).as_dict()["assumptions"]["expert_imbalance"] == 1.2


def test_imbalance_slows_the_experts_and_only_with_expert_parallelism():
    even, skewed = step(1.0, ep=8), step(2.0, ep=8)
    assert skewed["compute_s"] > even["compute_s"]
    assert skewed["model_flops_per_token"] == even["model_flops_per_token"]  # MFU's FLOPs
    assert step(1.0, ep=1)["step_time_s"] == step(3.0, ep=1)["step_time_s"]  # no EP: no skew


@pytest.mark.parametrize(
    ("model", "layout", "stages"),
    [
        # DeepSeek-V3 (report §3.2.1: PP 16, EP 64 over 8 nodes, ZeRO-1): 61 layers on 16
        # stages, ⌈61/16⌉ = 4, 64 − 61 = 3 short: 3 + … + 3
        ("DeepSeek-V3", dict(gpus=2048, tp=1, pp=16, ep=64), (3, 4, 3)),
        # Qwen3-235B: 94 layers on 8 stages, 11 + 6 × 12 + 11
        ("Qwen3-235B-A22B", dict(gpus=1024, tp=1, pp=8, ep=8), (11, 12, 11)),
    ],
)
def test_the_published_moe_layouts_are_accepted(model, layout, stages):
    r = engine.train(
        model,
        "H100",
        **layout,
        global_batch_size=2048,
        seq_len=4096,
        micro_batch_size=1,
        zero=1,
        recompute="full",
    )
    assert (r["first_stage_layers"], r["stage_layers"], r["last_stage_layers"]) == stages
    assert r["comm_ep_s"] > 0 and r["fits_in_memory"]
