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
    # Added shapes (defaults keep the fields above meaning what they meant).
    norms_per_layer: int = 2  # GPT-J: 1 (shared by the parallel branches); Gemma 2/3: 4
    qk_norm: bool = False  # a per-head norm of width d on queries and keys (Qwen3, Gemma 3)
    position_embeddings: bool = False  # learned absolute positions, context_length × h (GPT-2)
    lm_head_bias: bool = False  # GPT-J's LM head has a bias vector
    sliding_pattern: int = 0  # every n-th layer is global (Gemma 3: 6); 0: no fixed pattern
    # gpt-oss: one learned sink logit per head and layer joins each softmax (an extra "key"
    # with no value): H parameters a layer; its FLOPs and bytes are negligible, not counted.
    attention_sinks: bool = False
    # DeepSeek Sparse Attention (DeepSeek-V3.2; MLA only): a lightning indexer of index_heads
    # heads of width index_head_dim, fed by the query latent, scores every cached key (its own
    # fp8 key cache) and each query attends the index_topk best (None: every key).
    index_topk: int | None = None
    index_heads: int = 0
    index_head_dim: int = 0
    # Group-limited routing (DeepSeek-V2/V3's node-limited routing): the routed experts fall in
    # `expert_groups` equal groups and each token's k experts come from at most
    # `groups_per_token` of them (config.json n_group, topk_group; 1 and 1: no limit).
    expert_groups: int = 1
    groups_per_token: int = 1

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
        _check_added(self)

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        """Layers with routed experts (all but the leading dense ones)."""
        return self.layers - self.dense_layers if self.is_moe else 0


def _check_added(arch: Architecture) -> None:
    """Checks of the fields added after the first release (norms, window pattern)."""
    _whole("norms_per_layer", arch.norms_per_layer, minimum=0)
    _whole("expert_groups", arch.expert_groups, minimum=1)
    _whole("groups_per_token", arch.groups_per_token, minimum=1)
    if arch.groups_per_token > arch.expert_groups:
        raise ValueError("groups_per_token cannot exceed expert_groups")
    if arch.expert_groups > 1 and (not arch.experts or arch.experts % arch.expert_groups):
        raise ValueError("expert_groups must divide experts")
    if arch.index_topk is not None:
        _whole("index_topk", arch.index_topk, minimum=1)
        for name in ("index_heads", "index_head_dim"):
            _whole(name, getattr(arch, name), minimum=1)
        if arch.attention != "mla" or not arch.q_lora_rank:
            raise ValueError("index_topk (sparse attention) needs attention 'mla' and q_lora_rank")
    _whole("sliding_pattern", arch.sliding_pattern, minimum=0)
    if arch.sliding_pattern:
        local = arch.layers - arch.layers // arch.sliding_pattern
        if arch.sliding_layers != local:
            raise ValueError(
                f"sliding_pattern {arch.sliding_pattern} over {arch.layers} layers makes "
                f"{local} local layers, but sliding_layers is {arch.sliding_layers}"
            )


def _norm(arch: Architecture, width: int) -> int:
    """Parameters of one norm over `width` features: a scale, plus a bias for LayerNorm."""
    return 2 * width if arch.norm == "layernorm" else width


def attention_params(arch: Architecture) -> int:
    """Parameters of one layer's attention: projections, their biases and internal norms.

    MLA (DeepSeek-V2/V3): queries go through a rank-q_r bottleneck (with an RMSNorm), keys and
    values through one rank-r latent plus a shared RoPE key of width d_r (with an RMSNorm on
    the latent); heads are then expanded by q_b/kv_b projections.
    """
    h, nh, d = arch.hidden, arch.heads, arch.head_dim
    dv = arch.v_head_dim or d
    if arch.attention == "mla":
        qr, r, dr = arch.q_lora_rank, arch.kv_lora_rank, arch.rope_head_dim
        q = h * qr + qr + qr * nh * (d + dr) if qr else h * nh * (d + dr)
        kv = h * (r + dr) + r + r * nh * (d + dv)
        return q + kv + nh * dv * h + indexer_params(arch)
    kh = arch.kv_heads
    count = h * nh * d + h * kh * (d + dv) + nh * dv * h
    if arch.qkv_bias:
        count += nh * d + kh * (d + dv)
    if arch.out_bias:
        count += h
    if arch.qk_norm:
        count += 2 * d
    if arch.attention_sinks:
        count += nh
    return count


def indexer_params(arch: Architecture) -> int:
    """DeepSeek Sparse Attention's lightning indexer in one layer (0 without one): its query
    projection from the query latent (q_r × heads·width), its key projection (h × width) with a
    LayerNorm (2·width) and its per-head weights (h × heads); DeepSeek-V3.2-Exp's
    inference/model.py `Indexer`."""
    if arch.index_topk is None:
        return 0
    ih, idim = arch.index_heads, arch.index_head_dim
    return arch.q_lora_rank * ih * idim + arch.hidden * idim + 2 * idim + arch.hidden * ih


def _mlp(arch: Architecture, width: int) -> int:
    h = arch.hidden
    if arch.mlp == "gated":  # gate, up (h×f each) and down (f×h)
        return 3 * h * width + (2 * width + h if arch.mlp_bias else 0)
    return 2 * h * width + (width + h if arch.mlp_bias else 0)


def ffn_params(arch: Architecture, *, moe: bool, active: bool = False) -> int:
    """Parameters of one layer's feed-forward block (all experts, or the k used per token).

    A MoE layer holds E routed experts of width f_e, the shared experts and a router (h×E,
    plus a bias vector when the experts carry biases, as in gpt-oss).
    """
    if not moe:
        return _mlp(arch, arch.intermediate)
    expert = _mlp(arch, arch.expert_intermediate)
    routed = arch.experts_per_token if active else arch.experts
    router = arch.hidden * arch.experts + (arch.experts if arch.mlp_bias else 0)
    return (routed + arch.shared_experts) * expert + router


def layer_params(arch: Architecture, *, moe: bool, active: bool = False) -> int:
    """One decoder layer: attention, feed-forward and its norms."""
    norms = arch.norms_per_layer * _norm(arch, arch.hidden)
    return attention_params(arch) + ffn_params(arch, moe=moe, active=active) + norms


def embedding_params(arch: Architecture) -> int:
    """The input token embedding (V×h), plus learned position embeddings if any."""
    positions = arch.context_length * arch.hidden if arch.position_embeddings else 0
    return arch.vocab * arch.hidden + positions


def head_params(arch: Architecture) -> int:
    """The LM head's own parameters: none when tied to the embedding table."""
    if arch.tied_embeddings:
        return 0
    return arch.vocab * arch.hidden + (arch.vocab if arch.lm_head_bias else 0)


def _stack(arch: Architecture, *, active: bool) -> int:
    dense = arch.layers - arch.moe_layers
    stack = dense * layer_params(arch, moe=False)
    if arch.moe_layers:
        stack += arch.moe_layers * layer_params(arch, moe=True, active=active)
    return stack + _norm(arch, arch.hidden)  # + the final norm


def param_count(arch: Architecture) -> float:
    """All parameters: embeddings, every layer with every expert, final norm, head, extras."""
    stack = _stack(arch, active=False)
    return float(embedding_params(arch) + stack + head_params(arch)) + arch.extra_params


def active_param_count(arch: Architecture, *, embedding: bool = True) -> float:
    """Parameters one token uses: k routed + shared experts, dense layers, attention, head.

    Args:
        embedding: count the input embedding table (the usual convention: Mistral, Qwen,
            DeepSeek, Meta). OpenAI's gpt-oss figures leave it out (a lookup, not a matmul)
            but keep the unembedding; with tied embeddings the one table is then counted
            once, as the unembedding.

    `extra_params` (a vision tower) is not active for a text token.
    """
    head = head_params(arch) or (0 if embedding else arch.vocab * arch.hidden)
    embed = embedding_params(arch) if embedding else 0
    return float(embed + _stack(arch, active=True) + head)


def layer_windows(arch: Architecture) -> tuple[int | None, ...]:
    """Each layer's attention window in tokens (None: global). With `sliding_pattern` n,
    layers n-1, 2n-1, ... are global; without one, the local layers are listed first."""
    if arch.sliding_pattern:
        n = arch.sliding_pattern
        return tuple(None if (i + 1) % n == 0 else arch.sliding_window for i in range(arch.layers))
    local = arch.sliding_layers
    return (arch.sliding_window,) * local + (None,) * (arch.layers - local)


def _whole(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
