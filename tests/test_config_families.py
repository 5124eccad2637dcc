"""`--model-config` reads the 2025-26 families: each config.json's fields written out here (the
values of the Hugging Face files; full copies and their origin are in tests/fixtures/configs/),
read into the shapes the serving model uses, with the parameter counts checked by hand."""

from __future__ import annotations

import dataclasses

import pytest

import engine
from engine.catalog.arch import active_param_count, attention_params, param_count

QWEN3_8B = {  # https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json
    "architectures": ["Qwen3ForCausalLM"],
    "attention_bias": False,
    "head_dim": 128,
    "hidden_size": 4096,
    "intermediate_size": 12288,
    "max_position_embeddings": 40960,
    "max_window_layers": 36,
    "num_attention_heads": 32,
    "num_hidden_layers": 36,
    "num_key_value_heads": 8,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "use_sliding_window": False,
    "vocab_size": 151936,
}
DEEPSEEK_R1 = {  # https://huggingface.co/deepseek-ai/DeepSeek-R1/blob/main/config.json
    "architectures": ["DeepseekV3ForCausalLM"],
    "attention_bias": False,
    "first_k_dense_replace": 3,
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "kv_lora_rank": 512,
    "max_position_embeddings": 163840,
    "model_type": "deepseek_v3",
    "moe_intermediate_size": 2048,
    "moe_layer_freq": 1,
    "n_group": 8,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_attention_heads": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 61,
    "num_key_value_heads": 128,
    "num_nextn_predict_layers": 1,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "tie_word_embeddings": False,
    "topk_group": 4,
    "topk_method": "noaux_tc",
    "v_head_dim": 128,
    "vocab_size": 129280,
}
KIMI_K2 = DEEPSEEK_R1 | {  # https://huggingface.co/moonshotai/Kimi-K2-Instruct: V3's class
    "model_type": "kimi_k2",
    "n_group": 1,
    "topk_group": 1,
    "first_k_dense_replace": 1,
    "max_position_embeddings": 131072,
    "n_routed_experts": 384,
    "num_attention_heads": 64,
    "num_key_value_heads": 64,
    "num_nextn_predict_layers": 0,
    "vocab_size": 163840,
}
DEEPSEEK_V32 = DEEPSEEK_R1 | {  # https://huggingface.co/deepseek-ai/DeepSeek-V3.2
    "architectures": ["DeepseekV32ForCausalLM"],
    "model_type": "deepseek_v32",
    "index_head_dim": 128,
    "index_n_heads": 64,
    "index_topk": 2048,
}
GLM_5 = {  # GLM-5's shapes as aiconfigurator vendors them (zai-org--GLM-5-FP8_config.json, commit
    # 691ec90), with the indexer keys of its glm_moe_dsa family (index_n_heads 32, as vLLM's
    # and SGLang's glm_moe_dsa code reads them)
    "architectures": ["GlmMoeDsaForCausalLM"],
    "model_type": "glm_moe_dsa",
    "num_hidden_layers": 78,
    "hidden_size": 6144,
    "num_attention_heads": 64,
    "num_key_value_heads": 64,
    "head_dim": 64,
    "intermediate_size": 12288,
    "vocab_size": 154880,
    "max_position_embeddings": 202752,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_experts_per_tok": 8,
    "moe_intermediate_size": 2048,
    "moe_layer_freq": 1,
    "first_k_dense_replace": 3,
    "kv_lora_rank": 512,
    "q_lora_rank": 2048,
    "qk_nope_head_dim": 192,
    "qk_rope_head_dim": 64,
    "v_head_dim": 256,
    "tie_word_embeddings": False,
    "index_n_heads": 32,
    "index_head_dim": 128,
    "index_topk": 2048,
}
GLM_45 = {  # https://huggingface.co/zai-org/GLM-4.5/blob/main/config.json
    "architectures": ["Glm4MoeForCausalLM"],
    "attention_bias": True,
    "first_k_dense_replace": 3,
    "head_dim": 128,
    "hidden_size": 5120,
    "intermediate_size": 12288,
    "max_position_embeddings": 131072,
    "model_type": "glm4_moe",
    "moe_intermediate_size": 1536,
    "n_routed_experts": 160,
    "n_shared_experts": 1,
    "num_attention_heads": 96,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 92,
    "num_key_value_heads": 8,
    "num_nextn_predict_layers": 1,
    "partial_rotary_factor": 0.5,
    "tie_word_embeddings": False,
    "use_qk_norm": True,
    "vocab_size": 151552,
}
MAVERICK = {  # https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E-Instruct
    "architectures": ["Llama4ForConditionalGeneration"],
    "text_config": {
        "attention_chunk_size": 8192,
        "head_dim": 128,
        "hidden_size": 5120,
        "interleave_moe_layer_step": 2,
        "intermediate_size": 8192,
        "intermediate_size_mlp": 16384,
        "max_position_embeddings": 1048576,
        "num_attention_heads": 40,
        "num_experts_per_tok": 1,
        "num_hidden_layers": 48,
        "num_key_value_heads": 8,
        "num_local_experts": 128,
        "vocab_size": 202048,
    },
}


def test_qwen3_8b_dense_with_qk_norm():
    a = engine.model_from_config(QWEN3_8B).arch
    assert (a.layers, a.heads, a.kv_heads, a.head_dim, a.qk_norm, a.is_moe) == (
        36,
        32,
        8,
        128,
        True,
        False,
    )
    # per layer: q 4096·4096 + k,v 2·4096·1024 + o 4096·4096 + q/k norms 2·128 = 41,943,296;
    # MLP 3·4096·12288 = 150,994,944; 2 norms 8192 -> 192,946,432 · 36 = 6,946,071,552;
    # embedding and head 2·151936·4096 = 1,244,659,712; final norm 4096 -> 8,190,735,360
    assert param_count(a) == 8_190_735_360  # the card: 8.2B


def test_deepseek_r1_is_v3_shaped_and_its_mtp_module_is_left_to_the_catalogue():
    a = engine.model_from_config(DEEPSEEK_R1).arch
    assert a == engine.model_from_config(DEEPSEEK_R1 | {"num_nextn_predict_layers": 0}).arch
    assert (a.attention, a.kv_lora_rank, a.dense_layers, a.moe_layers) == ("mla", 512, 3, 58)
    r1 = engine.default_catalog().models["DeepSeek-R1"]
    # the catalogue counts the MTP module (one MoE layer, 2h·h, 3 norms) as extra_params:
    # 671,026,404,352 + 11,610,067,968 = 682,636,472,320 ≈ the card's 685B (-0.35 %)
    assert param_count(r1.arch) == 682_636_472_320
    assert param_count(r1.arch) == pytest.approx(685e9, rel=0.01)


def test_kimi_k2_reads_as_deepseek_v3_with_384_experts():
    a = engine.model_from_config(KIMI_K2).arch
    assert (a.experts, a.experts_per_token, a.shared_experts, a.dense_layers) == (384, 8, 1, 1)
    assert (a.heads, a.vocab) == (64, 163840)
    # 60 MoE layers · 385 experts · 3·7168·2048 = 1,017,250,529,280 of the 1.026e12 total
    assert param_count(a) == pytest.approx(1.0264e12, rel=1e-4)
    assert 32e9 <= active_param_count(a) < 33e9  # the card: 32B activated


def test_deepseek_v32_reads_its_indexer_fields():
    a = engine.model_from_config(DEEPSEEK_V32).arch
    v3 = engine.model_from_config(DEEPSEEK_R1).arch  # the MLA shapes are V3's
    assert a == dataclasses.replace(v3, index_topk=2048, index_heads=64, index_head_dim=128)
    # its indexer: 1,536·64·128 + 7,168·128 + 2·128 + 7,168·64 = 13,959,424 a layer
    assert param_count(a) - param_count(v3) == 61 * 13_959_424
    for key, bad in (("index_topk", 0), ("index_n_heads", "64"), ("index_head_dim", None)):
        with pytest.raises(ValueError, match=key):
            engine.model_from_config(DEEPSEEK_V32 | {key: bad})


def test_glm_5_is_mla_with_a_lightning_indexer():
    a = engine.model_from_config(GLM_5).arch
    assert (a.attention, a.q_lora_rank, a.head_dim, a.rope_head_dim, a.v_head_dim) == (
        "mla",
        2048,
        192,
        64,
        256,
    )
    assert (a.index_topk, a.index_heads, a.index_head_dim) == (2048, 32, 128)
    # its indexer: 2,048·32·128 + 6,144·128 + 2·128 + 6,144·32 = 9,371,904 a layer
    bare = dataclasses.replace(a, index_topk=None, index_heads=0, index_head_dim=0)
    assert param_count(a) - param_count(bare) == 78 * 9_371_904
    # GLM-5.2's indexer shared every 4 layers is not modelled: refused, named
    with pytest.raises(ValueError, match="index_topk_freq"):
        engine.model_from_config(GLM_5 | {"index_topk_freq": 4})


def test_glm_45_biases_qk_norm_dense_then_moe():
    a = engine.model_from_config(GLM_45).arch
    assert (a.qkv_bias, a.out_bias, a.qk_norm) == (True, False, True)
    assert (a.dense_layers, a.moe_layers, a.experts, a.shared_experts) == (3, 89, 160, 1)
    # attention: q 5120·12288 + k,v 2·5120·1024 + o 12288·5120 + biases 12288 + 2·1024
    # + q/k norms 2·128 = 136,329,472 per layer
    assert attention_params(a) == 136_329_472
    assert param_count(a) == pytest.approx(355e9, rel=0.01)  # the card: 355B


def test_maverick_alternates_dense_and_moe_layers():
    a = engine.model_from_config(MAVERICK).arch
    assert (a.dense_layers, a.moe_layers, a.intermediate, a.expert_intermediate) == (
        24,
        24,
        16384,
        8192,
    )
    assert (a.sliding_window, a.sliding_layers, a.sliding_pattern) == (8192, 36, 4)
    assert 17e9 <= active_param_count(a) < 18e9  # the card: 17B active


def test_gpt_oss_attention_sinks_and_alternating_windows():
    a = engine.default_catalog().models["gpt-oss-120b"].arch
    assert a.attention_sinks and (a.sliding_window, a.sliding_layers, a.sliding_pattern) == (
        128,
        18,
        2,
    )
    plain = dataclasses.replace(a, attention_sinks=False)
    assert param_count(a) - param_count(plain) == 36 * 64  # one sink logit per head and layer


MINIMAX_M2 = {  # MiniMax-M2's shapes (230B total, 10B active: its model card), as the public
    # configs of the minimax_m2 family spell them (e.g. NeMo Automodel's and vLLM's tests)
    "architectures": ["MiniMaxM2ForCausalLM"],
    "model_type": "minimax_m2",
    "hidden_size": 3072,
    "intermediate_size": 1536,
    "num_hidden_layers": 62,
    "num_attention_heads": 48,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "rotary_dim": 64,
    "num_local_experts": 256,
    "num_experts_per_tok": 8,
    "shared_intermediate_size": 0,
    "use_qk_norm": True,
    "qk_norm_type": "per_layer",
    "max_position_embeddings": 196608,
    "vocab_size": 200064,
    "tie_word_embeddings": False,
    "attn_type_list": [1] * 62,
    "num_mtp_modules": 3,
}


def test_minimax_m2_is_gqa_with_every_layer_moe():
    a = engine.model_from_config(MINIMAX_M2).arch
    assert (a.heads, a.kv_heads, a.head_dim, a.qk_norm) == (48, 8, 128, True)
    assert (a.experts, a.experts_per_token, a.expert_intermediate) == (256, 8, 1536)
    assert (a.dense_layers, a.moe_layers, a.shared_experts) == (0, 62, 0)
    # a layer: attention 3,072·6,144·2 + 3,072·1,024·2 = 44,040,192; 256 experts of
    # 3·3,072·1,536 = 14,155,776 each; the router 3,072·256 = 786,432; two norms 6,144
    # tables 2·200,064·3,072 = 1,229,193,216 and the final norm 3,072 (the q/k norms: a few
    # hundred weights a layer, counted per head)
    layer = 44_040_192 + 256 * 14_155_776 + 786_432 + 6_144
    total = 62 * layer + 1_229_193_216 + 3_072
    assert param_count(a) == pytest.approx(total, abs=62 * 512)
    assert param_count(a) == pytest.approx(230e9, rel=0.01)  # its model card's 230B
    # lightning attention (MiniMax-Text-01, M1) and a shared expert are refused, named
    with pytest.raises(ValueError, match="attn_type_list"):
        engine.model_from_config(MINIMAX_M2 | {"attn_type_list": [0, 1] * 31})
    with pytest.raises(ValueError, match="shared_intermediate_size"):
        engine.model_from_config(MINIMAX_M2 | {"shared_intermediate_size": 1536})
