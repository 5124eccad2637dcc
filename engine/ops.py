"""A decoder LLM's forward step as a list of operators, each with its own roofline.

Every operator carries FLOPs and HBM bytes (weights read, activations in/out, KV cache read and
written) as lines in the context c: F(c) = f0 + f1·min(c, w), M(c) = m0 + m1·min(c, w), where w
is the attention window (infinite for global layers). Its time is the roofline of its own class,
max(F/(Π·η_op), M/(β·η_mem)) (Williams et al., CACM 2009), so the sum over the decode steps of a
request has a closed form: a max of two lines summed on each side of their crossover and of the
window. The formulas and conventions are in docs/model.md, "Serving model".

Everything is written for Python floats (a scalar `serve` in microseconds) or numpy arrays (a
vectorised sweep): pass `xp=SCALAR` or `xp=np`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

INF = float("inf")
OP_CLASSES = ("gemm", "attention", "expert", "other")


class _Scalar:
    """The few numpy functions the kernels use, for Python floats (20x faster than 0-d arrays)."""

    maximum = staticmethod(max)
    minimum = staticmethod(min)
    floor = staticmethod(math.floor)
    ceil = staticmethod(math.ceil)

    @staticmethod
    def where(cond, a, b):
        return a if cond else b


SCALAR = _Scalar()


class Op(NamedTuple):
    """One operator of one layer (or of the step) on one device; bytes and FLOPs SI floats."""

    name: str
    cls: str  # gemm | attention | expert | other: which efficiency applies
    layers: str  # all | dense | moe | global | local | once: which layers carry it
    count: object  # how many times per step (layers carrying it, or 1)
    f0: object  # FLOPs at context 0
    f1: object  # FLOPs per token of (windowed) context
    mw: object  # weight bytes read
    ma: object  # activation bytes read and written
    mk0: object  # KV-cache bytes written (the new tokens)
    mk1: object  # KV-cache bytes read per token of (windowed) context
    w: object  # attention window, tokens (INF: global)
    resident: object  # weight bytes held on the device for one instance


def shape_values(arch) -> dict[str, float]:
    """An Architecture's shapes as the floats the kernels use (docs/model.md, "Serving model")."""
    mla = arch.attention == "mla"
    moe_layers = arch.layers - arch.dense_layers if arch.experts else 0
    return {
        "L": arch.layers,
        "h": arch.hidden,
        "H": arch.heads,
        "K": arch.kv_heads,
        "dq": arch.head_dim + ((arch.rope_head_dim or 0) if mla else 0),  # query/key head width
        "dv": arch.v_head_dim or arch.head_dim,
        "f": arch.intermediate,
        "V": arch.vocab,
        "nmat": 3.0 if arch.mlp == "gated" else 2.0,
        "heads_w": 1.0 if arch.tied_embeddings else 2.0,  # embedding tables held (PP = 1)
        "mla": 1.0 if mla else 0.0,
        "rq": float(arch.q_lora_rank or 0) if mla else 0.0,
        "r": float(arch.kv_lora_rank or 0) if mla else 0.0,
        "dr": float(arch.rope_head_dim or 0) if mla else 0.0,
        "dn": arch.head_dim,  # MLA: the non-rope query/key width
        "E": arch.experts,
        "k": arch.experts_per_token,
        "fe": float(arch.expert_intermediate or 0),
        "nsh": arch.shared_experts,
        "n_moe": moe_layers,
        "n_dense": arch.layers - moe_layers,
        "w": float(arch.sliding_window) if arch.sliding_window else INF,
        "n_local": arch.sliding_layers if arch.sliding_window else 0,
        "norms": float(getattr(arch, "norms_per_layer", 1 if arch.parallel_attention else 2)),
        "nv": 2.0 if arch.norm == "layernorm" else 1.0,  # vectors per norm (scale, bias)
    }


def heads_per_device(s: dict, tp, xp):
    """(query heads, KV heads) per device under tensor parallelism; a KV head is replicated
    when there are fewer KV heads than devices."""
    return s["H"] / tp, xp.maximum(s["K"] / tp, 1.0)


def kv_bytes_per_token_layer(s: dict, tp, b_kv, xp):
    """KV-cache bytes per token per layer: (whole model, one device). MLA caches one latent of
    r + d_r per token, replicated on every tensor-parallel device."""
    _, k_dev = heads_per_device(s, tp, xp)
    full = xp.where(s["mla"] > 0, s["r"] + s["dr"], s["K"] * (s["dq"] + s["dv"])) * b_kv
    dev = xp.where(s["mla"] > 0, s["r"] + s["dr"], k_dev * (s["dq"] + s["dv"])) * b_kv
    return full, dev


def mean_keys(S, w, xp):
    """Mean keys a causal prompt of S tokens attends to per token: (S+1)/2, window-capped."""
    wc = xp.minimum(w, S)  # S <= w: (S(S+1)/2 + 0)/S = (S+1)/2
    return (wc * (wc + 1.0) / 2.0 + (S - wc) * wc) / S


def _static(name, cls, layers, count, flops, mw, ma, resident=None) -> Op:
    """An operator whose cost does not depend on the context (resident: mw unless given)."""
    held = mw if resident is None else resident
    return Op(name, cls, layers, count, flops, 0.0, mw, ma, 0.0, 0.0, INF, held)


def _projections(s, T, tp, bw, ba, xp) -> list[Op]:
    """Norms, the QKV (or MLA) projections and the output projection of one layer.

    MLA: the projection carries W_qa, W_qb, W_kva and W_kvb (the absorbed decode applies W_kvb
    to the new tokens' queries and outputs instead of to the cache: the same FLOPs).
    """
    h, hd, kd = s["h"], *heads_per_device(s, tp, xp)
    norm_w = h * s["nv"] * bw
    norm = _static("norm", "other", "all", s["norms"] * s["L"], 4.0 * T * h, norm_w, 2 * T * h * ba)
    q_mla = xp.where(s["rq"] > 0, h * s["rq"] + s["rq"] * hd * s["dq"], h * hd * s["dq"])
    mla_elems = q_mla + h * (s["r"] + s["dr"]) + s["r"] * hd * (s["dn"] + s["dv"])
    gqa_elems = h * (hd * s["dq"] + kd * (s["dq"] + s["dv"]))
    elems = xp.where(s["mla"] > 0, mla_elems, gqa_elems)
    out_w = xp.where(s["mla"] > 0, hd * s["dq"] + s["r"] + s["dr"], (hd + 2 * kd) * s["dq"])
    qkv_act = T * (h + out_w) * ba
    qkv = _static("qkv_projection", "gemm", "all", s["L"], 2 * T * elems, elems * bw, qkv_act)
    o_elems = hd * s["dv"] * h
    o_act = T * (hd * s["dv"] + h) * ba
    o_proj = _static(
        "output_projection", "gemm", "all", s["L"], 2 * T * o_elems, o_elems * bw, o_act
    )
    return [norm, qkv, o_proj]


def _attention(s, T, B, tp, b_kv, ba, xp, *, prefill_tokens=None) -> list[Op]:
    """Scores and context, FlashAttention-style (the score matrix never reaches HBM).

    Decode: F and the KV read are lines in the context. MLA decode uses the absorbed form
    (scores and context in the latent space, 2·(2r + d_r) FLOPs per head per key); MLA prefill
    the decompressed form (2·(d_q + d_v) per head per key, K and V read decompressed).
    Prefill (`prefill_tokens` S): constants, each query attending mean_keys(S, w) keys.
    """
    hd, _ = heads_per_device(s, tp, xp)
    _, kv_dev = kv_bytes_per_token_layer(s, tp, b_kv, xp)
    per_key = 2.0 * hd * (s["dq"] + s["dv"])
    qo = T * hd * (s["dq"] + s["dv"]) * ba  # Q in, O out
    spans = (
        ("attention", "global", s["L"] - s["n_local"], INF),
        ("attention_local", "local", s["n_local"], s["w"]),
    )
    if prefill_tokens is None:
        per_key = xp.where(s["mla"] > 0, 2.0 * hd * (2.0 * s["r"] + s["dr"]), per_key)
        return [
            Op(n, "attention", g, c, 0.0, B * per_key, 0.0, qo, T * kv_dev, B * kv_dev, w, 0.0)
            for n, g, c, w in spans
        ]
    S = prefill_tokens
    read = xp.where(s["mla"] > 0, hd * (s["dq"] + s["dv"]) * ba, kv_dev)  # per key, once
    kv = T * kv_dev + B * S * read  # the new K/V written, then each key read once
    return [
        Op(n, "attention", g, c, T * per_key * mean_keys(S, w, xp), 0.0, 0.0, qo, kv, 0.0, INF, 0.0)
        for n, g, c, w in spans
    ]


def _ffn(s, T, tp, bw, ba, xp) -> list[Op]:
    """The dense FFN, or the router, routed experts (each touched expert read once) and shared
    experts of a mixture-of-experts layer. Experts are split TP ways by width."""
    h, nm, E = s["h"], s["nmat"], s["E"]
    dense = nm * h * s["f"] / tp
    dense_act = T * (2.0 * h + 2.0 * (nm - 1.0) * s["f"] / tp) * ba
    mlp = _static("mlp", "gemm", "dense", s["n_dense"], 2 * T * dense, dense * bw, dense_act)
    router_act = T * (h + E) * ba
    router = _static("router", "gemm", "moe", s["n_moe"], 2 * T * h * E, h * E * bw, router_act)
    one = nm * h * s["fe"] / tp  # one expert's weights on one device
    act = T * (2.0 * h + 2.0 * (nm - 1.0) * s["fe"] / tp) * ba
    read = experts_touched(s, T) * one * bw
    routed = _static(
        "routed_experts", "expert", "moe", s["n_moe"], 2 * T * s["k"] * one, read,
        s["k"] * act, E * one * bw,
    )  # fmt: skip
    nsh = s["nsh"]
    shared = _static(
        "shared_experts", "expert", "moe", s["n_moe"] * xp.minimum(nsh, 1.0),
        2 * T * nsh * one, nsh * one * bw, nsh * act,
    )  # fmt: skip
    return [mlp, router, routed, shared]


def experts_touched(s: dict, T):
    """Expected distinct routed experts per layer for T tokens: E·(1 − (1 − k/E)^T)."""
    E = s["E"]
    safe = E + (E == 0)  # a dense model: 0 experts, no division by zero
    return E * (1.0 - (1.0 - s["k"] / safe) ** T)


def _once(s, T, B, tp, bw, ba) -> list[Op]:
    """Once per step: the embedding lookup, the final norm and the LM head (last token only)."""
    h, V = s["h"], s["V"]
    table = V * h / tp * bw  # vocabulary-parallel: each device holds V/TP rows
    emb = _static("embedding", "other", "once", 1.0, 0.0, T * h / tp * bw, T * h * ba, table)
    norm_w = h * s["nv"] * bw
    final = _static("final_norm", "other", "once", 1.0, 4.0 * T * h, norm_w, 2 * T * h * ba)
    head_act = B * (h + V / tp) * ba
    head_held = (s["heads_w"] - 1.0) * table  # tied: the embedding table, already counted
    head = _static("lm_head", "gemm", "once", 1.0, 2 * B * V * h / tp, table, head_act, head_held)
    return [emb, final, head]


def step_ops(s, *, T, B, tp, bw, b_kv, ba, xp, prefill_tokens=None) -> list[Op]:
    """The operator list of one forward step on one device (docs/model.md, "Serving model").

    Args:
        s: shape_values() (floats, or arrays of one value per scenario).
        T: new tokens in the step (decode: B; prefill: B·S).
        B: sequences.
        tp: tensor-parallel degree.
        bw, b_kv, ba: bytes per weight, per KV element, per activation element.
        xp: SCALAR or numpy.
        prefill_tokens: S for a prefill (its attention as constants); None for a decode step.
    """
    return (
        _projections(s, T, tp, bw, ba, xp)
        + _attention(s, T, B, tp, b_kv, ba, xp, prefill_tokens=prefill_tokens)
        + _ffn(s, T, tp, bw, ba, xp)
        + _once(s, T, B, tp, bw, ba)
    )


def op_lines(op: Op, peak, bandwidth):
    """(compute intercept, compute slope, memory intercept, memory slope), seconds per step and
    per token of context, given the op's effective peak FLOP/s and bandwidth (bytes/s)."""
    return op.f0 / peak, op.f1 / peak, (op.mw + op.ma + op.mk0) / bandwidth, op.mk1 / bandwidth


def _pos_line_sum(d0, d1, p, q, xp):
    """Σ max(0, d0 + d1·c) over the whole numbers c in [p, q] (empty when q < p)."""
    root = -d0 / xp.where(d1 == 0, 1.0, d1)
    root = xp.minimum(xp.maximum(root, p - 1.0), q + 1.0)
    lo = xp.where(d1 > 0, xp.maximum(p, xp.floor(root) + 1.0), p)
    hi = xp.where(d1 < 0, xp.minimum(q, xp.ceil(root) - 1.0), q)
    hi = xp.where((d1 == 0) & (d0 <= 0), lo - 1.0, hi)
    n = xp.maximum(hi - lo + 1.0, 0.0)
    return n * d0 + d1 * (lo + hi) * n / 2.0


def context_basis(a, b, w, xp):
    """(how many c in [a, b], Σ min(c, w) over them): Σ v0 + v1·min(c, w) = v0·n + v1·x."""
    hi = xp.minimum(b, w)
    n = xp.maximum(hi - a + 1.0, 0.0)
    flat = xp.maximum(b - xp.maximum(a, w + 1.0) + 1.0, 0.0)
    return n + flat, (a + hi) * n / 2.0 + flat * xp.minimum(w, b)


def line_sum(v0, v1, a, b, w, xp):
    """Σ v0 + v1·min(c, w) over the whole numbers c in [a, b]: arithmetic series up to w, then
    constant."""
    hi = xp.minimum(b, w)
    n = xp.maximum(hi - a + 1.0, 0.0)
    flat = xp.maximum(b - xp.maximum(a, w + 1.0) + 1.0, 0.0)
    return n * v0 + v1 * (a + hi) * n / 2.0 + flat * (v0 + v1 * xp.minimum(w, b))


def max_line_sum(g0, g1, m0, m1, a, b, w, xp):
    """Σ max(g0 + g1·x, m0 + m1·x), x = min(c, w), over the whole numbers c in [a, b]."""
    hi = xp.minimum(b, w)
    linear = line_sum(m0, m1, a, hi, INF, xp) + _pos_line_sum(g0 - m0, g1 - m1, a, hi, xp)
    flat = xp.maximum(b - xp.maximum(a, w + 1.0) + 1.0, 0.0)
    x = xp.minimum(w, b)
    return linear + flat * xp.maximum(g0 + g1 * x, m0 + m1 * x)
