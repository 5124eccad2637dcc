"""A decoder LLM's forward step as a list of operators, each with its own roofline.

Every operator carries FLOPs and HBM bytes (weights read, activations in/out, KV cache read and
written) as lines in the context c: F(c) = f0 + f1·min(c, w), M(c) = m0 + m1·min(c, w), where w
is the attention window (infinite for global layers). Its time is the roofline of its own class,
max(F/(Π·η_op), M/(β·η_mem)) (Williams et al., CACM 2009), so the sum over the decode steps of a
request has a closed form (engine/closed_form.py). Each operator is first built per unit of the
step's size (a Template: per new token, per sequence, per key), once per model, TP degree and
precision; a step of T tokens from B sequences is then a few multiplications (`instantiate`).
The formulas and conventions are in docs/model.md, "Serving model".

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
    """One operator of one layer (or of the step) on one device for a given step; bytes and
    FLOPs SI floats, lines in the context c (decode) or constants (prefill, w = INF)."""

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


class Template(NamedTuple):
    """One operator on one device per unit of a step's size: its cost in a step of T new tokens
    from B sequences is linear in T and B, except the routed experts read (× the experts the T
    tokens touch) and prefill attention (× the mean keys a prompt token attends to).
    `instantiate` turns it into an Op; the serving kernel reads it directly."""

    name: str
    cls: str
    layers: str
    count: object
    w: object  # attention window, tokens (INF: global)
    resident: object  # weight bytes held on the device for one instance
    mw: object  # weight bytes read, whatever the step's size
    wx: object  # weight bytes read per routed expert touched
    wt: object  # weight bytes read per new token (embedding rows)
    ft: object  # FLOPs per new token
    fb: object  # FLOPs per sequence (the LM head sees each sequence's last token)
    fk: object  # attention FLOPs per token per key (decode: per sequence per context token)
    mt: object  # activation bytes per new token
    mb: object  # activation bytes per sequence
    kt: object  # KV-cache bytes per new token (decode: written; prefill: written and read once)
    mk: object  # decode: KV-cache bytes read per sequence per context token


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


def _static(name, cls, layers, count, ft, mw, mt, *, wx=0.0, wt=0.0, fb=0.0, mb=0.0,
            resident=None) -> Template:  # fmt: skip
    """An operator whose cost does not depend on the context (resident: mw unless given)."""
    held = mw if resident is None else resident
    return Template(name, cls, layers, count, INF, held, mw, wx, wt, ft, fb, 0.0, mt, mb, 0.0, 0.0)


def _projections(s, tp, bw, ba, xp) -> list[Template]:
    """Norms, the QKV (or MLA) projections and the output projection of one layer.

    MLA: the projection carries W_qa, W_qb, W_kva and W_kvb (the absorbed decode applies W_kvb
    to the new tokens' queries and outputs instead of to the cache: the same FLOPs).
    """
    h, hd, kd = s["h"], *heads_per_device(s, tp, xp)
    norm = _static(
        "norm", "other", "all", s["norms"] * s["L"], 4.0 * h, h * s["nv"] * bw, 2 * h * ba
    )
    q_mla = xp.where(s["rq"] > 0, h * s["rq"] + s["rq"] * hd * s["dq"], h * hd * s["dq"])
    mla_elems = q_mla + h * (s["r"] + s["dr"]) + s["r"] * hd * (s["dn"] + s["dv"])
    gqa_elems = h * (hd * s["dq"] + kd * (s["dq"] + s["dv"]))
    elems = xp.where(s["mla"] > 0, mla_elems, gqa_elems)
    out_w = xp.where(s["mla"] > 0, hd * s["dq"] + s["r"] + s["dr"], (hd + 2 * kd) * s["dq"])
    qkv = _static("qkv_projection", "gemm", "all", s["L"], 2 * elems, elems * bw, (h + out_w) * ba)
    o_elems = hd * s["dv"] * h
    o_act = (hd * s["dv"] + h) * ba
    o_proj = _static("output_projection", "gemm", "all", s["L"], 2 * o_elems, o_elems * bw, o_act)
    return [norm, qkv, o_proj]


def _attention(s, tp, b_kv, ba, xp, phase: str) -> list[Template]:
    """Scores and context, FlashAttention-style (the score matrix never reaches HBM).

    Decode: F and the KV read are lines in the context. MLA decode uses the absorbed form
    (scores and context in the latent space, 2·(2r + d_r) FLOPs per head per key); MLA prefill
    the decompressed form (2·(d_q + d_v) per head per key, K and V read decompressed).
    Prefill: constants, each of a prompt's S tokens attending mean_keys(S, w) keys, the new K/V
    written and each key read once.
    """
    hd, _ = heads_per_device(s, tp, xp)
    _, kv_dev = kv_bytes_per_token_layer(s, tp, b_kv, xp)
    per_key = 2.0 * hd * (s["dq"] + s["dv"])
    qo = hd * (s["dq"] + s["dv"]) * ba  # Q in, O out, per token
    if phase == "decode":
        fk = xp.where(s["mla"] > 0, 2.0 * hd * (2.0 * s["r"] + s["dr"]), per_key)
        kt, mk = kv_dev, kv_dev
    else:
        fk, mk = per_key, 0.0
        kt = kv_dev + xp.where(s["mla"] > 0, hd * (s["dq"] + s["dv"]) * ba, kv_dev)
    spans = (
        ("attention", "global", s["L"] - s["n_local"], INF),
        ("attention_local", "local", s["n_local"], s["w"]),
    )
    return [
        Template(n, "attention", g, c, w, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, fk, qo, 0.0, kt, mk)
        for n, g, c, w in spans
    ]


def _ffn(s, tp, bw, ba, xp) -> list[Template]:
    """The dense FFN, or the router, routed experts (each touched expert read once) and shared
    experts of a mixture-of-experts layer. Experts are split TP ways by width."""
    h, nm, E = s["h"], s["nmat"], s["E"]
    dense = nm * h * s["f"] / tp
    dense_act = (2.0 * h + 2.0 * (nm - 1.0) * s["f"] / tp) * ba
    mlp = _static("mlp", "gemm", "dense", s["n_dense"], 2 * dense, dense * bw, dense_act)
    router = _static("router", "gemm", "moe", s["n_moe"], 2 * h * E, h * E * bw, (h + E) * ba)
    one = nm * h * s["fe"] / tp  # one expert's weights on one device
    act = (2.0 * h + 2.0 * (nm - 1.0) * s["fe"] / tp) * ba
    routed = _static(
        "routed_experts", "expert", "moe", s["n_moe"], 2 * s["k"] * one, 0.0, s["k"] * act,
        wx=one * bw, resident=E * one * bw,
    )  # fmt: skip
    nsh = s["nsh"]
    shared = _static(
        "shared_experts", "expert", "moe", s["n_moe"] * xp.minimum(nsh, 1.0),
        2 * nsh * one, nsh * one * bw, nsh * act,
    )  # fmt: skip
    return [mlp, router, routed, shared]


def experts_touched(s: dict, T):
    """Expected distinct routed experts per layer for T tokens: E·(1 − (1 − k/E)^T)."""
    E = s["E"]
    safe = E + (E == 0)  # a dense model: 0 experts, no division by zero
    return E * (1.0 - (1.0 - s["k"] / safe) ** T)


def _once(s, tp, bw, ba) -> list[Template]:
    """Once per step: the embedding lookup, the final norm and the LM head (last token only)."""
    h, V = s["h"], s["V"]
    table = V * h / tp * bw  # vocabulary-parallel: each device holds V/TP rows
    emb = _static("embedding", "other", "once", 1.0, 0.0, 0.0, h * ba, wt=h / tp * bw,
                  resident=table)  # fmt: skip
    final = _static("final_norm", "other", "once", 1.0, 4.0 * h, h * s["nv"] * bw, 2 * h * ba)
    head_held = (s["heads_w"] - 1.0) * table  # tied: the embedding table, already counted
    head = _static("lm_head", "gemm", "once", 1.0, 0.0, table, 0.0, fb=2 * V * h / tp,
                   mb=(h + V / tp) * ba, resident=head_held)  # fmt: skip
    return [emb, final, head]


def templates(s, *, tp, bw, b_kv, ba, xp, phase: str) -> list[Template]:
    """The operators of one forward step on one device per unit of its size (docs/model.md,
    "Serving model"): `phase` "decode" or "prefill" (their attention differs).

    Args:
        s: shape_values() (floats, or arrays of one value per scenario).
        tp: tensor-parallel degree; bw, b_kv, ba: bytes per weight, KV and activation element.
        xp: SCALAR or numpy.
    """
    return (
        _projections(s, tp, bw, ba, xp)
        + _attention(s, tp, b_kv, ba, xp, phase)
        + _ffn(s, tp, bw, ba, xp)
        + _once(s, tp, bw, ba)
    )


def instantiate(op: Template, s, *, T, B, S=None, xp) -> Op:
    """The Op of a step of T new tokens from B sequences: a decode step (S None) or the
    prefill of B prompts of S tokens (T = B·S)."""
    f0 = op.ft * T + op.fb * B
    if S is not None and op.cls == "attention":
        f0 = f0 + op.fk * T * mean_keys(S, op.w, xp)
    mw = op.mw + op.wx * experts_touched(s, T) + op.wt * T
    ma = op.mt * T + op.mb * B
    if S is None:
        f1, mk1, w = op.fk * B, op.mk * B, op.w
    else:
        f1, mk1, w = 0.0, 0.0, INF
    return Op(op.name, op.cls, op.layers, op.count, f0, f1, mw, ma, op.kt * T, mk1, w, op.resident)


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
    phase = "decode" if prefill_tokens is None else "prefill"
    ts = templates(s, tp=tp, bw=bw, b_kv=b_kv, ba=ba, xp=xp, phase=phase)
    return [instantiate(op, s, T=T, B=B, S=prefill_tokens, xp=xp) for op in ts]


def step_lists(s, sc, xp, phases=("prefill", "decode")) -> tuple[list, ...]:
    """The operator templates (ops.Template) of the prefill and of a decode step, without those
    no layer carries. They depend on the shapes, TP and element sizes only, not on the batch or
    the tokens, so a caller may build them once for many requests."""
    sizes = {"tp": sc["tp"], "bw": sc["bw"], "b_kv": sc["b_kv"], "ba": sc["ba"], "xp": xp}
    out = []
    for phase in phases:
        step = templates(s, phase=phase, **sizes)
        out.append([op for op in step if (op.count if xp is SCALAR else xp.any(op.count))])
    return tuple(out)
