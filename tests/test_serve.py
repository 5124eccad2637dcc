"""Whole requests on TP×PP accelerators (engine/serving/serve.py; docs/model.md, "Serving model"):
hand-computed steps, the published shapes' consequences, properties and error messages."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_serving_operators import TOY, TOY_HW

from engine import DEFAULT_PROFILE, TUTORIAL_PROFILE, operators, serve
from engine.catalog.resolve import default_catalog

REQUEST = {"batch_size": 1, "input_tokens": 128, "output_tokens": 128}
# The by-hand figures (efficiency 0.5, full bandwidth, 10 µs per layer, 10 % reserve, the
# accelerators' own link latency) are the tutorial profile's: those tests name it.
TUTORIAL = {"profile": TUTORIAL_PROFILE}


def test_toy_decode_step_by_hand():
    # I = 9, O = 2: one decode step at context 10. Its operators move 4064 B at 1 GB/s
    # (tests/test_serving_operators.py), all memory-bound: 4.064 µs, plus 2 layers · 10 µs, no
    # dispatch.
    r = serve(TOY, TOY_HW, batch_size=1, input_tokens=9, output_tokens=2, **TUTORIAL)
    assert r["tpot_ms"] == pytest.approx(24.064e-3)
    assert r["decode_bytes_per_step"] == pytest.approx(4064)
    assert r["e2e_latency_ms"] == pytest.approx(r["ttft_ms"] + 24.064e-3)
    assert r["decode_bottleneck"] == "overhead"  # 20 µs of the 24 are the per-layer overhead
    # 2 output tokens over the whole request, per user 1 / 24.064 µs
    assert r["output_tokens_per_s"] == pytest.approx(2 / (r["e2e_latency_ms"] / 1e3))
    assert r["tokens_per_s_per_user"] == pytest.approx(1 / 24.064e-6)


def test_toy_pipeline_and_tensor_parallel_communication():
    # TP 2: each step adds 2 layers · 2 all-reduces of 2.016 µs (tests/test_serving_operators.py)
    # = 8.064 µs.
    # PP 2: one stage-to-stage send of 16 B: 16 / 1e9 + 1 µs = 1.016 µs per decode step.
    kw = {"batch_size": 1, "input_tokens": 9, "output_tokens": 2} | TUTORIAL
    tp = serve(TOY, TOY_HW, tp=2, **kw)
    pp = serve(TOY, TOY_HW, pp=2, **kw)
    assert tp["decode_comm_ms"] == pytest.approx(8.064e-3)
    assert pp["decode_comm_ms"] == pytest.approx(1.016e-3)
    assert pp["pp_bubble_fraction"] == 0.5 and pp["devices"] == 2
    assert any("replicated KV head" in w for w in tp.as_dict()["warnings"])


def test_toy_memory_per_device_by_hand():
    # Per layer: norms 2·8·2 = 32 B, qkv 256, o 128, mlp 768 -> 1184 B; the ends: embedding
    # 32·8·2 = 512, final norm 16, untied head 512. KV: 16 B per token per layer, 9 + 2 tokens.
    kw = {"batch_size": 1, "input_tokens": 9, "output_tokens": 2} | TUTORIAL
    one = serve(TOY, TOY_HW, **kw)
    assert one["weight_bytes_per_device"] == 2 * 1184 + 512 + 16 + 512  # 3408
    assert one["kv_cache_bytes"] == one["kv_cache_bytes_per_device"] == 2 * 11 * 16  # 352
    # PP 2: the fullest stage holds 1 layer and one vocabulary table, half the cache
    pp = serve(TOY, TOY_HW, pp=2, **kw)
    assert (pp["weight_bytes_per_device"], pp["kv_cache_bytes_per_device"]) == (1712, 176)
    # TP 2: qkv 8·(1·4 + 1·8)·2 = 192 (the KV head replicated), o 64, mlp 384, norms whole
    # (32): 672 per layer; the tables split: 256 + 256, final norm 16
    tp = serve(TOY, TOY_HW, tp=2, **kw)
    assert tp["weight_bytes_per_device"] == 2 * 672 + 256 + 16 + 256  # 1872
    assert tp["usable_memory_bytes"] == pytest.approx(0.9e9)


@pytest.mark.parametrize("model", ["Llama-3.1-8B", "Mixtral-8x7B", "Gemma-2-9B", "DeepSeek-V3"])
def test_e2e_is_ttft_plus_the_decode_steps(model):
    r = serve(model, "H200", tp=8, batch_size=4, input_tokens=500, output_tokens=64)
    assert r["e2e_latency_ms"] == pytest.approx(r["ttft_ms"] + 63 * r["tpot_ms"])
    assert r["output_tokens_per_s"] == pytest.approx(4 * 64 / r["e2e_latency_ms"] * 1e3)
    assert r["output_tokens_per_s_per_gpu"] == pytest.approx(r["output_tokens_per_s"] / 8)


def test_no_communication_on_one_device():
    r = serve("Llama-3.1-8B", "A100", **REQUEST)
    assert r["prefill_comm_ms"] == 0 and r["decode_comm_ms"] == 0 and r["devices"] == 1


def test_one_output_token_is_the_prefill_only():
    r = serve("Llama-3.1-8B", "A100", batch_size=2, input_tokens=100, output_tokens=1)
    assert r["e2e_latency_ms"] == r["ttft_ms"]
    assert math.isnan(r["tpot_ms"]) and math.isnan(r["tokens_per_s_per_user"])
    assert r["decode_bottleneck"] == "none"
    assert any("no decode step" in w for w in r.as_dict()["warnings"])


def test_llama_70b_fp16_needs_two_a100s():
    # 70.6e9 params · 2 B = 141 GB > 80 GiB · 0.9 = 77.3 GB usable; TP 2 holds half each
    one = serve("Llama-3.1-70B", "A100", **REQUEST)
    two = serve("Llama-3.1-70B", "A100", tp=2, **REQUEST)
    assert not one["fits_in_memory"] and two["fits_in_memory"]
    assert one["weight_bytes_per_device"] == pytest.approx(141.1e9, rel=0.002)
    half = one["weight_bytes_per_device"] / 2
    assert two["weight_bytes_per_device"] == pytest.approx(half, rel=0.001)
    assert "does not fit" in "; ".join(one.as_dict()["warnings"])


def test_pcie_communication_weighs_far_more_than_nvlink():
    # Llama-3.1-70B on 4 devices, 256 sequences: the all-reduces carry 256·8192·2 B = 4.2 MB,
    # which PCIe Gen4 (32 GB/s) moves 14x slower than NVLink 4 (450 GB/s)
    kw = {"tp": 4, "batch_size": 256, "input_tokens": 128, "output_tokens": 128} | TUTORIAL
    pcie = serve("Llama-3.1-70B", "L40S", **kw)["decode_comm_share"]
    nvlink = serve("Llama-3.1-70B", "H100", **kw)["decode_comm_share"]
    assert pcie > 0.3 and nvlink < 0.15 and pcie > 2.5 * nvlink


def test_deepseek_v3_caches_one_latent_per_token():
    # 61 layers · (512 + 64) · 2 B = 70,272 B per token at bf16 (MLA)
    r = serve(
        "DeepSeek-V3",
        "H200",
        tp=8,
        precision="fp8",
        kv_precision="bf16",
        batch_size=3,
        input_tokens=1000,
        output_tokens=100,
    )
    assert r["kv_cache_bytes"] == pytest.approx(70272 * 3 * 1100)
    assert r["kv_cache_bytes_per_device"] == pytest.approx(r["kv_cache_bytes"])  # replicated


def test_mistral_7b_caches_at_most_its_window():
    # Mistral-7B-v0.1: 32 layers · 2 · 8 · 128 · 2 B = 131,072 B per token, window 4096
    def kv(tokens: int) -> float:
        return serve("Mistral-7B-v0.1", "A100", input_tokens=tokens, output_tokens=1)[
            "kv_cache_bytes"
        ]

    assert kv(4000) == pytest.approx(131072 * 4001)
    assert kv(4095) == kv(8000) == kv(30000) == pytest.approx(131072 * 4096)


def test_mixtral_touches_two_experts_at_batch_one_and_all_at_256():
    # 8 · (1 − (6/8)^1) = 2; 8 · (1 − (6/8)^256) = 8
    one = serve("Mixtral-8x7B", "H100", tp=2, **REQUEST)
    many = serve("Mixtral-8x7B", "H100", tp=2, **(REQUEST | {"batch_size": 256}))
    assert one["experts_touched_per_layer"] == pytest.approx(2.0)
    assert many["experts_touched_per_layer"] == pytest.approx(8.0)


def test_assumptions_move_the_results_and_are_echoed():
    base = serve("Llama-3.1-8B", "A100", **REQUEST, **TUTORIAL)
    slow = serve(
        "Llama-3.1-8B", "A100", bandwidth_efficiency=0.5, memory_reserve=0.5, **REQUEST, **TUTORIAL
    )
    assert slow["tpot_ms"] > 1.8 * base["tpot_ms"]  # memory-bound decode: about 2x
    assert slow["usable_memory_bytes"] == pytest.approx(0.5 * 80 * 2**30)
    echoed = slow.as_dict()["assumptions"]
    assert echoed["bandwidth_efficiency"] == 0.5 and echoed["memory_reserve"] == 0.5
    assert echoed["layer_overhead_us"] == 10.0 and echoed["link_latency_us"] is None
    assert base.as_dict()["profile"] == "tutorial"
    # no profile named: the default's, recorded by name
    assert serve("Llama-3.1-8B", "A100", **REQUEST).as_dict()["profile"] == DEFAULT_PROFILE
    far = serve("Llama-3.1-70B", "H100", tp=4, link_latency_us=100.0, **REQUEST, **TUTORIAL)
    near = serve("Llama-3.1-70B", "H100", tp=4, **REQUEST, **TUTORIAL)
    # 80 layers · 2 all-reduces · one step each · (100 − 0.6) µs more per step: a decode
    # step's message, 8·8192·2 B = 128 KiB, is under 512 KiB on 4 peer-to-peer H100, so the
    # stacks' one-shot all-reduce runs (a ring would pay 2·3 steps)
    gap = far["decode_comm_ms"] - near["decode_comm_ms"]
    assert gap == pytest.approx(160 * 1 * 99.4e-3)


def test_warnings_for_a_missing_peak_and_tp_across_nodes():
    fp8 = serve("Llama-3.1-8B", "A100", precision="fp8", **REQUEST)
    assert fp8["peak_precision"] == "fp16"
    assert any("no peak listed" in w for w in fp8.as_dict()["warnings"])
    wide = serve("Llama-3.1-405B", "H100", tp=16, **REQUEST)
    assert any("beyond one node" in w for w in wide.as_dict()["warnings"])


def test_errors_are_clear():
    resnet = default_catalog().find_model("ResNet-50")
    with pytest.raises(ValueError, match="needs a decoder LLM with shapes"):
        serve(resnet, "A100", **REQUEST)
    with pytest.raises(ValueError, match="tp 3 does not divide"):
        serve("Llama-3.1-8B", "A100", tp=3, **REQUEST)
    with pytest.raises(ValueError, match="pp 33 exceeds"):
        serve("Llama-3.1-8B", "A100", pp=33, **REQUEST)
    single = replace(TOY_HW, devices_per_node=1, interconnect_bandwidth_bytes_per_s=0.0)
    with pytest.raises(ValueError, match="no device-to-device link"):
        serve(TOY, single, tp=2, **REQUEST)
    for bad in ({"input_tokens": 0}, {"output_tokens": 2.5}, {"batch_size": True}):
        with pytest.raises(ValueError, match="whole number"):
            serve("Llama-3.1-8B", "A100", **(REQUEST | bad))
    with pytest.raises(ValueError, match="unknown KV precision"):
        serve("Llama-3.1-8B", "A100", kv_precision="fp12", **REQUEST)
    with pytest.raises(ValueError, match="unknown assumption"):
        serve("Llama-3.1-8B", "A100", efficency=0.5, **REQUEST)


@settings(max_examples=40, deadline=None)
@given(
    model=st.sampled_from(["Llama-3.1-70B", "Mixtral-8x7B", "DeepSeek-V3", "Gemma-2-9B"]),
    batch=st.integers(1, 64),
    tokens=st.integers(1, 4000),
)
def test_more_devices_never_need_more_memory_per_device(model, batch, tokens):
    kw = {"batch_size": batch, "input_tokens": tokens, "output_tokens": 16}
    memory = [
        serve(model, "H100", tp=tp, pp=pp, **kw)["memory_per_device_bytes"]
        for tp, pp in ((1, 1), (2, 1), (4, 1), (8, 1), (8, 2), (8, 4))
    ]
    assert all(a >= b for a, b in itertools.pairwise(memory))


@settings(max_examples=40, deadline=None)
@given(
    tokens=st.integers(2, 20_000),
    more=st.integers(1, 5000),
    batch=st.integers(1, 128),
    model=st.sampled_from(["Llama-3.1-8B", "Mistral-7B-v0.1", "Gemma-2-9B"]),
)
def test_kv_linear_up_to_the_window_and_steps_grow_with_context_and_batch(
    tokens, more, batch, model
):
    def run(b: int, i: int):
        return serve(model, "A100", batch_size=b, input_tokens=i, output_tokens=2)

    base, longer, wider = run(batch, tokens), run(batch, tokens + more), run(batch + 1, tokens)
    arch = default_catalog().find_model(model).arch
    per_layer = 2 * arch.kv_heads * arch.head_dim * 2  # K and V at fp16
    window = arch.sliding_window or math.inf
    local = arch.sliding_layers if arch.sliding_window else 0
    cached = (arch.layers - local) * (tokens + 2) + local * min(tokens + 2, window)
    assert base["kv_cache_bytes"] == pytest.approx(batch * per_layer * cached)
    assert longer["tpot_ms"] >= base["tpot_ms"] and wider["tpot_ms"] >= base["tpot_ms"]
    assert longer["ttft_ms"] >= base["ttft_ms"] and wider["ttft_ms"] >= base["ttft_ms"]


def _step_ms(model, hw, *, phase, batch, context, tp=1, pp=1) -> float:
    """One forward step from the operator table: Σ total_time_ms (with overhead and comm),
    under the tutorial profile (its 10 µs per layer is checked)."""
    df = operators(
        model, hw, phase=phase, batch_size=batch, context=context, tp=tp, pp=pp, **TUTORIAL
    )
    layers = default_catalog().find_model(model).arch.layers
    overhead = df.set_index("name").loc["overhead", "total_time_ms"]
    assert overhead == pytest.approx(layers * 0.010 + 0.010)  # L · 10 µs + H100's 10 µs
    return df["total_time_ms"].sum()


@pytest.mark.parametrize(
    ("model", "tp", "pp", "tokens"),
    [("Mistral-7B-v0.1", 1, 1, 4090), ("Gemma-2-9B", 2, 2, 4093), ("Mixtral-8x7B", 4, 1, 50)],
)
def test_closed_form_request_equals_the_loop_over_steps(model, tp, pp, tokens):
    # e2e − TTFT = Σ over c = I+1 … I+O−1 of one decode step at context c (crossing the 4096
    # window of Mistral's and Gemma 2's local layers); TTFT = one prefill step of I tokens.
    out = 12
    r = serve(
        model,
        "H100",
        tp=tp,
        pp=pp,
        batch_size=3,
        input_tokens=tokens,
        output_tokens=out,
        **TUTORIAL,
    )
    kw = {"batch": 3, "tp": tp, "pp": pp}
    loop = sum(
        _step_ms(model, "H100", phase="decode", context=c, **kw)
        for c in range(tokens + 1, tokens + out)
    )
    assert r["e2e_latency_ms"] - r["ttft_ms"] == pytest.approx(loop, rel=1e-9)
    prefill = _step_ms(model, "H100", phase="prefill", context=tokens, **kw)
    assert r["ttft_ms"] == pytest.approx(prefill, rel=1e-9)


LLMS = sorted(m.id for m in default_catalog().models.values() if getattr(m, "arch", None))


@settings(max_examples=60, deadline=None)
@given(
    model=st.sampled_from(LLMS),
    hw=st.sampled_from(["A100", "H100", "L40S", "MI300X"]),
    tp=st.sampled_from([1, 2, 4, 8]),
    pp=st.sampled_from([1, 2, 3]),
    batch=st.integers(1, 4096),
    tokens=st.integers(1, 200_000),
    out=st.integers(1, 5000),
    precision=st.sampled_from(["fp32", "bf16", "fp8", "int4"]),
)
def test_every_catalogue_llm_gives_finite_positive_figures(
    model, hw, tp, pp, batch, tokens, out, precision
):
    try:
        r = serve(
            model,
            hw,
            tp=tp,
            pp=pp,
            batch_size=batch,
            input_tokens=tokens,
            output_tokens=out,
            precision=precision,
        ).as_dict()
    except ValueError as exc:  # only the documented refusals
        assert "does not divide" in str(exc) or "must divide" in str(exc) or "exceeds" in str(exc)
        return
    undefined = {
        "tpot_ms",
        "tokens_per_s_per_user",
        "decode_comm_ms",
        "decode_comm_share",
        "decode_overhead_share",
        "decode_flop_per_step",
        "decode_bytes_per_step",
        "decode_arithmetic_intensity_flop_per_byte",
        "decode_achieved_flop_per_s",
        "decode_attainable_flop_per_s",
        "decode_mfu",
        "decode_tokens_per_s",
    }
    for key, value in r.items():
        if isinstance(value, float) and not (out == 1 and key in undefined):
            assert math.isfinite(value) and value >= 0, (key, value)
    assert r["ttft_ms"] > 0 and r["e2e_latency_ms"] >= r["ttft_ms"]
    assert r["weight_bytes_per_device"] > 0 and r["kv_cache_bytes"] > 0
