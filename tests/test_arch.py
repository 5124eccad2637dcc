"""Decoder-LLM shapes (engine/catalog/arch.py): parameter and active-parameter counts checked by
hand and against every catalogue entry's published count, KV-cache bytes (GQA, MLA, sliding windows)
with the arithmetic in comments, and hypothesis properties of the cache."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.catalog.arch import (
    Architecture,
    active_param_count,
    attention_params,
    embedding_params,
    ffn_params,
    layer_params,
    layer_windows,
    param_count,
)
from engine.catalog.shapes import kv_bytes_per_token, kv_cache_bytes
from engine.catalog.specs import ModelSpec

CATALOG = engine.load_catalog(use_env=False)
WITH_ARCH = [m for m in CATALOG.models.values() if m.arch is not None]
DECODER_LLMS = [m for m in CATALOG.models.values() if m.is_decoder_llm]
REQUIRED_IDS = [
    "GPT-J-6B",
    "Llama-2-7B",
    "Llama-2-70B",
    "Falcon-180B",
    "Llama-3.3-70B",
    "Llama-4-Scout",
    "DeepSeek-V3",
    "Qwen3-235B-A22B",
    "gpt-oss-120b",
    "gpt-oss-20b",
    "Gemma-3-27B",
    "Mistral-7B-v0.1",
    "Llama-3.1-8B",
    "Llama-3.1-70B",
    "Llama-3.1-405B",
    "Llama-3.2-1B",
    "Llama-3.2-3B",
    "Mixtral-8x7B",
    "Qwen2.5-7B",
    "Qwen2.5-72B",
    "Gemma-2-9B",
    "Phi-3-mini",
    "Qwen3-30B-A3B",
    "GPT-2-XL",
    "Llama-4-Maverick",
    "DeepSeek-R1",
    "Qwen3-8B",
    "Qwen3-32B",
    "Kimi-K2",
    "GLM-4.5",
]


def arch(model_id: str) -> Architecture:
    return CATALOG.models[model_id].arch


# ------------------------------------------------------------------ the catalogue


def test_every_decoder_llm_has_an_arch_table_and_the_required_ids_exist():
    assert {m.id for m in DECODER_LLMS} == {m.id for m in WITH_ARCH}
    assert set(REQUIRED_IDS) <= {m.id for m in WITH_ARCH}
    assert CATALOG.find_model("Mistral-7B").id == "Mistral-7B-v0.1"  # the old id is an alias


@pytest.mark.parametrize("model", WITH_ARCH, ids=lambda m: m.id)
def test_parameter_count_from_shapes_is_within_1_percent_of_the_published_count(model):
    published = model.published_params or model.params
    assert param_count(model.arch) == pytest.approx(published, rel=0.01)


# Published active counts and the convention each uses. Makers state them to two or three
# significant figures and several truncate rather than round (Qwen3-30B-A3B: 3.35e9 counted,
# "3.3B" published), so a count passes within 1 % or if it truncates to the published digits.
ACTIVE = {  # id: (published active, digit unit of that figure, embedding table counted?)
    "Mixtral-8x7B": (12.9e9, 0.1e9, True),  # Mistral model card; 12.88e9 counted
    "Qwen3-30B-A3B": (3.3e9, 0.1e9, True),  # Qwen model card; 3.353e9 counted
    "Qwen3-235B-A22B": (22e9, 1e9, True),  # Qwen model card; 22.19e9 counted
    "Qwen3-Coder-480B-A35B": (35e9, 1e9, True),  # Qwen model card; 35.47e9 counted
    "Llama-4-Scout": (17e9, 1e9, True),  # Meta model card; 17.17e9 counted
    "DeepSeek-V3": (37e9, 1e9, True),  # arXiv 2412.19437 (8 of 256 experts); 37.55e9
    "gpt-oss-120b": (5.13e9, 0.01e9, False),  # arXiv 2508.10925 Table 1, no embedding table
    "gpt-oss-20b": (3.61e9, 0.01e9, False),  # same table; 3.608e9 counted
    "Llama-4-Maverick": (17e9, 1e9, True),  # Meta model card; 17.18e9 counted
    "DeepSeek-R1": (37e9, 1e9, True),  # V3's shapes; the MTP module is not active: 37.55e9
    "DeepSeek-V3.2-Exp": (37e9, 1e9, True),  # V3's figure, before its indexer (below)
    "Kimi-K2": (32e9, 1e9, True),  # Moonshot model card; 32.86e9 counted
    "GLM-4.5": (32e9, 1e9, False),  # Z.ai model card; 32.86e9 counted without the embedding
}


UNPUBLISHED = {"DeepSeek-V3.2-Exp": 61 * 13_959_424}  # active parameters no published figure counts


@pytest.mark.parametrize("model_id", sorted(ACTIVE))
def test_active_parameter_count_matches_the_published_figure_in_its_convention(model_id):
    published, unit, with_embedding = ACTIVE[model_id]
    model = CATALOG.models[model_id]
    # a published figure that predates a part the model added is checked without it:
    # DeepSeek-V3.2's lightning indexer, 61 × 13,959,424 (tests/test_config_families.py)
    ours = active_param_count(model.arch, embedding=with_embedding) - UNPUBLISHED.get(model_id, 0)
    assert abs(ours / published - 1) <= 0.01 or published <= ours < published + unit
    assert model.active_params == pytest.approx(published)


def test_every_moe_entry_has_a_published_active_count_under_test():
    assert {m.id for m in WITH_ARCH if m.arch.is_moe} == set(ACTIVE)


TUTORIAL = {  # the tutorial's reference figures stay exactly as catalogued
    "GPT-2-XL": (1.5e9, 48, 1600, 25, 25),
    "Llama-3.1-8B": (8.03e9, 32, 4096, 32, 8),
    "Llama-3.1-70B": (70.6e9, 80, 8192, 64, 8),
}


@pytest.mark.parametrize("model_id", sorted(TUTORIAL))
def test_tutorial_entries_keep_their_rounded_figures_and_record_the_published_count(model_id):
    m = CATALOG.models[model_id]
    assert (m.params, m.layers, m.hidden, m.heads, m.kv_heads) == TUTORIAL[model_id]
    assert m.published_params is not None


def test_gpt2_xl_published_count_is_the_checkpoints_weight_count():
    # 48 layers · 30,740,800 + embeddings (50257 + 1024 positions) · 1600 + final LN 3200
    # = 1,475,558,400 + 82,049,600 + 3,200 = 1,557,611,200
    assert param_count(arch("GPT-2-XL")) == 1_557_611_200
    assert CATALOG.models["GPT-2-XL"].published_params == 1_557_611_200


# ------------------------------------------------------------------ hand-computed counts


def test_llama_3_1_8b_parameters_by_hand():
    a = arch("Llama-3.1-8B")
    # q, o: 4096·4096 each; k, v: 4096·(8·128) each -> 33,554,432 + 8,388,608 = 41,943,040
    assert attention_params(a) == 41_943_040
    # gate, up, down: 3 · 4096 · 14336 = 176,160,768
    assert ffn_params(a, moe=False) == 176_160_768
    # + two RMSNorms of 4096 -> 218,112,000 per layer
    assert layer_params(a, moe=False) == 218_112_000
    # 32 · 218,112,000 + 2 · 128256 · 4096 (untied) + 4096 = 8,030,261,248
    assert param_count(a) == 8_030_261_248


def test_deepseek_v3_mla_and_moe_layers_by_hand():
    a = arch("DeepSeek-V3")
    # q_a 7168·1536 + norm 1536 + q_b 1536·128·(128+64) = 11,010,048 + 1,536 + 37,748,736
    # kv_a 7168·(512+64) + norm 512 + kv_b 512·128·(128+128) = 4,128,768 + 512 + 16,777,216
    # o 128·128·7168 = 117,440,512; total 187,107,328
    assert attention_params(a) == 187_107_328
    # one expert 3·7168·2048 = 44,040,192; (256 + 1 shared) experts + router 7168·256
    assert ffn_params(a, moe=True) == 257 * 44_040_192 + 1_835_008
    # per token: 8 routed + 1 shared + router = 398,196,736
    assert ffn_params(a, moe=True, active=True) == 398_196_736
    assert a.moe_layers == 58  # 61 layers, the first 3 dense


def test_mixtral_active_parameters_count_two_of_eight_experts():
    a = arch("Mixtral-8x7B")
    expert = 3 * 4096 * 14336  # 176,160,768
    per_layer = attention_params(a) + 2 * expert + 4096 * 8 + 2 * 4096
    # 32 layers + embeddings and head (2 · 32000 · 4096) + final norm
    assert active_param_count(a) == 32 * per_layer + 2 * 32000 * 4096 + 4096
    assert param_count(a) - active_param_count(a) == 32 * 6 * expert  # the 6 idle experts


def test_tied_embeddings_are_counted_once_and_gpt_oss_excludes_only_the_embedding_table():
    a = arch("Llama-3.2-1B")  # tied: 128256 · 2048 = 262,668,288 once
    assert embedding_params(a) == 262_668_288
    untied = replace(a, tied_embeddings=False)
    assert param_count(untied) - param_count(a) == 262_668_288
    g = arch("gpt-oss-20b")  # untied: dropping the embedding drops exactly V·h
    assert active_param_count(g) - active_param_count(g, embedding=False) == 201088 * 2880


def test_extra_params_count_in_the_total_but_not_per_token():
    a = arch("Gemma-3-27B")  # SigLIP encoder + projector: 423,060,336
    assert param_count(a) - param_count(replace(a, extra_params=0.0)) == 423_060_336
    assert active_param_count(a) == active_param_count(replace(a, extra_params=0.0))


# ------------------------------------------------------------------ KV cache


def test_llama_3_1_8b_kv_bytes_per_token_at_fp16():
    # 2 (K and V) · 32 layers · 8 KV heads · 128 · 2 B = 131,072 B
    assert kv_bytes_per_token(arch("Llama-3.1-8B"), 2) == 131_072


def test_deepseek_v3_mla_caches_one_latent_per_token():
    # 61 layers · (512 latent + 64 RoPE key) · 2 B (bf16) = 70,272 B
    assert kv_bytes_per_token(arch("DeepSeek-V3"), 2) == 70_272


def test_mistral_7b_cache_stops_growing_at_its_4096_token_window():
    a = arch("Mistral-7B-v0.1")
    # 131,072 B per token (as Llama-3.1-8B) for at most 4096 tokens = 536,870,912 B
    assert kv_cache_bytes(a, 2, 4096) == 536_870_912
    assert kv_cache_bytes(a, 2, 32768) == 536_870_912
    assert kv_cache_bytes(a, 2, 2048) == 268_435_456
    assert kv_bytes_per_token(a, 2, 8192) == 65_536  # 536,870,912 / 8192


def test_gemma_3_interleaves_five_local_layers_with_one_global():
    a = arch("Gemma-3-27B")
    windows = layer_windows(a)
    assert windows.count(None) == 10 and windows[5] is None and windows[0] == 1024
    # per layer and token 16 · (128 + 128) · 2 B = 8192 B; at 2048 tokens:
    # 10 global · 2048 · 8192 + 52 local · 1024 · 8192 = 603,979,776 B
    assert kv_cache_bytes(a, 2, 2048) == 603_979_776


def test_kv_cache_is_vectorised_over_numpy_contexts():
    a = arch("gpt-oss-120b")
    contexts = np.array([[1, 64, 128], [129, 4096, 131072]])
    out = kv_cache_bytes(a, 1, contexts)
    assert out.shape == (2, 3)
    assert out.tolist() == [[kv_cache_bytes(a, 1, int(c)) for c in row] for row in contexts]


def test_kv_bytes_per_token_refuses_a_context_of_zero():
    with pytest.raises(ValueError, match="context"):
        kv_bytes_per_token(arch("Llama-3.1-8B"), 2, 0)


@st.composite
def architectures(draw):
    layers = draw(st.integers(1, 64))
    heads = draw(st.sampled_from([1, 2, 4, 8, 16]))
    mla = draw(st.booleans())
    local = draw(st.integers(0, layers))
    window = draw(st.integers(1, 10_000)) if local else None
    return Architecture(
        layers=layers,
        hidden=64 * heads,
        heads=heads,
        kv_heads=heads if mla else draw(st.sampled_from([k for k in (1, 2, 4) if heads % k == 0])),
        head_dim=64,
        intermediate=256,
        vocab=1000,
        context_length=131072,
        attention="mla" if mla else "gqa",
        kv_lora_rank=512 if mla else None,
        rope_head_dim=64 if mla else None,
        sliding_window=window,
        sliding_layers=local,
    )


@settings(max_examples=200, deadline=None)
@given(architectures(), st.integers(1, 50_000), st.integers(1, 50_000))
def test_cache_is_monotone_linear_to_the_window_and_flat_past_it_for_local_layers(a, c1, c2):
    lo, hi = sorted((c1, c2))
    per_token = kv_bytes_per_token(a, 2)
    assert kv_cache_bytes(a, 2, lo) <= kv_cache_bytes(a, 2, hi)  # non-decreasing
    window = a.sliding_window or float("inf")
    if hi <= window:  # linear up to the (smallest) window
        assert kv_cache_bytes(a, 2, hi) == pytest.approx(hi * per_token)
    if lo >= window:  # past it, only global layers grow; all-local models stop growing
        growth = (a.layers - a.sliding_layers) * (hi - lo) * per_token / a.layers
        assert kv_cache_bytes(a, 2, hi) - kv_cache_bytes(a, 2, lo) == pytest.approx(growth)


# ------------------------------------------------------------------ validation


def test_flat_fields_must_agree_with_the_arch_table():
    m = CATALOG.models["Llama-3.1-8B"]
    with pytest.raises(ValueError, match=r"kv_heads = 4 disagrees with arch\.kv_heads = 8"):
        replace(m, kv_heads=4)
    with pytest.raises(ValueError, match="only for task = 'llm'"):
        replace(CATALOG.models["ResNet-50"], arch=m.arch)
    assert isinstance(m, ModelSpec) and m.head_dim == 128


def test_a_sliding_pattern_must_match_the_number_of_local_layers():
    a = arch("Gemma-3-27B")
    with pytest.raises(ValueError, match="makes 52 local layers"):
        replace(a, sliding_layers=50)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 64),
    st.integers(1, 8),
    st.data(),
    st.integers(0, 2),
    st.booleans(),
)
def test_idle_experts_are_exactly_the_gap_between_total_and_active(layers, k, data, shared, tied):
    experts = data.draw(st.integers(k, 64))
    dense = data.draw(st.integers(0, layers))
    a = Architecture(
        layers=layers,
        hidden=128,
        heads=4,
        kv_heads=2,
        head_dim=32,
        intermediate=512,
        vocab=1000,
        context_length=4096,
        tied_embeddings=tied,
        experts=experts,
        experts_per_token=k,
        expert_intermediate=64,
        shared_experts=shared,
        dense_layers=dense,
    )
    idle = (layers - dense) * (experts - k) * 3 * 128 * 64  # gated experts of width 64
    assert param_count(a) - active_param_count(a) == idle
    # leaving the embedding out drops V·h, unless the one tied table is the unembedding too
    dropped = active_param_count(a) - active_param_count(a, embedding=False)
    assert dropped == (0 if tied else 1000 * 128)
