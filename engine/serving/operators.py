"""A decoder LLM's forward step as a list of operators, each with its own roofline.

Every operator carries FLOPs and HBM bytes (weights read, activations in/out, KV cache read and
written) as lines in the context c: F(c) = F0 + F1·min(c, w), M(c) = M0 + M1·min(c, w), where w
is the attention window (infinite for global layers). Its time is the roofline of its own class,
max(F/(Π·η_op), M/(β·η_mem)) (Williams et al., CACM 2009), so the sum over the decode steps of a
request has a closed form (engine/serving/closed_form.py). Each operator is first built per unit
of the step's size (a Template: per new token, per sequence, per key), once per model, TP degree
and precision; a step of T tokens from B sequences is then a few multiplications
(`instantiate`). The formulas and conventions are in docs/model.md, "Serving model".

Everything is written for Python floats (a scalar `serve` in microseconds) or numpy arrays (a
vectorised sweep): pass `xp=SCALAR` or `xp=np` (engine/arrays.py).
"""

from __future__ import annotations

from typing import NamedTuple

from engine.arrays import INF, SCALAR
from engine.catalog.shapes import Shapes, heads_per_device, kv_bytes_per_token_layer

OP_CLASSES = ("gemm", "attention", "expert", "other")
PHASES = ("prefill", "decode")


class Layout(NamedTuple):
    """How a deployment splits and stores the model (floats, or arrays over scenarios)."""

    tp: object  # tensor-parallel degree
    pp: object  # pipeline stages
    weight_bytes: object  # bytes per weight element (the precision's)
    kv_bytes: object  # bytes per KV-cache element
    act_bytes: object  # bytes per activation element (16-bit at least)


class Op(NamedTuple):
    """One operator of one layer (or of the step) on one device for a given step: FLOPs and
    bytes as lines in the context c (decode) or constants (prefill, window INF)."""

    name: str
    cls: str  # gemm | attention | expert | other: which efficiency applies
    layers: str  # all | dense | moe | global | local | once: which layers carry it
    count: object  # how many times per step (layers carrying it, or 1)
    flop: object  # FLOPs at context 0
    flop_per_context: object  # FLOPs per token of (windowed) context
    weight_bytes: object  # weight bytes read
    act_bytes: object  # activation bytes read and written
    kv_write_bytes: object  # KV-cache bytes written (the new tokens)
    kv_bytes_per_context: object  # KV-cache bytes read per token of (windowed) context
    window: object  # attention window, tokens (INF: global)
    resident_bytes: object  # weight bytes held on the device for one instance


class Template(NamedTuple):
    """One operator on one device per unit of a step's size: its cost in a step of T new tokens
    from B sequences is linear in T and B, except the routed experts read (× the experts the T
    tokens touch) and prefill attention (× the mean keys a prompt token attends to).
    `instantiate` turns it into an Op; the serving kernel reads it directly."""

    name: str
    cls: str
    layers: str
    count: object
    window: object  # attention window, tokens (INF: global)
    resident_bytes: object  # weight bytes held on the device for one instance
    weight_bytes: object  # weight bytes read, whatever the step's size
    weight_bytes_per_expert: object  # per routed expert touched
    weight_bytes_per_token: object  # per new token (embedding rows)
    flop_per_token: object  # per new token
    flop_per_seq: object  # per sequence (the LM head sees each sequence's last token)
    flop_per_key: object  # attention, per token per key (decode: per sequence per context token)
    act_bytes_per_token: object
    act_bytes_per_seq: object
    kv_bytes_per_token: object  # decode: written; prefill: written and read once
    kv_bytes_per_key: object  # decode: read per sequence per context token


def mean_keys(S, w, xp):
    """Mean keys a causal prompt of S tokens attends to per token: (S+1)/2, window-capped."""
    wc = xp.minimum(w, S)  # S <= w: (S(S+1)/2 + 0)/S = (S+1)/2
    return (wc * (wc + 1.0) / 2.0 + (S - wc) * wc) / S


def _static(name, cls, layers, count, flop, weight, act, *, per_expert=0.0, per_token=0.0,
            flop_seq=0.0, act_seq=0.0, resident=None) -> Template:  # fmt: skip
    """An operator whose cost does not depend on the context (resident: `weight` unless given)."""
    held = weight if resident is None else resident
    return Template(name, cls, layers, count, INF, held, weight, per_expert, per_token, flop,
                    flop_seq, 0.0, act, act_seq, 0.0, 0.0)  # fmt: skip


def _projections(s: Shapes, lay: Layout, xp) -> list[Template]:
    """Norms, the QKV (or MLA) projections and the output projection of one layer.

    MLA: the projection carries W_qa, W_qb, W_kva and W_kvb (the absorbed decode applies W_kvb
    to the new tokens' queries and outputs instead of to the cache: the same FLOPs).
    """
    h, (hd, kd) = s.hidden, heads_per_device(s, lay.tp, xp)
    bw, ba = lay.weight_bytes, lay.act_bytes
    norms = s.norms_per_layer * s.layers
    norm = _static("norm", "other", "all", norms, 4.0 * h, h * s.norm_vectors * bw, 2 * h * ba)
    q_mla = xp.where(s.q_rank > 0, h * s.q_rank + s.q_rank * hd * s.qk_dim, h * hd * s.qk_dim)
    mla_elems = q_mla + h * (s.kv_rank + s.rope_dim) + s.kv_rank * hd * (s.nope_dim + s.v_dim)
    gqa_elems = h * (hd * s.qk_dim + kd * (s.qk_dim + s.v_dim))
    elems = xp.where(s.mla, mla_elems, gqa_elems)
    out_w = xp.where(s.mla, hd * s.qk_dim + s.kv_rank + s.rope_dim, (hd + 2 * kd) * s.qk_dim)
    act = (h + out_w) * ba
    qkv = _static("qkv_projection", "gemm", "all", s.layers, 2 * elems, elems * bw, act)
    o_elems = hd * s.v_dim * h
    o_act = (hd * s.v_dim + h) * ba
    o_proj = _static("output_projection", "gemm", "all", s.layers, 2 * o_elems, o_elems * bw, o_act)
    return [norm, qkv, o_proj]


def _attention(s: Shapes, lay: Layout, xp, phase: str) -> list[Template]:
    """Scores and context, FlashAttention-style (the score matrix never reaches HBM).

    Decode: F and the KV read are lines in the context. MLA decode uses the absorbed form
    (scores and context in the latent space, 2·(2r + d_r) FLOPs per head per key); MLA prefill
    the decompressed form (2·(d_q + d_v) per head per key, K and V read decompressed).
    Prefill: constants, each of a prompt's S tokens attending mean_keys(S, w) keys, the new K/V
    written and each key read once.
    """
    hd, _ = heads_per_device(s, lay.tp, xp)
    _, kv_dev = kv_bytes_per_token_layer(s, lay.kv_bytes, lay.tp, xp)
    per_key = 2.0 * hd * (s.qk_dim + s.v_dim)
    qo = hd * (s.qk_dim + s.v_dim) * lay.act_bytes  # Q in, O out, per token
    if phase == "decode":
        fk = xp.where(s.mla, 2.0 * hd * (2.0 * s.kv_rank + s.rope_dim), per_key)
        kt, mk = kv_dev, kv_dev
    else:
        fk, mk = per_key, 0.0
        kt = kv_dev + xp.where(s.mla, hd * (s.qk_dim + s.v_dim) * lay.act_bytes, kv_dev)
    spans = (
        ("attention", "global", s.layers - s.local_layers, INF),
        ("attention_local", "local", s.local_layers, s.window),
    )
    return [
        Template(n, "attention", g, c, w, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, fk, qo, 0.0, kt, mk)
        for n, g, c, w in spans
    ]


def _ffn(s: Shapes, lay: Layout, xp) -> list[Template]:
    """The dense FFN, or the router, routed experts (each touched expert read once) and shared
    experts of a mixture-of-experts layer. Experts are split TP ways by width."""
    h, nm, E, tp = s.hidden, s.ffn_matrices, s.experts, lay.tp
    bw, ba = lay.weight_bytes, lay.act_bytes
    dense = nm * h * s.ffn / tp
    dense_act = (2.0 * h + 2.0 * (nm - 1.0) * s.ffn / tp) * ba
    mlp = _static("mlp", "gemm", "dense", s.dense_layers, 2 * dense, dense * bw, dense_act)
    router = _static("router", "gemm", "moe", s.moe_layers, 2 * h * E, h * E * bw, (h + E) * ba)
    one = nm * h * s.expert_ffn / tp  # one expert's weights on one device
    act = (2.0 * h + 2.0 * (nm - 1.0) * s.expert_ffn / tp) * ba
    k = s.experts_per_token
    routed = _static("routed_experts", "expert", "moe", s.moe_layers, 2 * k * one, 0.0, k * act,
                     per_expert=one * bw, resident=E * one * bw)  # fmt: skip
    nsh = s.shared_experts
    carriers = s.moe_layers * xp.minimum(nsh, 1.0)
    shared = _static("shared_experts", "expert", "moe", carriers, 2 * nsh * one, nsh * one * bw,
                     nsh * act)  # fmt: skip
    return [mlp, router, routed, shared]


def kv_read_factor(s: Shapes, tp, reuse, xp):
    """How many times a decode step reads each cached KV head per key, relative to once.

    With grouped-query attention each KV head serves H/K query heads; a kernel that loads it
    once per group realises the whole saving (factor 1), one that loads it per query head
    none (factor H/K, as multi-head attention). `reuse` in [0, 1] is the share realised:
    1 + (1 − reuse)·(H/K − 1) per device. MLA's latent is read once per head group by the
    absorbed kernels, and MHA has nothing to share: factor 1.
    """
    hd, kd = heads_per_device(s, tp, xp)
    return xp.where(s.mla, 1.0, 1.0 + (1.0 - reuse) * (hd / kd - 1.0))


def experts_touched(s: Shapes, T):
    """Expected distinct routed experts per layer for T tokens: E·(1 − (1 − k/E)^T)."""
    E = s.experts
    safe = E + (E == 0)  # a dense model: 0 experts, no division by zero
    return E * (1.0 - (1.0 - s.experts_per_token / safe) ** T)


def _once(s: Shapes, lay: Layout) -> list[Template]:
    """Once per step: the embedding lookup, the final norm and the LM head (last token only)."""
    h, V, tp, bw, ba = s.hidden, s.vocab, lay.tp, lay.weight_bytes, lay.act_bytes
    table = V * h / tp * bw  # vocabulary-parallel: each device holds V/TP rows
    emb = _static("embedding", "other", "once", 1.0, 0.0, 0.0, h * ba, per_token=h / tp * bw,
                  resident=table)  # fmt: skip
    final = _static("final_norm", "other", "once", 1.0, 4.0 * h, h * s.norm_vectors * bw,
                    2 * h * ba)  # fmt: skip
    head_held = (s.tables - 1.0) * table  # tied: the embedding table, already counted
    head = _static("lm_head", "gemm", "once", 1.0, 0.0, table, 0.0, flop_seq=2 * V * h / tp,
                   act_seq=(h + V / tp) * ba, resident=head_held)  # fmt: skip
    return [emb, final, head]


def templates(s: Shapes, lay: Layout, xp, phase: str) -> list[Template]:
    """The operators of one forward step on one device per unit of its size (docs/model.md,
    "Serving model"): `phase` "decode" or "prefill" (their attention differs)."""
    return (
        _projections(s, lay, xp) + _attention(s, lay, xp, phase) + _ffn(s, lay, xp) + _once(s, lay)
    )


def instantiate(op: Template, s: Shapes, *, T, B, S=None, xp) -> Op:
    """The Op of a step of T new tokens from B sequences: a decode step (S None) or the
    prefill of B prompts of S tokens (T = B·S)."""
    flop = op.flop_per_token * T + op.flop_per_seq * B
    if S is not None and op.cls == "attention":
        flop = flop + op.flop_per_key * T * mean_keys(S, op.window, xp)
    weight = (
        op.weight_bytes
        + op.weight_bytes_per_expert * experts_touched(s, T)
        + op.weight_bytes_per_token * T
    )
    act = op.act_bytes_per_token * T + op.act_bytes_per_seq * B
    if S is None:
        f1, k1, w = op.flop_per_key * B, op.kv_bytes_per_key * B, op.window
    else:
        f1, k1, w = 0.0, 0.0, INF
    kv_write = op.kv_bytes_per_token * T
    return Op(op.name, op.cls, op.layers, op.count, flop, f1, weight, act, kv_write, k1, w,
              op.resident_bytes)  # fmt: skip


def step_ops(s: Shapes, lay: Layout, *, T, B, xp, prefill_tokens=None) -> list[Op]:
    """The operator list of one forward step on one device (docs/model.md, "Serving model").

    Args:
        s, lay: the model's shapes and the deployment's layout (floats or arrays).
        T: new tokens in the step (decode: B; prefill: B·S).
        B: sequences.
        xp: SCALAR or numpy.
        prefill_tokens: S for a prefill (its attention as constants); None for a decode step.
    """
    phase = "decode" if prefill_tokens is None else "prefill"
    return [
        instantiate(op, s, T=T, B=B, S=prefill_tokens, xp=xp) for op in templates(s, lay, xp, phase)
    ]


def step_lists(s: Shapes, lay: Layout, xp, phases=PHASES) -> tuple[list[Template], ...]:
    """The operator templates of the prefill and of a decode step, without those no layer
    carries. They depend on the shapes, TP and element sizes only, not on the batch or the
    tokens, so a caller may build them once for many requests."""
    out = []
    for phase in phases:
        step = templates(s, lay, xp, phase)
        out.append([op for op in step if (op.count if xp is SCALAR else xp.any(op.count))])
    return tuple(out)
