"""GPT models given by their shapes: the models of the Megatron-LM papers as Architectures.

Megatron-LM's GPT (Shoeybi et al. 2019; Narayanan et al. 2021, Table 1) is GPT-2/3-shaped: L
layers of multi-head attention (H heads of width h/H) and a plain GELU MLP of width 4h,
LayerNorm, biases on every projection, learned position embeddings for the sequence length,
and an LM head tied to the input embedding (vocabulary V, padded: 51,200 for GPT-2's BPE).
Its parameter count is 12·L·h²·(1 + 13/(12h) + (V + s)/(12·L·h)) (the paper's Eq. 2) plus
the final LayerNorm, so `param_count(gpt_architecture(...))` reproduces the paper's "number of
parameters" (1.7B ... 1008B).
"""

from __future__ import annotations

from engine.catalog.arch import Architecture
from engine.checks import MAX_TOKENS, check_whole

MAX_WIDTH = 1_000_000  # hidden size or vocabulary
MAX_COUNT = 100_000  # layers or heads


def gpt_architecture(
    *, layers: int, hidden: int, heads: int, vocab: int = 51_200, seq_len: int = 2048
) -> Architecture:
    """A Megatron/GPT-3-style decoder from its shapes.

    Args:
        layers, hidden, heads: L, h and H (H must divide h).
        vocab: V, the padded vocabulary (Megatron's GPT-2 BPE: 51,200).
        seq_len: the trained sequence length (learned positions, s × h parameters).

    Raises:
        ValueError: a count out of range, or H not dividing h (the message names it).
    """
    L = check_whole(layers, "layers", high=MAX_COUNT)
    h = check_whole(hidden, "hidden", high=MAX_WIDTH)
    H = check_whole(heads, "heads", high=MAX_COUNT)
    V = check_whole(vocab, "vocab", high=MAX_WIDTH)
    s = check_whole(seq_len, "seq_len", high=MAX_TOKENS)
    if h % H:
        raise ValueError(f"heads {H} must divide hidden {h} (head width h/H)")
    return Architecture(
        layers=L,
        hidden=h,
        heads=H,
        kv_heads=H,
        head_dim=h // H,
        intermediate=4 * h,
        vocab=V,
        context_length=s,
        mlp="plain",
        tied_embeddings=True,
        attention="mha",
        norm="layernorm",
        qkv_bias=True,
        out_bias=True,
        mlp_bias=True,
        position_embeddings=True,
    )
