"""Decoder-LLM architecture from its config.json shapes (docs/model.md, "Architecture").

A model is described by the shapes a Hugging Face config.json gives, not by a parameter
count: the parameter count, the active parameters per token and the KV-cache bytes per token
all follow from the shapes (Kaplan et al. 2020 for the dense count; DeepSeek-V2/V3 reports for
multi-head latent attention; Jiang et al. 2024, Mixtral, for routed experts).

All sizes are element counts (ints); bytes come only with a precision, elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass

MLP_KINDS = ("gated", "plain")  # gated: 3 matrices h×f (SwiGLU, GeGLU); plain: 2 (GELU MLP)
ATTENTION_KINDS = ("mha", "gqa", "mla")
NORM_KINDS = ("rmsnorm", "layernorm")  # layernorm carries a bias vector, rmsnorm does not


@dataclass(frozen=True, slots=True)
class Architecture:
    """The shapes of a decoder-only transformer, as its config.json gives them.

    Field names are a contract shared by the catalogue loader (`[models.X.arch]`), the
    config.json importer, the parameter count and the operator model.
    """

    layers: int  # L, num_hidden_layers
    hidden: int  # h, hidden_size
    heads: int  # H, num_attention_heads
    kv_heads: int  # K, num_key_value_heads (= H for MHA; unused by MLA's cache)
    head_dim: int  # d, per-head query/key width (MLA: qk_nope_head_dim)
    intermediate: int  # f, FFN width of the dense layers (intermediate_size)
    vocab: int  # V, vocab_size
    context_length: int  # max_position_embeddings (the model's trained context)
    mlp: str = "gated"
    tied_embeddings: bool = False  # the LM head reuses the embedding table
    attention: str = "gqa"
    # Multi-head latent attention (DeepSeek-V2/V3): the KV cache holds one latent per token.
    q_lora_rank: int | None = None  # None: a full-rank query projection
    kv_lora_rank: int | None = None  # r
    rope_head_dim: int | None = None  # d_r, the decoupled RoPE key width
    v_head_dim: int | None = None  # value head width when it differs from head_dim
    # Mixture of experts (0 experts: a dense model).
    experts: int = 0  # E routed experts per MoE layer
    experts_per_token: int = 0  # k
    expert_intermediate: int | None = None  # f_e, width of one routed expert
    shared_experts: int = 0  # always-active experts of width f_e per MoE layer
    dense_layers: int = 0  # leading layers whose FFN is dense (width f), DeepSeek-V3: 3
    # Attention span.
    sliding_window: int | None = None  # w tokens for local layers
    sliding_layers: int = 0  # how many of the L layers are local (window w)
    parallel_attention: bool = False  # attention and MLP read the same normed input (GPT-J)
    norm: str = "rmsnorm"
    qkv_bias: bool = False
    out_bias: bool = False
    mlp_bias: bool = False
    extra_params: float = 0.0  # parameters outside the decoder stack (e.g. a vision tower)

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab"):
            _whole(name, getattr(self, name), minimum=1)
        _whole("intermediate", self.intermediate, minimum=0)
        _whole("context_length", self.context_length, minimum=1)
        for name in ("experts", "experts_per_token", "shared_experts", "dense_layers"):
            _whole(name, getattr(self, name), minimum=0)
        _whole("sliding_layers", self.sliding_layers, minimum=0)
        for name in ("q_lora_rank", "kv_lora_rank", "rope_head_dim", "v_head_dim"):
            if getattr(self, name) is not None:
                _whole(name, getattr(self, name), minimum=1)
        if self.mlp not in MLP_KINDS:
            raise ValueError(f"mlp must be one of {', '.join(MLP_KINDS)}, got {self.mlp!r}")
        if self.attention not in ATTENTION_KINDS:
            known = ", ".join(ATTENTION_KINDS)
            raise ValueError(f"attention must be one of {known}, got {self.attention!r}")
        if self.norm not in NORM_KINDS:
            raise ValueError(f"norm must be one of {', '.join(NORM_KINDS)}, got {self.norm!r}")
        if self.attention != "mla" and (self.kv_heads > self.heads or self.heads % self.kv_heads):
            raise ValueError("kv_heads must divide heads")
        if self.attention == "mla" and not (self.kv_lora_rank and self.rope_head_dim):
            raise ValueError("attention 'mla' needs kv_lora_rank and rope_head_dim")
        if self.experts:
            if not 1 <= self.experts_per_token <= self.experts:
                raise ValueError("experts_per_token must be from 1 to experts")
            if not self.expert_intermediate:
                raise ValueError("a mixture of experts needs expert_intermediate")
        if self.dense_layers > self.layers or self.sliding_layers > self.layers:
            raise ValueError("dense_layers and sliding_layers cannot exceed layers")
        if self.sliding_layers and not self.sliding_window:
            raise ValueError("sliding_layers needs sliding_window")
        if self.sliding_window is not None:
            _whole("sliding_window", self.sliding_window, minimum=1)
        if not (self.extra_params >= 0):
            raise ValueError("extra_params must be >= 0")

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        """Layers with routed experts (all but the leading dense ones)."""
        return self.layers - self.dense_layers if self.is_moe else 0


def _whole(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
