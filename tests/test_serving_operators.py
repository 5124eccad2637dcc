"""The serving model's operators (engine/serving/operators.py, op_table.py, closed_form.py,
parallel.py): hand-computed operators of a toy model, closed-form sums against loops,
published shapes (docs/model.md, "Serving model")."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import TUTORIAL_PROFILE
from engine.arrays import SCALAR
from engine.catalog.arch import Architecture
from engine.catalog.shapes import kv_bytes_per_token_layer, shapes_of
from engine.catalog.specs import HardwareSpec
from engine.serving import closed_form, parallel
from engine.serving import operators as ops
from engine.serving.op_table import operators

# A toy decoder small enough to count by hand: 2 layers, h 8, 2 heads of 4, 1 KV head, SwiGLU
# width 16, vocabulary 32.
TOY = Architecture(
    layers=2,
    hidden=8,
    heads=2,
    kv_heads=1,
    head_dim=4,
    intermediate=16,
    vocab=32,
    context_length=1000,
)
# 1 TFLOP/s fp16, 1 GB/s: every toy operator is memory-bound (ridge 500 FLOP/B at η 0.5).
# The by-hand figures below use the tutorial profile's assumptions (efficiency 0.5, full
# bandwidth, 10 µs per layer, full link bandwidth, the accelerator's own link latency), so
# those tests name it: the default profile is a fitted one (engine.DEFAULT_PROFILE).
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
# Bytes of one toy decode step (B = 1, context 10, fp16), operator by operator:
#   norm      F 4·1·8 = 32         bytes 8·2 (weights) + 2·1·8·2 (in/out) = 48       × 4
#   qkv       8·(2·4 + 1·8) = 128 weights: F 256, bytes 256 + (8 + 16)·2 = 304       × 2
#   attention F 2·2·(4+4)·10 = 320; Q/O 1·2·8·2 = 32, KV write 16, read 10·16 = 160 × 2
#   o_proj    2·4·8 = 64 weights: F 128, bytes 128 + (8 + 8)·2 = 160                 × 2
#   mlp       3·8·16 = 384 weights: F 768, bytes 768 + (16 + 2·2·16)·2 = 928         × 2
#   embedding bytes 16 + 16 = 32; final norm F 32, bytes 48; lm_head F 2·32·8 = 512,
#   bytes 512 + (8 + 32)·2 = 592
TOY_STEP_FLOP = 4 * 32 + 2 * 256 + 2 * 320 + 2 * 128 + 2 * 768 + 32 + 512  # 3616
TOY_STEP_BYTES = 4 * 48 + 2 * 304 + 2 * 208 + 2 * 160 + 2 * 928 + 32 + 48 + 592  # 4064


def test_toy_decode_step_by_hand():
    df = operators(TOY, TOY_HW, phase="decode", batch_size=1, context=10, profile=TUTORIAL_PROFILE)
    assert (df["count"] * df["flops"]).sum() == pytest.approx(TOY_STEP_FLOP)
    assert (df["count"] * df["bytes"]).sum() == pytest.approx(TOY_STEP_BYTES)
    att = df.set_index("name").loc["attention"]
    assert (att["flops"], att["kv_bytes"], att["layer"]) == (320, 16 + 160, "0–1")
    # Every operator is memory-bound: 4064 B / 1 GB/s = 4.064 µs for the step's operators,
    # then the overhead row: 2 layers · 10 µs + no dispatch = 20 µs; the step 24.064 µs.
    ops_rows = df[df["op_class"] != "overhead"]
    assert set(ops_rows["bottleneck"]) == {"memory"}
    assert ops_rows["total_time_ms"].sum() == pytest.approx(4.064e-3)
    assert df["total_time_ms"].sum() == pytest.approx(24.064e-3)


def test_ring_all_reduce_by_hand():
    # 2·(4−1)/4 · 1 MB / 1 GB/s = 1.5 ms, plus 2·3 hops · 1 µs = 6 µs
    assert parallel.ring_all_reduce_s(
        nbytes=1e6, devices=4, bandwidth=1e9, latency=1e-6
    ) == pytest.approx(1.506e-3)
    assert (
        parallel.ring_all_reduce_s(nbytes=1e6, devices=1, bandwidth=1e9, latency=1e-6) == 0.0
    )  # one device: no collective


def test_toy_tensor_parallel_comm_rows():
    # TP 2, one token: all-reduce of 1·8·2 = 16 B: 2·1/2·16/1e9 + 2·1·1e-6 = 2.016 µs, two per
    # layer; the single KV head is replicated on both devices.
    df = operators(TOY, TOY_HW, batch_size=1, context=10, tp=2, profile=TUTORIAL_PROFILE)
    df = df.set_index("name")
    assert df.loc["all_reduce", "time_ms"] == pytest.approx(2 * 2.016e-3)
    assert df.loc["all_reduce", "count"] == 2
    assert df.loc["attention", "kv_bytes"] == 16 + 160  # replicated, not halved


@settings(max_examples=200, deadline=None)
@given(
    g0=st.floats(0, 10),
    g1=st.floats(-1, 1),
    m0=st.floats(0, 10),
    m1=st.floats(-1, 1),
    a=st.integers(1, 60),
    n=st.integers(0, 60),
    w=st.one_of(st.integers(1, 80), st.just(None)),
)
def test_closed_form_sums_equal_loops(g0, g1, m0, m1, a, n, w):
    b, win = a + n - 1, math.inf if w is None else float(w)
    xs = [min(c, win) for c in range(a, b + 1)]
    loop_max = sum(max(g0 + g1 * x, m0 + m1 * x) for x in xs)
    loop_line = sum(m0 + m1 * x for x in xs)
    args = (float(a), float(b), win, SCALAR)
    max_sum, count, total = closed_form.step_sums(g0, g1, m0, m1, *args)
    assert max_sum == pytest.approx(loop_max, abs=1e-6)
    assert m0 * count + m1 * total == pytest.approx(loop_line, abs=1e-6)
    assert (count, total) == (pytest.approx(len(xs)), pytest.approx(sum(xs)))


def test_mixture_of_experts_reads_only_touched_experts():
    # Mixtral: 8 experts, 2 per token; batch 1 touches 8·(1 − (6/8)^1) = 2, batch 256 all 8
    s = SimpleNamespace(experts=8.0, experts_per_token=2.0)
    assert ops.experts_touched(s, 1.0) == pytest.approx(2.0)
    assert ops.experts_touched(s, 256.0) == pytest.approx(8.0)
    dense = SimpleNamespace(experts=0.0, experts_per_token=0.0)
    assert ops.experts_touched(dense, 7.0) == 0.0


def test_moe_operators_read_two_of_eight_experts_at_batch_one():
    moe = Architecture(
        layers=2,
        hidden=8,
        heads=2,
        kv_heads=1,
        head_dim=4,
        intermediate=0,
        vocab=32,
        context_length=100,
        experts=8,
        experts_per_token=2,
        expert_intermediate=16,
    )
    one = 3 * 8 * 16 * 2  # one expert's bytes: 3 matrices of 8×16 at 2 B
    for batch, touched in ((1, 2), (256, 8)):
        df = operators(moe, TOY_HW, batch_size=batch, context=10).set_index("name")
        assert df.loc["routed_experts", "weight_bytes"] == pytest.approx(touched * one)


def test_mean_keys_of_causal_prefill():
    # causal: (S+1)/2 keys; window 4 over S = 10: (4·5/2 + 6·4)/10 = 3.4
    assert ops.mean_keys(9.0, math.inf, SCALAR) == pytest.approx(5.0)
    assert ops.mean_keys(10.0, 4.0, SCALAR) == pytest.approx(3.4)


def test_prefill_attention_is_causal_flash_attention():
    # S = 9: each of 9 tokens attends (9+1)/2 = 5 keys: 9·32·5 = 1440 FLOPs; bytes: Q/O 9·32,
    # KV written 9·16 and read once 9·16 (the S×S scores never reach memory)
    df = operators(TOY, TOY_HW, phase="prefill", batch_size=1, context=9).set_index("name")
    assert df.loc["attention", "flops"] == pytest.approx(1440)
    assert df.loc["attention", "bytes"] == pytest.approx(9 * 32 + 9 * 16 + 9 * 16)


def test_llama_8b_decode_flops_are_twice_the_non_embedding_parameters():
    # 2 FLOPs per weight per token: 2·(8.03e9 − 128256·4096) = 1.501e10 at context 1
    from engine.catalog.arch import embedding_params, param_count
    from engine.catalog.resolve import default_catalog

    arch = default_catalog().find_model("Llama-3.1-8B").arch
    df = operators("Llama-3.1-8B", "A100", batch_size=1, context=1)
    expected = 2 * (param_count(arch) - embedding_params(arch))
    assert (df["count"] * df["flops"]).sum() == pytest.approx(expected, rel=0.001)


def test_attention_share_grows_with_context():
    shares = []
    for context in (128, 8192, 131072):
        df = operators("Llama-3.1-8B", "A100", batch_size=1, context=context)
        att = df["op_class"] == "attention"
        shares.append(df.loc[att, "total_time_ms"].sum() / df["total_time_ms"].sum())
    assert shares[0] < 0.01 < shares[1] < 0.1 < 0.5 < shares[2]


def test_kv_bytes_per_token_from_shapes():
    # Llama-3.1-8B: 2·8·128·2 B = 4096 per layer (131,072 per token over 32 layers);
    # DeepSeek-V3 (MLA): (512 + 64)·2 = 1152 per layer, 61 layers = 70,272 B per token
    from engine.catalog.resolve import default_catalog

    cat = default_catalog()
    llama = shapes_of(cat.find_model("Llama-3.1-8B").arch)
    ds = shapes_of(cat.find_model("DeepSeek-V3").arch)
    assert kv_bytes_per_token_layer(s=llama, kv_bytes=2.0, tp=1.0, xp=SCALAR) == (4096, 4096)
    full, per_device = kv_bytes_per_token_layer(s=ds, kv_bytes=2.0, tp=8.0, xp=SCALAR)
    assert (full * ds.layers, per_device) == (70272, 1152)  # the latent is not split by TP


@settings(max_examples=60, deadline=None)
@given(
    context=st.integers(1, 100_000),
    batch=st.integers(1, 512),
    phase=st.sampled_from(["decode", "prefill"]),
)
def test_every_operator_time_is_at_least_both_lines(context, batch, phase):
    df = operators(TOY, TOY_HW, phase=phase, batch_size=batch, context=context)
    df = df[df["op_class"] != "overhead"]
    assert (df["time_ms"] >= df["t_compute_ms"]).all()
    assert (df["time_ms"] >= df["t_memory_ms"]).all()
    assert ((df["time_ms"] == df["t_compute_ms"]) | (df["time_ms"] == df["t_memory_ms"])).all()


def test_operators_rejects_bad_input():
    with pytest.raises(ValueError, match="phase"):
        operators(TOY, TOY_HW, phase="train", context=1)
    with pytest.raises(ValueError, match="context"):
        operators(TOY, TOY_HW, context=0)
    with pytest.raises(ValueError, match="does not divide"):
        operators(TOY, TOY_HW, context=1, tp=3)


def test_a_decode_step_reaches_input_plus_output_at_their_limits():
    """A request takes input and output tokens up to MAX_TOKENS each, so its last decode step
    holds up to 2 × MAX_TOKENS tokens: operators takes that context and refuses one more."""
    from engine.checks import MAX_SEQUENCE, MAX_TOKENS

    assert MAX_SEQUENCE == 2 * MAX_TOKENS
    df = operators("Llama-3.1-8B", "A100", batch_size=1, context=MAX_SEQUENCE)
    assert (df["time_ms"] > 0).all()
    with pytest.raises(ValueError, match="context: expected a whole number from 1 to 20,000,000"):
        operators("Llama-3.1-8B", "A100", batch_size=1, context=MAX_SEQUENCE + 1)
