"""The LLM decode view (docs/model.md, "LLM decode"): published KV-cache sizes, hand-computed
TPOT/TTFT, capacity limits with the memory reserve, regimes, properties, the vectorised sweep
against the scalar decode, and the CLI."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.catalog.parse import parse_hardware, parse_model
from engine.checks import MAX_BATCH
from engine.roofline.decode import MAX_CONTEXT
from engine.roofline.decode_sweep import MAX_DECODE_SWEEP_ROWS
from engine.roofline.solve import fallback_warning

ROOT = Path(__file__).resolve().parent.parent
CATALOG = engine.load_catalog(use_env=False)
LLMS = [m for m in CATALOG.models.values() if m.is_decoder_llm]
HARDWARE = list(CATALOG.hardware.values())

# Round-number specs, so the hand arithmetic below is easy to follow.
TOY = tomllib.loads(
    """
[models.toy]
name = "toy dense LLM"
task = "llm"
params = 1e9
layers = 10
hidden = 1024
heads = 8
kv_heads = 2
source = "https://example.org/toy"

[models.toy-moe]
name = "toy mixture of experts"
task = "llm"
params = 4e9
active_params = 1e9
layers = 10
hidden = 1024
heads = 8
kv_heads = 2
source = "https://example.org/toy"

[models.toy-4b]
name = "toy dense LLM, 4B"
task = "llm"
params = 4e9
layers = 10
hidden = 1024
heads = 8
kv_heads = 2
source = "https://example.org/toy"

[hardware.toychip]
name = "toy chip"
memory_bandwidth = "1000 GB/s"
memory_capacity = "80 GB"
dispatch_overhead = "0.01 ms"
tdp = "100 W"
peak = { fp16 = "100 TFLOP/s", fp32 = "10 TFLOP/s" }
source = "https://example.org/toy"
[hardware.toychip.interconnect]
name = "toy link"
bandwidth = "100 GB/s"
latency = "1 us"
devices_per_node = 8
source = "https://example.org/toy"
"""
)
TOY_LLM = parse_model("toy", TOY["models"]["toy"])
TOY_MOE = parse_model("toy-moe", TOY["models"]["toy-moe"])
TOY_4B = parse_model("toy-4b", TOY["models"]["toy-4b"])
TOY_CHIP = parse_hardware("toychip", TOY["hardware"]["toychip"])


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ROOFLINE_CATALOG"}
    return subprocess.run(
        [sys.executable, "-m", "engine", "decode", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


# ---------------------------------------------------------------- published numbers


def test_kv_cache_per_token_llama_3_1_8b():
    # https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json:
    # num_hidden_layers 32, num_key_value_heads 8, hidden_size 4096 / num_attention_heads 32
    # = head_dim 128. K and V, fp16: 2 · 32 · 8 · 128 · 2 B = 131,072 B per token.
    r = engine.decode(
        model="Llama-3.1-8B", hardware="A100", batch_size=1, context=1, catalog=CATALOG
    )
    assert r.kv_cache_bytes_per_token == pytest.approx(131_072, rel=1e-12)


def test_kv_cache_per_token_llama_3_1_70b():
    # https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json:
    # num_hidden_layers 80, num_key_value_heads 8, hidden_size 8192 / num_attention_heads 64
    # = head_dim 128. 2 · 80 · 8 · 128 · 2 B = 327,680 B per token.
    r = engine.decode(
        model="Llama-3.1-70B", hardware="H100", batch_size=1, context=1, catalog=CATALOG
    )
    assert r.kv_cache_bytes_per_token == pytest.approx(327_680, rel=1e-12)


def test_catalogued_head_dim_is_used_when_it_differs_from_hidden_over_heads():
    # https://huggingface.co/google/gemma-2-9b/blob/main/config.json: 42 layers, 8 KV heads,
    # head_dim 256 (hidden 3584 / 16 heads would be 224). 2 · 42 · 8 · 256 · 2 B = 344,064 B.
    r = engine.decode(model="Gemma-2-9B", hardware="H100", batch_size=1, context=1, catalog=CATALOG)
    assert r.kv_cache_bytes_per_token == pytest.approx(344_064, rel=1e-12)


def test_must_show_llama_8b_a100_batch_1_context_4096_is_memory_bound():
    # 131,072 B/token · 4096 tokens = 536,870,912 B (exactly 512 MiB).
    r = engine.decode(
        model="Llama-3.1-8B", hardware="A100", batch_size=1, context=4096, catalog=CATALOG
    )
    assert r.kv_cache_bytes == pytest.approx(536_870_912, rel=1e-12)
    assert r.decode.bottleneck == "memory"
    assert r.fits_in_memory


def test_must_show_llama_8b_h100_batch_256_context_128_is_compute_bound():
    # FLOPs: 2 · 8.03e9 · 256 + 4 · 32 · 32 · 128 · 128 · 256 = 4.128e12 -> / (989e12 · 0.5)
    # = 8.35 ms. Bytes: 16.06e9 + 131,072 · 128 · 256 = 20.35e9 -> / 3.35e12 = 6.08 ms.
    r = engine.decode(
        model="Llama-3.1-8B", hardware="H100", batch_size=256, context=128, catalog=CATALOG
    )
    assert r.decode.bottleneck == "compute"
    assert r.decode.t_compute_s == pytest.approx(8.349e-3, rel=1e-3)
    assert r.decode.t_memory_s == pytest.approx(6.076e-3, rel=1e-3)
    # The single-model solve's activation heuristic keeps it memory-bound (docs/model.md).
    assert engine.solve("Llama-3.1-8B", "H100", 256, catalog=CATALOG).bottleneck == "memory"


# ---------------------------------------------------------------- hand-computed known answers


def test_hand_computed_tpot_ttft_and_capacity():
    r = engine.decode(model=TOY_LLM, hardware=TOY_CHIP, batch_size=4, context=1000)
    # head_dim = 1024 / 8 = 128; KV per token = 2 · 10 layers · 2 kv heads · 128 · 2 B = 10,240 B
    assert r.kv_cache_bytes_per_token == pytest.approx(10_240)
    assert r.kv_cache_bytes == pytest.approx(10_240 * 1000 * 4)  # 40.96e6 B
    # decode bytes = 2e9 (weights) + 40.96e6 (KV) = 2.04096e9 B -> / 1e12 B/s = 2.04096 ms
    # decode FLOPs = 2 · 1e9 · 4 + 4 · 10 · 8 · 128 · 1000 · 4 = 8.16384e9 -> / 50e12 = 0.16328 ms
    # overhead = 0.01 ms + 10 layers · 10 µs = 0.11 ms; TPOT = 2.04096 + 0.11 = 2.15096 ms
    assert r.decode.t_memory_s == pytest.approx(2.04096e-3)
    assert r.decode.t_compute_s == pytest.approx(0.1632768e-3)
    assert r.tpot_s == pytest.approx(2.15096e-3)
    d = r.as_dict()
    assert d["tpot_ms"] == pytest.approx(2.15096)
    assert d["tokens_per_s"] == pytest.approx(1 / 2.15096e-3)  # 464.9 per stream
    assert d["aggregate_tokens_per_s"] == pytest.approx(4 / 2.15096e-3)  # 1859.6
    assert d["decode_arithmetic_intensity_flop_per_byte"] == pytest.approx(8.16384e9 / 2.04096e9)
    # prefill (S = context = 1000): FLOPs = 2 · 1e9 · 1000 · 4 + 4 · 10 · 8 · 128 · 1000² · 4
    # = 8.16384e12 -> / 50e12 = 163.2768 ms (compute-bound); TTFT = 163.2768 + 0.11 ms
    # prefill bytes = weights + the prompt's KV written = 2e9 + 10,240 · 1000 · 4 = 2.04096e9 B
    assert r.prefill.bottleneck == "compute"
    assert r.prefill.bytes == pytest.approx(2.04096e9)
    assert d["ttft_ms"] == pytest.approx(163.3868)
    # usable memory = 80e9 B · (1 - 0.10 reserve) = 72e9 B:
    # (72e9 - 2e9) / (10,240 · 1000) = 6835.9 -> 6835 sequences;
    # (72e9 - 2e9) / (10,240 · 4) = 1,708,984.4 -> 1,708,984 tokens.
    assert r.usable_memory_bytes == pytest.approx(72e9)
    assert r.max_batch_at_context == 6835
    assert r.max_context_at_batch == 1_708_984
    assert d["assumptions"]["memory_reserve"] == pytest.approx(0.10)
    # Without the reserve, the whole 80e9 B: (80e9 - 2e9) / (10,240 · 1000) = 7617.19 -> 7617;
    # (80e9 - 2e9) / (10,240 · 4) = 1,904,296.9 -> 1,904,296 tokens.
    bare = engine.decode(
        model=TOY_LLM, hardware=TOY_CHIP, batch_size=4, context=1000, memory_reserve=0.0
    )
    assert bare.max_batch_at_context == 7617
    assert bare.max_context_at_batch == 1_904_296


def test_memory_reserve_decides_what_fits():
    # 2e9 B of weights + 10,240 B/token · 7,000,000 tokens = 73.68e9 B: within the 80e9 B
    # capacity, over the 72e9 B usable with the default 10 % reserve.
    assert not engine.decode(
        model=TOY_LLM, hardware=TOY_CHIP, batch_size=7, context=1_000_000
    ).fits_in_memory
    assert engine.decode(
        model=TOY_LLM, hardware=TOY_CHIP, batch_size=7, context=1_000_000, memory_reserve=0
    ).fits_in_memory
    with pytest.raises(ValueError, match="memory_reserve"):
        engine.decode(model=TOY_LLM, hardware=TOY_CHIP, batch_size=1, context=1, memory_reserve=1.0)


def test_max_context_is_capped_at_the_models_context_length():
    # Llama-3.1-8B on H100 at batch 1: (0.9 · 80 GiB - 16.06e9 B) / 131,072 B per token
    # = 61.26e9 / 131,072 = 467,370 tokens of room, capped at the model's 131,072.
    r = engine.decode(
        model="Llama-3.1-8B", hardware="H100", batch_size=1, context=1, catalog=CATALOG
    )
    assert r.max_context_at_batch == 131_072
    # at batch 8 the memory binds first: 61.26e9 / (131,072 · 8) = 58,421 tokens
    r8 = engine.decode(
        model="Llama-3.1-8B", hardware="H100", batch_size=8, context=1, catalog=CATALOG
    )
    room = 0.9 * r8.memory_capacity_bytes - r8.weight_bytes
    assert r8.max_context_at_batch == int(room // (131_072 * 8))


def test_bandwidth_efficiency_slows_only_the_memory_term():
    # decode bytes 2.04096e9 B at 1e12 B/s · 0.8 = 2.5512 ms (was 2.04096 ms); compute unchanged
    base = engine.decode(model=TOY_LLM, hardware=TOY_CHIP, batch_size=4, context=1000)
    slow = engine.decode(
        model=TOY_LLM, hardware=TOY_CHIP, batch_size=4, context=1000, bandwidth_efficiency=0.8
    )
    assert slow.decode.t_memory_s == pytest.approx(2.5512e-3)
    assert slow.decode.t_compute_s == pytest.approx(base.decode.t_compute_s)
    # effective ridge = 100e12 · 0.5 / (1e12 · 0.8) = 62.5 FLOP/byte; the theoretical one stays
    assert slow.effective_ridge_flop_per_byte == pytest.approx(62.5)
    assert slow.ridge_flop_per_byte == pytest.approx(100.0)
    assert slow.as_dict()["assumptions"]["bandwidth_efficiency"] == pytest.approx(0.8)


def test_decode_and_prefill_regimes():
    # Toy, batch 1, context 10: decode bytes ≈ 2e9 B -> 2 ms memory time against 0.11 ms of
    # overhead (5 %): "memory". Prefill of 10 tokens: FLOPs 2e10 -> 0.4 ms, bytes 2e9 -> 2 ms.
    r = engine.decode(model=TOY_LLM, hardware=TOY_CHIP, batch_size=1, context=10)
    assert r.decode.regime == "memory" and r.as_dict()["decode_regime"] == "memory"
    # With a 10 ms dispatch overhead, 10.1 ms of ~12.1 ms is overhead (> half): "overhead",
    # while the bottleneck stays "memory".
    slow = engine.decode(
        model=TOY_LLM, hardware=TOY_CHIP, batch_size=1, context=10, dispatch_overhead_ms=10
    ).as_dict()
    assert slow["decode_regime"] == "overhead" and slow["decode_bottleneck"] == "memory"
    assert slow["prefill_regime"] == "overhead"
    # Prefill at batch 4, 1000 tokens is compute-bound with 0.11 ms of 163 ms overhead.
    assert (
        engine.decode(model=TOY_LLM, hardware=TOY_CHIP, batch_size=4, context=1000).as_dict()[
            "prefill_regime"
        ]
        == "compute"
    )


def test_as_dict_has_both_operating_points_and_their_units():
    d = engine.decode(model=TOY_LLM, hardware=TOY_CHIP, batch_size=4, context=1000).as_dict()
    for phase in ("decode", "prefill"):
        for name in (
            "flops",
            "bytes",
            "arithmetic_intensity_flop_per_byte",
            "t_compute_ms",
            "t_memory_ms",
            "t_overhead_ms",
            "attainable_tflops",
            "achieved_tflops",
        ):
            assert f"{phase}_{name}" in d
        assert d[f"{phase}_achieved_tflops"] <= d[f"{phase}_attainable_tflops"]
    for key in ("ridge_flop_per_byte", "effective_ridge_flop_per_byte", "kv_precision"):
        assert key in d
    assert d["ridge_flop_per_byte"] == pytest.approx(100e12 / 1e12)  # Π / β = 100 FLOP/B
    assert d["assumptions"]["activation_bytes_per_token"] == pytest.approx(0.0)
    assert {type(v) for v in d.values()} <= {str, int, float, bool, list, dict}  # no numpy
    json.dumps(d, allow_nan=False)


def test_prompt_sets_the_prefill_only():
    full, short = (
        engine.decode(model=TOY_LLM, hardware=TOY_CHIP, batch_size=4, context=1000, prompt=s)
        for s in (None, 100)
    )
    assert short.prompt == 100 and full.prompt == 1000
    assert short.tpot_s == pytest.approx(full.tpot_s)
    # 2 · 1e9 · 100 · 4 + 4 · 10 · 8 · 128 · 100² · 4 = 8.016384e11 FLOP
    assert short.prefill.flops == pytest.approx(8.016384e11)
    assert short.ttft_s < full.ttft_s


def test_mixture_of_experts_flops_use_active_and_bytes_use_all_params():
    moe, small, big = (
        engine.decode(model=m, hardware=TOY_CHIP, batch_size=8, context=512)
        for m in (TOY_MOE, TOY_LLM, TOY_4B)
    )
    assert moe.decode.flops == pytest.approx(small.decode.flops)  # 1e9 active
    assert moe.prefill.flops == pytest.approx(small.prefill.flops)
    assert moe.decode.bytes == pytest.approx(big.decode.bytes)  # 4e9 stored
    assert moe.weight_bytes == pytest.approx(8e9)
    # Mixtral-8x7B from the catalogue: 12.9e9 active of 46.7e9 (Mistral's model card).
    r = engine.decode(
        model="Mixtral-8x7B", hardware="H100", batch_size=1, context=1, catalog=CATALOG
    )
    attention = 4 * 32 * 32 * 128  # one cached token
    assert r.decode.flops == pytest.approx(2 * 12.9e9 + attention)
    assert r.weight_bytes == pytest.approx(2 * 46.7e9)


@pytest.mark.parametrize(("kv", "factor"), [("int8", 0.5), ("fp8", 0.5), ("int4", 0.25)])
def test_kv_precision_scales_only_the_cache(kv, factor):
    base = engine.decode(
        model="Llama-3.1-8B", hardware="H100", batch_size=8, context=8192, catalog=CATALOG
    )
    quant = engine.decode(
        model="Llama-3.1-8B",
        hardware="H100",
        batch_size=8,
        context=8192,
        kv_precision=kv,
        catalog=CATALOG,
    )
    assert quant.kv_cache_bytes == pytest.approx(base.kv_cache_bytes * factor)
    assert quant.weight_bytes == pytest.approx(base.weight_bytes)
    assert quant.kv_precision == kv and base.kv_precision == "fp16"
    assert quant.max_batch_at_context > base.max_batch_at_context


def test_weights_that_do_not_fit_give_zero_capacity():
    # Llama-3.1-405B in fp16 is 811.8e9 B of weights; an A100 holds 80 GiB.
    r = engine.decode(
        model="Llama-3.1-405B", hardware="A100", batch_size=1, context=1, catalog=CATALOG
    )
    assert not r.fits_in_memory
    assert r.max_batch_at_context == 0 and r.max_context_at_batch == 0


def test_overrides_flow_into_the_step_time():
    base = engine.decode(model=TOY_LLM, hardware=TOY_CHIP, batch_size=4, context=1000)
    slow = engine.decode(
        model=TOY_LLM,
        hardware=TOY_CHIP,
        batch_size=4,
        context=1000,
        dispatch_overhead_ms=1.0,
        layer_overhead_us=0,
    )
    assert slow.tpot_s == pytest.approx(base.tpot_s - 0.11e-3 + 1e-3)
    assert slow.as_dict()["assumptions"]["dispatch_overhead_ms"] == pytest.approx(1.0)
    assert base.as_dict()["assumptions"]["dispatch_overhead_ms"] == pytest.approx(0.01)


# ---------------------------------------------------------------- warnings


def test_precision_fallback_is_warned_like_the_solve():
    a100 = CATALOG.find_hardware("A100")  # lists no fp8 peak
    r = engine.decode(
        model="Llama-3.1-8B",
        hardware=a100,
        batch_size=1,
        context=128,
        precision="fp8",
        catalog=CATALOG,
    )
    assert r.peak_precision == "fp16"
    assert fallback_warning(a100, "fp8", "fp16") in r.warnings
    assert r.weight_bytes == pytest.approx(8.03e9)  # 1 B per fp8 weight


def test_context_beyond_the_model_and_unused_assumptions_are_warned():
    r = engine.decode(
        model="Llama-3.1-8B", hardware="H100", batch_size=1, context=200_000, catalog=CATALOG
    )
    (beyond,) = r.warnings
    assert beyond.code == "context_beyond_maximum" and "131,072" in str(beyond)
    r = engine.decode(
        model=TOY_LLM, hardware=TOY_CHIP, batch_size=1, context=10, activation_fraction=0.3
    )
    assert [w.code for w in r.warnings] == ["decode_ignores_activation_fraction"]
    assert str(r.warnings[0]).startswith("activation_fraction is not used")
    assert engine.decode(model=TOY_LLM, hardware=TOY_CHIP, batch_size=1, context=10).warnings == ()


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"context": 0}, "context"),
        ({"context": 1.5}, "context"),
        ({"context": True}, "context"),
        ({"context": float("nan")}, "context"),
        ({"context": "4096"}, "context"),
        ({"context": MAX_CONTEXT + 1}, "10,000,000"),
        ({"prompt": 0}, "prompt"),
        ({"prompt": 5000}, "longer than the context"),
        ({"batch_size": 0}, "batch_size: expected a whole number from 1 to 1,000,000, got 0"),
        ({"kv_precision": "int3"}, "KV precision"),
        ({"precision": "fp12"}, "precision"),
        ({"efficiency": float("nan")}, "efficiency"),
        ({"efficiency": 0}, "efficiency"),
        ({"layer_overhead_us": -1}, "layer_overhead"),
        ({"activation_fraction": float("inf")}, "activation_fraction"),
        ({"warp_factor": 9}, "unknown assumption"),
    ],
)
def test_bad_input_is_a_value_error_that_says_what(kwargs, message):
    args = {"batch_size": 1, "context": 4096} | kwargs
    with pytest.raises(ValueError, match=message):
        engine.decode(TOY_LLM, TOY_CHIP, **args)


def test_non_llm_models_are_refused_with_the_list_of_llms():
    with pytest.raises(ValueError, match=r"not a decoder LLM.*Llama-3\.1-8B"):
        engine.decode(
            model="ResNet-50", hardware="A100", batch_size=1, context=128, catalog=CATALOG
        )
    with pytest.raises(KeyError):
        engine.decode(
            model="NoSuchModel", hardware="A100", batch_size=1, context=128, catalog=CATALOG
        )


# ---------------------------------------------------------------- properties

LLM_IDS = st.sampled_from(LLMS)
HW_IDS = st.sampled_from(HARDWARE)
KV = st.sampled_from(["fp16", "fp8", "int4"])


@settings(max_examples=150, deadline=None)
@given(LLM_IDS, HW_IDS, st.integers(1, 512), st.integers(1, 200_000), st.integers(1, 200_000))
def test_tpot_is_non_decreasing_in_context(model, hw, batch, c1, c2):
    short, long = sorted((c1, c2))
    t1 = engine.decode(model=model, hardware=hw, batch_size=batch, context=short).tpot_s
    t2 = engine.decode(model=model, hardware=hw, batch_size=batch, context=long).tpot_s
    assert t2 >= t1


@settings(max_examples=150, deadline=None)
@given(LLM_IDS, HW_IDS, KV, st.integers(1, 32_768), st.integers(1, 4096), st.integers(1, 4096))
def test_aggregate_tokens_per_s_is_non_decreasing_in_batch_while_it_fits(
    model, hw, kv, context, b1, b2
):
    small, large = sorted((b1, b2))
    r_large = engine.decode(
        model=model, hardware=hw, batch_size=large, context=context, kv_precision=kv
    )
    if not r_large.fits_in_memory:  # only up to capacity (docs/model.md, "Memory")
        return
    r_small = engine.decode(
        model=model, hardware=hw, batch_size=small, context=context, kv_precision=kv
    )
    agg = [r.as_dict()["aggregate_tokens_per_s"] for r in (r_small, r_large)]
    assert agg[1] >= agg[0] * (1 - 1e-12)


@settings(max_examples=200, deadline=None)
@given(LLM_IDS, HW_IDS, KV, st.integers(1, MAX_CONTEXT))
def test_max_batch_is_the_largest_that_fits(model, hw, kv, context):
    best = engine.decode(
        model=model, hardware=hw, batch_size=1, context=context, kv_precision=kv
    ).max_batch_at_context
    if best >= 1:
        assert engine.decode(
            model=model, hardware=hw, batch_size=best, context=context, kv_precision=kv
        ).fits_in_memory
    if best < MAX_BATCH:
        assert not engine.decode(
            model=model, hardware=hw, batch_size=best + 1, context=context, kv_precision=kv
        ).fits_in_memory


@settings(max_examples=200, deadline=None)
@given(LLM_IDS, HW_IDS, KV, st.integers(1, 100_000))
def test_max_context_is_the_largest_that_fits(model, hw, kv, batch):
    best = engine.decode(
        model=model, hardware=hw, batch_size=batch, context=1, kv_precision=kv
    ).max_context_at_batch
    limit = min(model.context_length or MAX_CONTEXT, MAX_CONTEXT)
    assert best <= limit
    if best >= 1:
        assert engine.decode(
            model=model, hardware=hw, batch_size=batch, context=best, kv_precision=kv
        ).fits_in_memory
    if best < limit:
        assert not engine.decode(
            model=model, hardware=hw, batch_size=batch, context=best + 1, kv_precision=kv
        ).fits_in_memory


# ---------------------------------------------------------------- the vectorised sweep


def _flat(d: dict) -> dict:
    """as_dict with the assumptions flattened in their place, as the sweep's columns."""
    out = {}
    for key, value in d.items():
        out |= value if key == "assumptions" else {key: value}
    return out


def _same(a, b) -> bool:
    if isinstance(b, float):
        return math.isclose(float(a), b, rel_tol=1e-12, abs_tol=0.0)
    if isinstance(b, list):  # warnings: the sweep's cell holds the messages, as_dict their English
        return [str(m) for m in a] == b
    return a == b


@pytest.mark.parametrize("prompt", [None, 64])
def test_decode_sweep_equals_the_scalar_decode_on_a_grid(prompt):
    models = ["Llama-3.1-8B", "Mixtral-8x7B", "Gemma-2-9B"]
    hardware = ["A100", "H100", "T4"]
    batches, contexts = [1, 3, 64, 256, 2048], [64, 4096, 200_000]
    kw = {"precision": "fp8", "kv_precision": "int8", "prompt": prompt, "efficiency": 0.6}
    df = engine.decode_sweep(
        models=models,
        hardware=hardware,
        batch_sizes=batches,
        contexts=contexts,
        catalog=CATALOG,
        **kw,
    )
    assert len(df) == 3 * 3 * 5 * 3
    for row in df.to_dict("records"):
        r = engine.decode(
            model=row["model"],
            hardware=row["hardware"],
            batch_size=row["batch_size"],
            context=row["context"],
            catalog=CATALOG,
            **kw,
        )
        expected = _flat(r.as_dict())
        assert list(row) == list(expected)
        for key, value in expected.items():
            assert _same(row[key], value), (key, row[key], value)


def test_decode_sweep_orders_rows_model_hardware_context_batch():
    df = engine.decode_sweep(
        models=TOY_LLM, hardware=[TOY_CHIP], batch_sizes=[1, 2, 4], contexts=[10, 20]
    )
    assert df["context"].tolist() == [10, 10, 10, 20, 20, 20]
    assert df["batch_size"].tolist() == [1, 2, 4, 1, 2, 4]
    assert (df["warnings"].map(len) == 0).all()  # no warning on any row


def test_decode_sweep_refuses_big_grids_before_working():
    side = math.isqrt(MAX_DECODE_SWEEP_ROWS) + 1
    start = time.perf_counter()
    with pytest.raises(ValueError, match="over the limit"):
        engine.decode_sweep(
            models=TOY_LLM,
            hardware=TOY_CHIP,
            batch_sizes=range(1, side + 1),
            contexts=range(1, side + 1),
        )
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((TOY_LLM, TOY_CHIP, [1], []), "context"),
        ((TOY_LLM, TOY_CHIP, [], [1]), "batch"),
        ((TOY_LLM, TOY_CHIP, [1], [0, 5]), "context"),
        ((TOY_LLM, TOY_CHIP, [1], [np.nan]), "context"),
        ((TOY_LLM, TOY_CHIP, [1.5], [5]), "batch"),
    ],
)
def test_decode_sweep_rejects_bad_grids(args, message):
    with pytest.raises(ValueError, match=message):
        engine.decode_sweep(*args)


def test_decode_sweep_csv_headers_carry_units_and_the_new_assumptions():
    df = engine.decode_sweep(
        models=TOY_LLM, hardware=TOY_CHIP, batch_sizes=np.array([1, 4]), contexts=[np.int64(1000)]
    )
    header = engine.to_csv(df).splitlines()[0].split(",")
    for name in (
        "context_tokens",
        "decode_regime",
        "prefill_regime",
        "usable_memory_bytes",
        "memory_reserve_fraction",
        "bandwidth_efficiency_fraction",
        "decode_mfu_fraction",
        "decode_work_flop_per_step",
        "prefill_traffic_bytes_per_batch",
        "tpot_ms",
    ):
        assert name in header
    assert df["memory_reserve"].tolist() == pytest.approx([0.10, 0.10])


def test_decode_sweep_refuses_a_prompt_longer_than_a_context():
    with pytest.raises(ValueError, match="longer than the context"):
        engine.decode_sweep(
            models=TOY_LLM, hardware=TOY_CHIP, batch_sizes=[1], contexts=[100, 10], prompt=50
        )


# ---------------------------------------------------------------- the CLI


def test_cli_must_show_command_gives_the_kv_cache_and_memory_bound_decode():
    out = run_cli(
        "--model",
        "Llama-3.1-8B",
        "--hardware",
        "A100",
        "--batch-size",
        "1",
        "--context",
        "4096",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["kv_cache_bytes"] == 536_870_912
    assert result["decode_bottleneck"] == "memory"
    for key in (
        "tpot_ms",
        "tokens_per_s",
        "aggregate_tokens_per_s",
        "ttft_ms",
        "memory_required_bytes",
        "fits_in_memory",
        "max_batch_at_context",
        "prefill_bottleneck",
        "decode_arithmetic_intensity_flop_per_byte",
    ):
        assert key in result


def test_cli_table_and_options():
    out = run_cli(
        "--model",
        "Llama-3.1-8B",
        "--hardware",
        "H100",
        "--batch-size",
        "256",
        "--context",
        "128",
        "--prompt",
        "64",
        "--kv-precision",
        "fp8",
        "--efficiency",
        "0.6",
    )
    assert out.returncode == 0, out.stderr
    assert "decode_bottleneck" in out.stdout and "compute" in out.stdout


@pytest.mark.parametrize(
    "extra",
    [
        ["--model", "Llama-3.1-8B", "--context", "0"],
        ["--model", "Llama-3.1-8B", "--context", "4096", "--kv-precision", "int3"],
        ["--model", "ResNet-50", "--context", "4096"],
        ["--model", "Llama-3.1-8B", "--context", "4096", "--efficiency", "nan"],
        ["--model", "Llama-3.1-8B", "--context", "4096", "--prompt", "8192"],
        ["--model", "Llama-3.1-8B"],
    ],
)
def test_cli_bad_input_exits_2_with_one_line(extra):
    out = run_cli("--hardware", "A100", *extra, "--format", "json")
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1
    assert out.stderr.startswith("error: ") and "Traceback" not in out.stderr
