"""A decoder's shapes as the numbers the kernels read, and the one rule for KV-cache bytes.

`Shapes` holds an Architecture's figures as floats, or as numpy arrays with one value per
scenario (a sweep over models); every kernel of the serving model, the decode view and the
training model reads them by name. The KV-cache rule lives here once (docs/model.md,
"Architecture"): per token and layer a GQA/MHA layer caches K·(d_qk + d_v) elements, an MLA
layer its latent of r + d_r (DeepSeek-V2/V3), a sparse-attention layer (DeepSeek-V3.2) also its
indexer's fp8 key, and a sliding-window layer holds at most w tokens (Mistral-7B-v0.1, Gemma
2/3, gpt-oss).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields

import numpy as np

from engine.arrays import INF, SCALAR
from engine.catalog.arch import Architecture

# DeepSeek Sparse Attention's indexer keys: fp8 elements with an fp32 scale per block of 128
INDEX_KEY_BYTES, INDEX_SCALE_BYTES, INDEX_BLOCK = 1.0, 4.0, 128.0


@dataclass(frozen=True, slots=True)
class Shapes:
    """An Architecture as kernel inputs: floats (bools for flags), or arrays of them."""

    layers: object  # L
    hidden: object  # h
    heads: object  # H, query heads
    kv_heads: object  # K (unused by MLA's cache)
    qk_dim: object  # query/key width per head (MLA: nope + rope)
    v_dim: object  # value width per head
    nope_dim: object  # MLA: the query/key width without the rope part (= head_dim)
    ffn: object  # f, dense FFN width
    vocab: object  # V
    ffn_matrices: object  # 3 for a gated MLP (SwiGLU), 2 for a plain one
    tables: object  # vocabulary tables held: 1 when the LM head is tied, else 2
    mla: object  # bool: multi-head latent attention
    q_rank: object  # MLA query bottleneck (0: full rank)
    kv_rank: object  # MLA latent width r
    rope_dim: object  # MLA decoupled rope key width d_r
    experts: object  # E routed experts per MoE layer (0: dense)
    experts_per_token: object  # k
    expert_ffn: object  # f_e, one routed expert's width
    shared_experts: object
    moe_layers: object
    dense_layers: object  # layers with a dense FFN (all of a dense model)
    window: object  # sliding window w in tokens (INF: none)
    local_layers: object  # layers that attend within the window
    norms_per_layer: object
    norm_vectors: object  # 2 for LayerNorm (scale and bias), 1 for RMSNorm
    context_length: object  # the model's trained context, tokens
    parallel_attention: object  # bool: attention and MLP read one normed input (GPT-J, Falcon)
    index_topk: object = INF  # sparse attention: keys each query attends (INF: every key)
    index_heads: object = 0.0  # its lightning indexer's heads (0: none)
    index_dim: object = 0.0  # and their width
    expert_groups: object = 1.0  # group-limited routing: the routed experts' groups G
    groups_per_token: object = 1.0  # the groups a token's experts come from, at most g

    def map(self, fn) -> Shapes:
        """A Shapes with `fn` applied to every field (reshape, slice, index)."""
        return Shapes(*(fn(getattr(self, f.name)) for f in fields(self)))

    @staticmethod
    def stack(items: list[Shapes]) -> Shapes:
        """One Shapes of arrays, one value per item (floats and bools keep their dtype)."""
        return Shapes(*(np.array([getattr(s, f.name) for s in items]) for f in fields(Shapes)))


@functools.lru_cache(maxsize=512)
def shapes_of(arch: Architecture) -> Shapes:
    """The Shapes of one Architecture (cached: Architecture is frozen and hashable)."""
    mla = arch.attention == "mla"
    moe = arch.layers - arch.dense_layers if arch.experts else 0
    return Shapes(
        layers=float(arch.layers),
        hidden=float(arch.hidden),
        heads=float(arch.heads),
        kv_heads=float(arch.kv_heads),
        qk_dim=float(arch.head_dim + ((arch.rope_head_dim or 0) if mla else 0)),
        v_dim=float(arch.v_head_dim or arch.head_dim),
        nope_dim=float(arch.head_dim),
        ffn=float(arch.intermediate),
        vocab=float(arch.vocab),
        ffn_matrices=3.0 if arch.mlp == "gated" else 2.0,
        tables=1.0 if arch.tied_embeddings else 2.0,
        mla=mla,
        q_rank=float(arch.q_lora_rank or 0) if mla else 0.0,
        kv_rank=float(arch.kv_lora_rank or 0) if mla else 0.0,
        rope_dim=float(arch.rope_head_dim or 0) if mla else 0.0,
        experts=float(arch.experts),
        experts_per_token=float(arch.experts_per_token),
        expert_ffn=float(arch.expert_intermediate or 0),
        shared_experts=float(arch.shared_experts),
        moe_layers=float(moe),
        dense_layers=float(arch.layers - moe),
        window=float(arch.sliding_window) if arch.sliding_window else INF,
        local_layers=float(arch.sliding_layers if arch.sliding_window else 0),
        norms_per_layer=float(arch.norms_per_layer),
        norm_vectors=2.0 if arch.norm == "layernorm" else 1.0,
        context_length=float(arch.context_length),
        parallel_attention=arch.parallel_attention,
        index_topk=float(arch.index_topk) if arch.index_topk else INF,
        index_heads=float(arch.index_heads if arch.index_topk else 0),
        index_dim=float(arch.index_head_dim if arch.index_topk else 0),
        expert_groups=float(arch.expert_groups),
        groups_per_token=float(arch.groups_per_token),
    )


def heads_per_device(s: Shapes, tp, xp=SCALAR):
    """(query heads, KV heads) per device under tensor parallelism; a KV head is replicated
    when there are fewer KV heads than devices."""
    return s.heads / tp, xp.maximum(s.kv_heads / tp, 1.0)


def attended_kv_bytes(s: Shapes, kv_bytes, tp=1.0, xp=SCALAR):
    """Bytes of one token's keys and values in one layer, as attention reads them: (whole
    model, one of `tp` devices).

    GQA/MHA: K·(d_qk + d_v) elements, split TP ways (a KV head replicated when K < TP; Ainslie
    et al. 2023). MLA: one latent of r + d_r elements shared by every head, so replicated on
    every tensor-parallel device. `kv_bytes` is bytes per element (2 at fp16).
    """
    _, k_dev = heads_per_device(s, tp, xp)
    latent = s.kv_rank + s.rope_dim
    whole = xp.where(s.mla, latent, s.kv_heads * (s.qk_dim + s.v_dim)) * kv_bytes
    device = xp.where(s.mla, latent, k_dev * (s.qk_dim + s.v_dim)) * kv_bytes
    return whole, device


def index_key_bytes(s: Shapes):
    """Bytes of one token's key in a sparse-attention indexer's cache, one layer (0 without
    one): `index_dim` fp8 elements and an fp32 scale per 128 of them (DeepSeek-V3.2-Exp's
    `k_cache` and `k_scale_cache`: 128 + 4 bytes), on every tensor-parallel device."""
    return s.index_dim * (INDEX_KEY_BYTES + INDEX_SCALE_BYTES / INDEX_BLOCK)


def kv_bytes_per_token_layer(s: Shapes, kv_bytes, tp=1.0, xp=SCALAR):
    """KV-cache bytes one token adds in one layer: (whole model, one of `tp` devices): what
    attention reads (`attended_kv_bytes`) and a sparse-attention indexer's key
    (`index_key_bytes`, fp8 whatever `kv_bytes` is)."""
    whole, device = attended_kv_bytes(s=s, kv_bytes=kv_bytes, tp=tp, xp=xp)
    index = index_key_bytes(s)
    return whole + index, device + index


def cached_tokens(s: Shapes, context, xp=SCALAR):
    """Σ over the layers of the tokens each caches for one sequence of `context` tokens: a
    global layer all of them, a sliding-window layer at most w."""
    return (s.layers - s.local_layers) * context + s.local_layers * xp.minimum(context, s.window)


def sequence_kv_bytes(s: Shapes, kv_bytes, context, xp=SCALAR):
    """KV-cache bytes of one sequence of `context` tokens, whole model (every layer, window-capped):
    e.g. Llama-3.1-8B at fp16, 131,072 B per token; DeepSeek-V3 70,272 B; Mistral-7B-v0.1 stops
    at 4,096 tokens × 131,072 B = 536,870,912 B."""
    return kv_bytes_per_token_layer(s=s, kv_bytes=kv_bytes, tp=1.0, xp=xp)[0] * cached_tokens(
        s, context, xp
    )


def kv_cache_bytes(arch: Architecture, kv_bytes: float, context):
    """`sequence_kv_bytes` of an Architecture; `context` a number (a float back) or an array."""
    c = np.asarray(context, dtype=float)
    out = np.asarray(sequence_kv_bytes(s=shapes_of(arch), kv_bytes=kv_bytes, context=c, xp=np))
    return float(out) if out.ndim == 0 else out


def kv_bytes_per_token(arch: Architecture, kv_bytes: float, context=None):
    """KV-cache bytes per token of one sequence.

    Without `context`: what one more token adds while every layer still grows (the full
    per-token figure, e.g. Llama-3.1-8B at fp16: 2·32·8·128·2 = 131,072 B). With `context`:
    the cache of a `context`-token sequence divided by its length (smaller once windows fill).
    """
    if context is None:
        s = shapes_of(arch)
        return kv_bytes_per_token_layer(s, kv_bytes)[0] * s.layers
    c = np.asarray(context, dtype=float)
    if np.any(c <= 0):
        raise ValueError("context must be > 0 tokens")
    out = np.asarray(kv_cache_bytes(arch, kv_bytes, c)) / c
    return float(out) if out.ndim == 0 else out
