"""The KV pool as each stack sizes it (engine/serving/memory.py): one number per deployment,
the same in the static batch's memory check, the load simulator and the planner."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.arrays import SCALAR
from engine.catalog.profiles import get_profile
from engine.catalog.scheduler import SchedulerDefaults
from engine.scenarios.workload import OpenLoop, Workload
from engine.serving.memory import RULE_CODES, usable_bytes

TUTORIAL = get_profile("tutorial")
# vLLM as Llama-3.1-405B's long-context deployments ran before chunked prefill was the rule:
# gpu_memory_utilization 0.9 (reserve 0.1) and max_num_batched_tokens = max_model_len 131,072.
VLLM_LIKE = replace(
    TUTORIAL,
    name="vllm-like",
    scheduler=SchedulerDefaults(
        max_batched_tokens=131072, chunked_prefill=False, kv_memory="total"
    ),
)
BIG = {"tp": 8, "precision": "fp8", "kv_precision": "bf16"}


def pool_tokens(profile) -> int:
    dep = engine.Deployment("Llama-3.1-405B", "H100", profile=profile, **BIG)
    work = Workload(input_tokens=128, output_tokens=128, requests=20, arrivals=OpenLoop(1.0))
    return engine.serve_load(dep, work)["kv_pool_tokens"]


def test_405b_on_8_h100_with_vllm_settings_keeps_room_for_activations_and_graphs():
    # Per H100: capacity 80 GiB = 85,899,345,920 B; weights 51,260,653,568 B (fp8 layers, TP 8,
    # the two vocabulary tables and the final norm 16-bit: 2 × 128,256 × 16,384 / 8 B more).
    # Activations at the token budget: 131,072 tokens × (4 · 16,384 + 3 · 53,248 / 8) × 2 B
    # = 131,072 × 85,504 × 2 = 22,414,360,576 B; CUDA graphs and workspaces 2^30 B.
    # usable = 0.9 · 85,899,345,920 − 22,414,360,576 − 1,073,741,824 = 53,821,308,928 B;
    # pool = 2,560,655,360 B; a 16-token block of 126 layers × 1 KV head × 2 × 128 × 2 B is
    # 1,032,192 B: 2,480 blocks = 39,680 tokens (vLLM reported 79,392 for this deployment;
    # the capacity rule alone gives 403,776).
    r = engine.serve(
        "Llama-3.1-405B",
        "H100",
        batch_size=1,
        input_tokens=128,
        output_tokens=128,
        profile=VLLM_LIKE,
        **BIG,
    )
    assert r["usable_memory_bytes"] == pytest.approx(53_821_308_928)
    assert r["weight_bytes_per_device"] == pytest.approx(51_260_653_568)
    # what the rule set aside before the reserve: activations + workspace
    assert r["runtime_memory_bytes"] == pytest.approx(22_414_360_576 + 1_073_741_824)
    assert pool_tokens(VLLM_LIKE) == 39_680
    assert pool_tokens(TUTORIAL) == 403_776  # the capacity rule (the tutorial's) is unchanged


def test_each_stacks_rule_by_hand():
    # 100 GB, reserve 0.1, 40 GB of weights, 5 GB of activations, 1 GB of workspace:
    # capacity 0.9 · 100 = 90; total (vLLM) 90 − 5 − 1 = 84; free (TensorRT-LLM)
    # 40 + 0.9 · (100 − 40 − 5 − 1) = 88.6 (GB)
    def dev(rule):
        return SimpleNamespace(
            capacity=100e9, reserve=0.1, workspace=1e9, kv_memory=RULE_CODES[rule]
        )

    got = {r: usable_bytes(dev(r), weights=40e9, activations=5e9, xp=SCALAR) for r in RULE_CODES}
    assert got == pytest.approx({"capacity": 90e9, "total": 84e9, "free": 88.6e9})
    # 120 GB of weights: nothing is free, and TensorRT-LLM's usable is what the runtime leaves,
    # 100 − 5 − 1 = 94 GB (the unclamped rule gave 120 + 0.9 · (100 − 120 − 6) = 96.6 GB, and
    # with 300 GB of weights 300 + 0.9 · (−206) = 114.6 GB usable of 100); vLLM's never goes
    # below 0
    big = {r: usable_bytes(dev(r), weights=120e9, activations=5e9, xp=SCALAR) for r in RULE_CODES}
    assert big == pytest.approx({"capacity": 90e9, "total": 84e9, "free": 94e9})
    huge = usable_bytes(dev("total"), weights=1e9, activations=95e9, xp=SCALAR)
    assert huge == 0.0  # 0.9 · 100 − 95 − 1 < 0


@settings(max_examples=200, deadline=None)
@given(
    capacity=st.floats(1e9, 1e12),
    reserve=st.floats(0.0, 0.99),
    weights=st.floats(0.0, 2e12),
    activations=st.floats(0.0, 1e12),
    rule=st.sampled_from(sorted(RULE_CODES)),
)
def test_usable_memory_is_between_zero_and_the_capacity(
    capacity, reserve, weights, activations, rule
):
    dev = SimpleNamespace(
        capacity=capacity, reserve=reserve, workspace=2.0**30, kv_memory=RULE_CODES[rule]
    )
    got = usable_bytes(dev, weights=weights, activations=activations, xp=SCALAR)
    assert 0.0 <= got <= capacity * (1 + 1e-12)


def test_serve_and_load_read_one_pool():
    trt = replace(TUTORIAL, name="trt-like", scheduler=SchedulerDefaults(kv_memory="free"))
    kw = {"tp": 8, "precision": "fp8", "profile": trt}
    static = engine.serve(
        "Llama-3.1-70B", "H100", batch_size=1, input_tokens=128, output_tokens=128, **kw
    )
    dep = engine.Deployment("Llama-3.1-70B", "H100", **kw)
    work = Workload(input_tokens=128, output_tokens=128, requests=20, arrivals=OpenLoop(1.0))
    load = engine.serve_load(dep, work)
    assert load["usable_memory_bytes"] == pytest.approx(static["usable_memory_bytes"])
    # TensorRT-LLM's share of the free memory: activations of the 2,048-token budget,
    # 2,048 × (4 · 8,192 + 3 · 28,672 / 8) × 2 B = 178,257,920 B, and 2^30 B of workspace
    w, capacity = static["weight_bytes_per_device"], static["memory_capacity_bytes"]
    free = capacity - w - 178_257_920 - 2**30
    assert static["usable_memory_bytes"] == pytest.approx(w + 0.9 * free)


def test_the_runtime_memory_a_rule_sets_aside_is_reported_and_explained_on_decode():
    # The default profile (TensorRT-LLM's "free" rule, reserve 0.05, budget 8,192 tokens),
    # Llama-3.1-8B fp16 on one H100: activations 8,192 × (4 · 4,096 + 3 · 14,336) × 2 B
    # = 8,192 × 59,392 × 2 = 973,078,528 B, + 2^30 B workspace = 2,046,820,352 B;
    # usable = w + 0.95 · (85,899,345,920 − w − 2,046,820,352), w = 16,060,522,496 B
    # = 16,060,522,496 + 0.95 · 67,792,003,072 = 80,462,925,414.4 B. Held back in all:
    # 85,899,345,920 − 80,462,925,414.4 = 5,436,420,505.6 B ("5.44 GB"), not 5 % of the
    # capacity (4.29 GB), which the page once implied.
    from ui.decode import view

    r = engine.serve("Llama-3.1-8B", "H100", batch_size=1, input_tokens=100, output_tokens=10)
    assert r["runtime_memory_bytes"] == pytest.approx(2_046_820_352)
    assert r["usable_memory_bytes"] == pytest.approx(80_462_925_414.4)
    text = view.fit_text(r.as_dict(), engine.load_catalog().hardware["H100"])
    assert "(5.44 GB held back: the stack's activations and workspace, 2.05 GB, and its 5%" in text
    # the tutorial's capacity rule sets nothing aside: the reserve is all that is held back
    t = engine.serve(
        "Llama-3.1-8B", "H100", batch_size=1, input_tokens=100, output_tokens=10, profile=TUTORIAL
    )
    assert t["runtime_memory_bytes"] == 0.0
    text = view.fit_text(t.as_dict(), engine.load_catalog().hardware["H100"])
    assert text.endswith("(8.59 GB held back: the 10% reserve)")  # 0.1 · 85,899,345,920 B
    # weights beyond the memory: TensorRT-LLM's rule leaves nothing free, so only the runtime
    # is held back. Qwen3-235B fp16 on one H100 (470 GB of weights): activations 8,192 ×
    # (4 · 4,096 + 3 · 12,288) × 2 B = 872,415,232 B, + 2^30 B = 1,946,157,056 B ("1.95 GB");
    # usable 85,899,345,920 − 1,946,157,056 = 83,953,188,864 B ("84 GB"), under the capacity
    q = engine.serve("Qwen3-235B-A22B", "H100", batch_size=1, input_tokens=100, output_tokens=10)
    assert not q["fits_in_memory"]
    assert q["usable_memory_bytes"] == pytest.approx(83_953_188_864)
    text = view.fit_text(q.as_dict(), engine.load_catalog().hardware["H100"])
    assert text.startswith("Does not fit: ") and "against 84 GB usable of 80 GiB" in text
    assert text.endswith(
        "(1.95 GB held back: the stack's activations and workspace; the weights leave nothing "
        "free for its 5% reserve)"
    )


def test_an_moe_layer_under_attention_dp_holds_every_ranks_tokens():
    from engine.catalog.resolve import default_catalog, resolve_model
    from engine.catalog.shapes import shapes_of
    from engine.serving.memory import activation_bytes_per_token

    s = shapes_of(resolve_model("Qwen3-235B-A22B", default_catalog()).arch)
    # Qwen3-235B-A22B's config.json: hidden 4,096, 8 routed experts of 1,536 a token
    assert (s.hidden, s.experts_per_token, s.expert_ffn) == (4096, 8, 1536)
    one = SimpleNamespace(tp=8.0, dp=1.0, act_bytes=2.0)
    eight = SimpleNamespace(tp=8.0, dp=8.0, act_bytes=2.0)
    # by hand, 16-bit activations on one of 8 devices: without attention DP, 4 × 4,096 hidden
    # buffers and 3 × 8 × 1,536 / 8 of the MLP = 16,384 + 4,608 elements = 41,984 bytes a token;
    # with it, 8 ranks' tokens gathered: 4 × 4,096 × 8 + 3 × 8 × 1,536 × 8 / 8 = 131,072 +
    # 36,864 elements = 335,872 bytes, so 2.75 GB at an 8,192-token budget (0.34 GB without)
    assert activation_bytes_per_token(s, one, SCALAR) == 41_984
    assert activation_bytes_per_token(s, eight, SCALAR) == 335_872
    # a dense model's layers gather nothing
    dense = shapes_of(resolve_model("Llama-3.1-70B", default_catalog()).arch)
    assert activation_bytes_per_token(dense, eight, SCALAR) == activation_bytes_per_token(
        dense, replace_dp(eight), SCALAR
    )


def replace_dp(lay):
    return SimpleNamespace(tp=lay.tp, dp=1.0, act_bytes=lay.act_bytes)
