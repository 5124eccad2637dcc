"""config.json field mapping, one function per Hugging Face architecture (a dict of shapes).

Each family reads its own spelling of the shapes (GPT-2's n_embd, Falcon's num_kv_heads,
DeepSeek's kv_lora_rank, ...) through `Fields`, which checks type and range and names the
field in every error. Keys a file omits take the defaults of that family's configuration
class in transformers. The mapping is tabulated in data/README.md ("arch").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from engine.files import echo

_BOUNDS = {  # generous upper limits; beyond them a value is a typo or an attack
    "layers": 10_000,
    "width": 10_000_000,
    "heads": 100_000,
    "vocab": 100_000_000,
    "context": 1_000_000_000,
    "experts": 100_000,
}


def _fail(where: str, key: str, message: str) -> ValueError:
    return ValueError(f"config.json: '{where}{key}' {message}")


class Fields:
    """Typed reads of one config table (the top level, or text_config)."""

    def __init__(self, table: Mapping, where: str = "", defaults: Mapping | None = None):
        self.table, self.where, self.defaults = table, where, dict(defaults or {})

    def has(self, key: str) -> bool:
        return self.table.get(key) is not None or key in self.defaults

    def whole(self, key: str, bound: str = "width", *, minimum: int = 1) -> int:
        value = self.table.get(key, self.defaults.get(key))
        if value is None:
            raise _fail(self.where, key, "is missing")
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(self.where, key, f"must be a whole number, got {echo(value)}")
        if not minimum <= value <= _BOUNDS[bound]:
            top = _BOUNDS[bound]
            raise _fail(self.where, key, f"must be from {minimum} to {top:,}, got {echo(value)}")
        return value

    def maybe(self, key: str, bound: str = "width", *, minimum: int = 1) -> int | None:
        return self.whole(key, bound, minimum=minimum) if self.has(key) else None

    def flag(self, key: str, default: bool) -> bool:
        value = self.table.get(key, self.defaults.get(key, default))
        if value is None:
            return default
        if not isinstance(value, bool):
            raise _fail(self.where, key, f"must be true or false, got {echo(value)}")
        return value

    def text(self, key: str) -> str | None:
        value = self.table.get(key)
        return value if isinstance(value, str) else None


def _attention_core(f: Fields, *, tied: bool) -> dict:
    """The fields every Llama-like config.json spells the same way."""
    heads = f.whole("num_attention_heads", "heads")
    hidden = f.whole("hidden_size")
    return {
        "layers": f.whole("num_hidden_layers", "layers"),
        "hidden": hidden,
        "heads": heads,
        "kv_heads": f.whole("num_key_value_heads", "heads")
        if f.has("num_key_value_heads")
        else heads,
        "head_dim": f.maybe("head_dim") or hidden // heads,
        "intermediate": f.whole("intermediate_size"),
        "vocab": f.whole("vocab_size", "vocab"),
        "context_length": f.whole("max_position_embeddings", "context"),
        "tied_embeddings": f.flag("tie_word_embeddings", tied),
    }


def _window_layers(layers: int, window: int | None, kinds: list | None, every: int) -> dict:
    """Sliding-window fields from a window and either layer_types or a period `every`."""
    if not window:
        return {}
    if kinds is not None:
        if not isinstance(kinds, list) or len(kinds) != layers:
            raise ValueError(f"config.json: 'layer_types' must list {layers} layer kinds")
        local = [k == "sliding_attention" for k in kinds]
        period = next(
            (n for n in range(2, layers + 1) if local == [(i + 1) % n != 0 for i in range(layers)]),
            0,
        )
        return {"sliding_window": window, "sliding_layers": sum(local), "sliding_pattern": period}
    if every:
        local = layers - layers // every
        return {"sliding_window": window, "sliding_layers": local, "sliding_pattern": every}
    return {"sliding_window": window, "sliding_layers": layers}


def _llama(f: Fields) -> dict:
    bias = f.flag("attention_bias", False)
    return {
        **_attention_core(f, tied=False),
        "qkv_bias": bias,
        "out_bias": bias,
        "mlp_bias": f.flag("mlp_bias", False),
    }


def _mistral(f: Fields) -> dict:  # Mistral, Mixtral and Phi-3: every layer local if windowed
    out = {**_attention_core(f, tied=False)}
    layers = out["layers"]
    out |= _window_layers(
        layers=layers, window=f.maybe("sliding_window", "context"), kinds=None, every=0
    )
    if f.has("num_local_experts"):
        out |= _experts(f, "num_local_experts", "intermediate_size")
    return out


def _experts(f: Fields, count: str, width: str, shared: int = 0) -> dict:
    return {
        "experts": f.whole(count, "experts"),
        "experts_per_token": f.whole("num_experts_per_tok", "experts"),
        "expert_intermediate": f.whole(width),
        "shared_experts": shared,
    }


def _qwen(f: Fields, *, qk_norm: bool, moe: bool) -> dict:
    out = {**_attention_core(f, tied=False), "qk_norm": qk_norm}
    out["qkv_bias"] = not qk_norm or f.flag("attention_bias", False)  # Qwen2: q/k/v biases
    out["out_bias"] = qk_norm and f.flag("attention_bias", False)
    if f.flag("use_sliding_window", False):
        window = f.whole("sliding_window", "context")
        first = f.whole("max_window_layers", "layers", minimum=0)
        out |= {"sliding_window": window, "sliding_layers": max(out["layers"] - first, 0)}
    if moe:
        if f.table.get("mlp_only_layers") or f.table.get("decoder_sparse_step", 1) != 1:
            raise _fail(
                f.where, "mlp_only_layers", "and decoder_sparse_step != 1 are not supported"
            )
        out |= _experts(f, "num_experts", "moe_intermediate_size")
    return out


def _gemma(f: Fields, *, version: int) -> dict:
    out = {**_attention_core(f, tied=True), "norms_per_layer": 4, "qk_norm": version == 3}
    bias = f.flag("attention_bias", False)
    out |= {"qkv_bias": bias, "out_bias": bias}
    every = f.whole("sliding_window_pattern", "layers") if version == 3 else 2
    kinds = f.table.get("layer_types") if version == 3 else None
    return out | _window_layers(
        layers=out["layers"], window=f.maybe("sliding_window", "context"), kinds=kinds, every=every
    )


GEMMA3_TEXT_DEFAULTS = {  # transformers' Gemma3TextConfig defaults, for keys a file omits
    "vocab_size": 262_208,
    "max_position_embeddings": 131_072,
    "sliding_window_pattern": 6,
    "head_dim": 256,
    "tie_word_embeddings": True,
}


def _llama4(f: Fields) -> dict:
    out = {**_attention_core(f, tied=False), "intermediate": f.whole("intermediate_size_mlp")}
    out |= _experts(f, "num_local_experts", "intermediate_size", shared=1)
    # Maverick: experts on every 2nd layer, a dense FFN (intermediate_size_mlp) on the others.
    # The model counts layers by kind, not by position, so they are `dense_layers`.
    step = (
        f.whole("interleave_moe_layer_step", "layers") if f.has("interleave_moe_layer_step") else 1
    )
    out["dense_layers"] = out["layers"] - out["layers"] // step
    # Chunked local attention on three layers in four (the RoPE layers; every 4th is global):
    # a chunked layer holds at most attention_chunk_size tokens, as a window of that size.
    return out | _window_layers(
        layers=out["layers"], window=f.maybe("attention_chunk_size", "context"), kinds=None, every=4
    )


def _gpt_oss(f: Fields) -> dict:
    out = {**_attention_core(f, tied=False), "intermediate": 0}
    bias = f.flag("attention_bias", True)
    out |= {"qkv_bias": bias, "out_bias": bias, "mlp_bias": True}  # experts and router: biases
    out["attention_sinks"] = True  # GptOssAttention's `sinks`: one logit per head (no key)
    out |= _experts(f, "num_local_experts", "intermediate_size")
    kinds = f.table.get("layer_types")
    window = f.maybe("sliding_window", "context")
    return out | _window_layers(
        layers=out["layers"], window=window, kinds=kinds, every=0 if kinds else 2
    )


def _minimax_m2(f: Fields) -> dict:
    """MiniMax-M2 (minimax_m2): GQA with a q/k norm, every layer MoE (Mixtral's spelling:
    `num_local_experts` of `intermediate_size`, top-`num_experts_per_tok`, no shared expert).
    Its norm spans all heads at once (`qk_norm_type` per_layer) where the catalogue's qk_norm is
    per head: the norms' few thousand weights a layer differ, not their FLOPs or bytes that
    count. Lightning (linear) attention layers (`attn_type_list` 0: MiniMax-Text-01, M1) and a
    shared expert are refused; the MTP modules are not counted, as DeepSeek-V3's."""
    kinds = f.table.get("attn_type_list") or []
    if any(kind != 1 for kind in kinds):
        raise _fail(f.where, "attn_type_list", "with lightning (linear) attention is not supported")
    if f.table.get("shared_intermediate_size"):
        raise _fail(f.where, "shared_intermediate_size", "(a shared expert) is not supported")
    out = {**_attention_core(f, tied=False), "qk_norm": f.flag("use_qk_norm", False)}
    return out | _experts(f, "num_local_experts", "intermediate_size")


def _deepseek_v32(f: Fields) -> dict:
    """DeepSeek-V3.2: V3's shapes plus DeepSeek Sparse Attention's lightning indexer
    (`index_n_heads` heads of `index_head_dim`; each query attends its `index_topk` keys)."""
    out = {
        "index_heads": f.whole("index_n_heads", "heads"),
        "index_head_dim": f.whole("index_head_dim", "width"),
        "index_topk": f.whole("index_topk", "context"),
    }
    return _deepseek_v3(f) | out


def _glm_moe_dsa(f: Fields) -> dict:
    """GLM-5 (glm_moe_dsa): DeepSeek-V3.2's spelling, MLA with a lightning indexer; an indexer
    shared across layers (`index_topk_freq` above 1, GLM-5.2's) is refused, not modelled."""
    if f.table.get("index_topk_freq", 1) != 1:
        raise _fail(f.where, "index_topk_freq", "other than 1 (a shared indexer) is not supported")
    return _deepseek_v32(f)


def _glm4_moe(f: Fields) -> dict:
    """GLM-4.5/4.6 (glm4_moe): GQA with q/k/v biases and a per-head q/k norm, leading dense
    layers, then routed experts with shared ones (DeepSeek-V3's MoE spelling)."""
    out = {**_attention_core(f, tied=False), "qkv_bias": f.flag("attention_bias", False)}
    out |= {
        "qk_norm": f.flag("use_qk_norm", False),
        "dense_layers": f.whole("first_k_dense_replace", "layers", minimum=0),
    }
    shared = f.whole("n_shared_experts", "experts", minimum=0)
    return out | _experts(
        f=f, count="n_routed_experts", width="moe_intermediate_size", shared=shared
    )


def _deepseek_v3(f: Fields) -> dict:
    if f.table.get("moe_layer_freq", 1) != 1:
        raise _fail(f.where, "moe_layer_freq", "other than 1 is not supported")
    out = {**_attention_core(f, tied=False), "attention": "mla"}
    out |= {
        "head_dim": f.whole("qk_nope_head_dim"),
        "v_head_dim": f.whole("v_head_dim"),
        "q_lora_rank": f.maybe("q_lora_rank"),
        "kv_lora_rank": f.whole("kv_lora_rank"),
        "rope_head_dim": f.whole("qk_rope_head_dim"),
        "dense_layers": f.whole("first_k_dense_replace", "layers", minimum=0),
        "qkv_bias": f.flag("attention_bias", False),
    }
    shared = f.whole("n_shared_experts", "experts", minimum=0)
    experts = _experts(f=f, count="n_routed_experts", width="moe_intermediate_size", shared=shared)
    return out | experts | _groups(f)


def _groups(f: Fields) -> dict:
    """Group-limited routing (DeepSeek-V2's `group_limited_greedy`, V3's `noaux_tc`): `n_group`
    groups of experts, each token's from at most `topk_group` of them; none under plain
    `greedy` top-k (DeepSeek-V2-Lite) or without the keys."""
    if f.table.get("topk_method") == "greedy" or not f.has("n_group"):
        return {}
    groups = f.whole("n_group", "experts")
    return {"expert_groups": groups, "groups_per_token": f.maybe("topk_group", "experts") or groups}


def _gpt(f: Fields, *, gptj: bool) -> dict:
    hidden = f.whole("n_embd")
    heads = f.whole("n_head", "heads")
    inner = f.maybe("n_inner") or 4 * hidden
    out = {
        "layers": f.whole("n_layer", "layers"),
        "hidden": hidden,
        "heads": heads,
        "kv_heads": heads,
        "head_dim": hidden // heads,
        "intermediate": inner,
        "vocab": f.whole("vocab_size", "vocab"),
        "context_length": f.whole("n_positions", "context"),
        "mlp": "plain",
        "norm": "layernorm",
        "mlp_bias": True,
    }
    if gptj:  # rotary positions, one norm feeding both branches, a biased LM head
        return out | {
            "parallel_attention": True,
            "norms_per_layer": 1,
            "lm_head_bias": True,
            "tied_embeddings": f.flag("tie_word_embeddings", False),
        }
    return out | {
        "qkv_bias": True,
        "out_bias": True,
        "position_embeddings": True,
        "tied_embeddings": f.flag("tie_word_embeddings", True),
    }


def _falcon(f: Fields) -> dict:
    hidden = f.whole("hidden_size")
    heads = f.whole("num_attention_heads", "heads")
    if f.flag("new_decoder_architecture", False):
        kv_heads = f.whole("num_kv_heads", "heads")
    else:
        kv_heads = 1 if f.flag("multi_query", True) else heads
    parallel = f.flag("parallel_attn", True)
    bias = f.flag("bias", False)
    new = f.flag("new_decoder_architecture", False)
    return {
        "layers": f.whole("num_hidden_layers", "layers"),
        "hidden": hidden,
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": hidden // heads,
        "intermediate": f.maybe("ffn_hidden_size") or 4 * hidden,
        "vocab": f.whole("vocab_size", "vocab"),
        "context_length": f.maybe("max_position_embeddings", "context") or 2048,
        "mlp": "plain",
        "norm": "layernorm",
        "tied_embeddings": f.flag("tie_word_embeddings", True),
        "parallel_attention": parallel,
        "norms_per_layer": 2 if new or not parallel else 1,
        "qkv_bias": bias,
        "out_bias": bias,
        "mlp_bias": bias,
    }


TEXT_CONFIG = {"Gemma3ForConditionalGeneration", "Llama4ForConditionalGeneration"}
FAMILIES: dict[str, Callable[[Fields], dict]] = {
    "LlamaForCausalLM": _llama,
    "MistralForCausalLM": _mistral,
    "MixtralForCausalLM": _mistral,
    "Phi3ForCausalLM": _mistral,
    "Qwen2ForCausalLM": lambda f: _qwen(f, qk_norm=False, moe=False),
    "Qwen3ForCausalLM": lambda f: _qwen(f, qk_norm=True, moe=False),
    "Qwen3MoeForCausalLM": lambda f: _qwen(f, qk_norm=True, moe=True),
    "Gemma2ForCausalLM": lambda f: _gemma(f, version=2),
    "Gemma3ForCausalLM": lambda f: _gemma(f, version=3),
    "Gemma3ForConditionalGeneration": lambda f: _gemma(f, version=3),
    "Llama4ForCausalLM": _llama4,
    "Llama4ForConditionalGeneration": _llama4,
    "GptOssForCausalLM": _gpt_oss,
    "DeepseekV3ForCausalLM": _deepseek_v3,  # and Kimi-K2 (model_type kimi_k2)
    "DeepseekV32ForCausalLM": _deepseek_v32,
    "Glm4MoeForCausalLM": _glm4_moe,
    "GlmMoeDsaForCausalLM": _glm_moe_dsa,  # GLM-5
    "MiniMaxM2ForCausalLM": _minimax_m2,
    "GPT2LMHeadModel": lambda f: _gpt(f, gptj=False),
    "GPTJForCausalLM": lambda f: _gpt(f, gptj=True),
    "FalconForCausalLM": _falcon,
}
