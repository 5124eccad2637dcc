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

import numpy as np

from engine.arrays import INF, SCALAR
from engine.catalog.shapes import Shapes, attended_kv_bytes, heads_per_device, index_key_bytes

OP_CLASSES = ("gemm", "attention", "expert", "other")
PHASES = ("prefill", "decode")


class Layout(NamedTuple):
    """How a deployment splits and stores the model (floats, or arrays over scenarios).

    The `tp` devices of a pipeline stage split the model; inside them `ep` ranks hold the
    routed experts (each expert split tp/ep ways), and with attention data parallelism (`dp` =
    tp) every other operator runs whole on each device, on its 1/dp share of the step's
    sequences (docs/model.md, "MoE layouts")."""

    tp: object  # tensor-parallel degree: the devices of a pipeline stage
    pp: object  # pipeline stages
    weight_bytes: object  # bytes per weight element (the precision's)
    kv_bytes: object  # bytes per KV-cache element
    act_bytes: object  # bytes per activation element (16-bit at least)
    ep: object = 1.0  # expert-parallel ranks among the tp devices
    dp: object = 1.0  # attention data-parallel ranks: tp with attention DP on, else 1
    imbalance: object = 1.0  # the busiest expert rank's routed tokens over the mean (ep > 1)
    expert_rows: object = 0.0  # grouped-GEMM rows wasted per routed expert touched


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
    wasted_flop: object = 0.0  # grouped-GEMM rows computed beyond the tokens (time, not work)
    rate: str = ""  # the key of its FLOP/s in the kernel's rates ("": its class)


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
    flop_per_expert: object = 0.0  # grouped-GEMM rows computed per routed expert touched
    rate: str = ""  # the key of its FLOP/s in the kernel's rates ("": its class)


def mean_keys(S, w, xp):
    """Mean keys a causal prompt of S tokens attends to per token: (S+1)/2, window-capped."""
    wc = xp.minimum(w, S)  # S <= w: (S(S+1)/2 + 0)/S = (S+1)/2
    return (wc * (wc + 1.0) / 2.0 + (S - wc) * wc) / S


def _static(
    name,
    cls,
    layers,
    count,
    flop,
    weight,
    act,
    *,
    per_expert=0.0,
    per_token=0.0,
    flop_seq=0.0,
    act_seq=0.0,
    resident=None,
    flop_expert=0.0,
) -> Template:
    """An operator whose cost does not depend on the context (resident: `weight` unless given)."""
    held = weight if resident is None else resident
    return Template(
        name=name,
        cls=cls,
        layers=layers,
        count=count,
        window=INF,
        resident_bytes=held,
        weight_bytes=weight,
        weight_bytes_per_expert=per_expert,
        weight_bytes_per_token=per_token,
        flop_per_token=flop,
        flop_per_seq=flop_seq,
        flop_per_key=0.0,
        act_bytes_per_token=act,
        act_bytes_per_seq=act_seq,
        kv_bytes_per_token=0.0,
        kv_bytes_per_key=0.0,
        flop_per_expert=flop_expert,
    )


def _projections(s: Shapes, lay: Layout, xp) -> list[Template]:
    """Norms, the QKV (or MLA) projections and the output projection of one layer.

    MLA: the projection carries W_qa, W_qb, W_kva and W_kvb (the absorbed decode applies W_kvb
    to the new tokens' queries and outputs instead of to the cache: the same FLOPs), and a
    sparse-attention indexer's three projections (replicated).
    """
    h, (hd, kd) = s.hidden, heads_per_device(s, lay.tp, xp)
    bw, ba = lay.weight_bytes, lay.act_bytes
    norms = s.norms_per_layer * s.layers
    norm = _static(
        name="norm",
        cls="other",
        layers="all",
        count=norms,
        flop=4.0 * h,
        weight=h * s.norm_vectors * bw,
        act=2 * h * ba,
    )
    q_mla = xp.where(s.q_rank > 0, h * s.q_rank + s.q_rank * hd * s.qk_dim, h * hd * s.qk_dim)
    mla_elems = q_mla + h * (s.kv_rank + s.rope_dim) + s.kv_rank * hd * (s.nope_dim + s.v_dim)
    gqa_elems = h * (hd * s.qk_dim + kd * (s.qk_dim + s.v_dim))
    # a sparse-attention indexer's projections, replicated on every device: its queries from
    # the query latent, its key and its per-head weights from the layer's input
    index = s.q_rank * s.index_heads * s.index_dim + h * (s.index_dim + s.index_heads)
    elems = xp.where(s.mla, mla_elems, gqa_elems) + index
    out_w = xp.where(s.mla, hd * s.qk_dim + s.kv_rank + s.rope_dim, (hd + 2 * kd) * s.qk_dim)
    act = (h + out_w) * ba
    qkv = _static(
        name="qkv_projection",
        cls="gemm",
        layers="all",
        count=s.layers,
        flop=2 * elems,
        weight=elems * bw,
        act=act,
    )
    o_elems = hd * s.v_dim * h
    o_act = (hd * s.v_dim + h) * ba
    o_proj = _static(
        name="output_projection",
        cls="gemm",
        layers="all",
        count=s.layers,
        flop=2 * o_elems,
        weight=o_elems * bw,
        act=o_act,
    )
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
    _, kv_dev = attended_kv_bytes(s=s, kv_bytes=lay.kv_bytes, tp=lay.tp, xp=xp)
    per_key = 2.0 * hd * (s.qk_dim + s.v_dim)
    qo = hd * (s.qk_dim + s.v_dim) * lay.act_bytes  # Q in, O out, per token
    if phase == "decode":
        fk = xp.where(s.mla, 2.0 * hd * (2.0 * s.kv_rank + s.rope_dim), per_key)
        kt, mk = kv_dev, kv_dev
    else:
        fk, mk = per_key, 0.0
        kt = kv_dev + xp.where(s.mla, hd * (s.qk_dim + s.v_dim) * lay.act_bytes, kv_dev)
    spans = (  # a sparse-attention layer attends its indexer's index_topk keys
        ("attention", "global", s.layers - s.local_layers, s.index_topk),
        ("attention_local", "local", s.local_layers, s.window),
    )
    return [_indexer(s=s, lay=lay, xp=xp, phase=phase)] + [
        _keyed(name=n, layers=g, count=c, window=w, per_key=fk, act=qo, kv=(kt, mk))
        for n, g, c, w in spans
    ]


def _keyed(name, layers, count, window, per_key, act, kv, rate="") -> Template:
    """An attention-class operator: no weights, `per_key` FLOPs per token per key within
    `window`, `act` activation bytes per token, `kv` its (per-token, per-key) KV-cache bytes."""
    return Template(
        name=name,
        cls="attention",
        layers=layers,
        count=count,
        window=window,
        resident_bytes=0.0,
        weight_bytes=0.0,
        weight_bytes_per_expert=0.0,
        weight_bytes_per_token=0.0,
        flop_per_token=0.0,
        flop_per_seq=0.0,
        flop_per_key=per_key,
        act_bytes_per_token=act,
        act_bytes_per_seq=0.0,
        kv_bytes_per_token=kv[0],
        kv_bytes_per_key=kv[1],
        rate=rate,
    )


def _indexer(s: Shapes, lay: Layout, xp, phase: str) -> Template:
    """DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2; none, count 0, without
    one): every query's index_heads heads score every cached key, 2·heads·width FLOPs per key,
    reading each key's `index_key_bytes` from its own cache and writing the new tokens' (decode:
    lines in the context; prefill: each prompt token scores the keys before it, each key read
    once). Replicated on every tensor-parallel device, as DeepSeek's reference runs it (its
    broadcast top-k); at the attention class's efficiency of the GEMMs' peak (its scores are
    fp8 GEMMs in DeepSeek's kernels: the fp8 peak in an fp8 deployment)."""
    key = index_key_bytes(s)
    return _keyed(
        name="indexer",
        layers="global",
        count=xp.where(s.index_heads > 0, s.layers - s.local_layers, 0.0),
        window=INF,
        per_key=2.0 * s.index_heads * s.index_dim,
        act=s.index_heads * s.index_dim * lay.act_bytes,  # its queries
        kv=(key, key) if phase == "decode" else (2.0 * key, 0.0),
        rate="index",
    )


def _ffn(s: Shapes, lay: Layout, xp) -> list[Template]:
    """The dense FFN, or the router and shared experts of a mixture-of-experts layer (the
    routed experts are `_routed`). Split TP ways by width."""
    h, nm, E, tp = s.hidden, s.ffn_matrices, s.experts, lay.tp
    bw, ba = lay.weight_bytes, lay.act_bytes
    dense = nm * h * s.ffn / tp
    dense_act = (2.0 * h + 2.0 * (nm - 1.0) * s.ffn / tp) * ba
    mlp = _static(
        name="mlp",
        cls="gemm",
        layers="dense",
        count=s.dense_layers,
        flop=2 * dense,
        weight=dense * bw,
        act=dense_act,
    )
    router = _static(
        name="router",
        cls="gemm",
        layers="moe",
        count=s.moe_layers,
        flop=2 * h * E,
        weight=h * E * bw,
        act=(h + E) * ba,
    )
    one = nm * h * s.expert_ffn / tp  # one expert's weights on one device
    act = (2.0 * h + 2.0 * (nm - 1.0) * s.expert_ffn / tp) * ba
    nsh = s.shared_experts
    carriers = s.moe_layers * xp.minimum(nsh, 1.0)
    shared = _static(
        name="shared_experts",
        cls="expert",
        layers="moe",
        count=carriers,
        flop=2 * nsh * one,
        weight=nsh * one * bw,
        act=nsh * act,
    )
    return [mlp, router, shared]


def _routed(s: Shapes, lay: Layout) -> Template:
    """The routed experts of a mixture-of-experts layer on the busiest of `ep` expert ranks.

    The rank holds E/ep experts, each split tp/ep ways by width. Of a step's T tokens it
    computes its share of the T·k routed pairs, k/ep per token times the imbalance (the
    busiest rank's load over the mean); it reads each of its experts the tokens touch once
    (`rank_experts`), and a grouped GEMM wastes `expert_rows` rows of each (n tokens per expert
    run at n/(n + rows) of the expert efficiency). ep = 1 is tensor parallelism: every device
    holds every expert's 1/tp and sees all T·k pairs."""
    h, nm, E, k = s.hidden, s.ffn_matrices, s.experts, s.experts_per_token
    bw, ba, ep = lay.weight_bytes, lay.act_bytes, lay.ep
    width = s.expert_ffn / (lay.tp / ep)  # an expert's width on one of its tp/ep devices
    one = nm * h * width  # that slice's weights
    pairs = k * lay.imbalance / ep  # routed (token, expert) pairs on the rank per token
    return _static(
        name="routed_experts",
        cls="expert",
        layers="moe",
        count=s.moe_layers,
        flop=2 * pairs * one,
        weight=0.0,
        act=pairs * (2.0 * h + 2.0 * (nm - 1.0) * width) * ba,
        per_expert=one * bw,
        resident=E / ep * one * bw,
        flop_expert=2 * lay.expert_rows * one,
    )


class ExpertSplit(NamedTuple):
    """How the routed experts are spread (floats, or arrays): over `ep` ranks, the busiest
    carrying `imbalance` times the mean."""

    ep: object = 1.0
    imbalance: object = 1.0


def rank_experts(s: Shapes, split: ExpertSplit, T, xp):
    """Routed experts the busiest expert rank reads per MoE layer for T tokens: its share of
    the experts the tokens touch, u/ep, times the imbalance, at most the E/ep it holds
    (min(imbalance·u, E)/ep; ep = 1: u)."""
    return xp.minimum(split.imbalance * experts_touched(s, T), s.experts) / split.ep


def ranks_reached(s: Shapes, ep):
    """Expert ranks a token's k experts fall on when spread evenly over `ep` ranks:
    ep·(1 − (1 − 1/ep)^k) (a de-duplicating dispatcher, DeepEP, sends it once to each)."""
    return ep * (1.0 - (1.0 - 1.0 / ep) ** s.experts_per_token)


def dispatch_copies(s: Shapes, lay: Layout):
    """The expert ranks a token's hidden vector is sent to under attention DP, counting each
    expert's tp/ep width slices: `ranks_reached` times tp/ep."""
    return ranks_reached(s, lay.ep) * lay.tp / lay.ep


def nodes_reached(s: Shapes, nodes, xp):
    """Expected distinct nodes holding a token's k routed experts when the expert ranks fill
    `nodes` nodes evenly. Its experts come from g of the G groups (group-limited routing), which
    cover c nodes: with G ≥ n each node holds G/n groups and misses all g chosen ones with
    probability Π_{i<g} (G − G/n − i)/(G − i), so c = n·(1 − that); with G < n the g groups
    span g·n/G nodes. The k experts fall evenly on those: c·(1 − (1 − 1/c)^k). Without a limit
    (g = G, or G = 1) c = n: n·(1 − (1 − 1/n)^k). DeepSeek-V3 (G 8, g 4, k 8) over 8 nodes:
    c = 8·(1 − 35/70) = 4, reached 4·(1 − 0.75^8) = 3.60; without the limit
    8·(1 − 0.875^8) = 5.25."""
    G, g = s.expert_groups, s.groups_per_token
    per_node = G / nodes
    miss = 1.0
    for i in range(int(np.max(g))):  # g is a handful of groups: a loop over i, not rows
        term = xp.maximum(G - per_node - i, 0.0) / xp.maximum(G - i, 1.0)
        miss = miss * xp.where(i < g, term, 1.0)
    covered = xp.where(nodes <= G, nodes * (1.0 - miss), xp.minimum(nodes, g * nodes / G))
    return covered * (1.0 - (1.0 - 1.0 / covered) ** s.experts_per_token)


def far_nodes(s: Shapes, nodes, xp):
    """Other nodes a token crosses the network to when a dispatcher sends it once per node
    holding any of its experts: `nodes_reached` times (n − 1)/n (its own node among them by
    symmetry); 0 inside one node."""
    return nodes_reached(s, nodes, xp) * (nodes - 1.0) / nodes


def experts_touched(s: Shapes, T):
    """Expected distinct routed experts per layer for T tokens: E·(1 − (1 − k/E)^T)."""
    E = s.experts
    safe = E + (E == 0)  # a dense model: 0 experts, no division by zero
    return E * (1.0 - (1.0 - s.experts_per_token / safe) ** T)


def _once(s: Shapes, lay: Layout, xp) -> list[Template]:
    """Once per step: the embedding lookup, the final norm and the LM head (last token only).
    The vocabulary tables stay at the activations' width (16-bit at least) when the layers'
    weights are quantized: quantizers leave the LM head out (TensorRT Model Optimizer's
    `_default_disabled_quantizer_cfg` for every format, FP8 to NVFP4 and INT4 AWQ), and the
    embedding is a lookup of 16-bit rows."""
    h, V, tp, bw, ba = s.hidden, s.vocab, lay.tp, lay.weight_bytes, lay.act_bytes
    bw = xp.maximum(bw, ba)  # the tables' bytes per element
    table = V * h / tp * bw  # vocabulary-parallel: each device holds V/TP rows
    emb = _static(
        name="embedding",
        cls="other",
        layers="once",
        count=1.0,
        flop=0.0,
        weight=0.0,
        act=h * ba,
        per_token=h / tp * bw,
        resident=table,
    )
    final = _static(
        name="final_norm",
        cls="other",
        layers="once",
        count=1.0,
        flop=4.0 * h,
        weight=h * s.norm_vectors * bw,
        act=2 * h * ba,
    )
    head_held = (s.tables - 1.0) * table  # tied: the embedding table, already counted
    head = _static(
        name="lm_head",
        cls="gemm",
        layers="once",
        count=1.0,
        flop=0.0,
        weight=table,
        act=0.0,
        flop_seq=2 * V * h / tp,
        act_seq=(h + V / tp) * ba,
        resident=head_held,
    )
    return [emb, final, head]


def local_layout(lay: Layout) -> Layout:
    """The layout of every operator but the routed experts: split tp/dp ways (attention DP on:
    whole on each device)."""
    return lay._replace(tp=lay.tp / lay.dp)


def _shared(op: Template, share) -> Template:
    """`op` on one attention data-parallel rank, per token of the whole step: the rank runs it
    on `share` (1/dp) of the step's tokens and sequences, with all its weights."""
    return op._replace(
        flop_per_token=op.flop_per_token * share,
        flop_per_seq=op.flop_per_seq * share,
        flop_per_key=op.flop_per_key * share,
        weight_bytes_per_token=op.weight_bytes_per_token * share,
        act_bytes_per_token=op.act_bytes_per_token * share,
        act_bytes_per_seq=op.act_bytes_per_seq * share,
        kv_bytes_per_token=op.kv_bytes_per_token * share,
        kv_bytes_per_key=op.kv_bytes_per_key * share,
    )


def templates(s: Shapes, lay: Layout, xp, phase: str) -> list[Template]:
    """The operators of one forward step on one device per unit of its size (docs/model.md,
    "Serving model"): `phase` "decode" or "prefill" (their attention differs). Per token of the
    whole step: under attention DP a device's share of it (`_shared`)."""
    loc = local_layout(lay)
    local = (
        _projections(s, loc, xp)
        + _attention(s=s, lay=loc, xp=xp, phase=phase)
        + _ffn(s, loc, xp)
        + _once(s, loc, xp)
    )
    if xp is not SCALAR or lay.dp != 1.0:
        local = [_shared(op, 1.0 / lay.dp) for op in local]
    after = [op.name for op in local].index("router") + 1  # the order sums have always taken
    return [*local[:after], _routed(s, lay), *local[after:]]


def instantiate(op: Template, s: Shapes, *, T, B, S=None, xp, experts=None) -> Op:
    """The Op of a step of T new tokens from B sequences: a decode step (S None) or the
    prefill of B prompts of S tokens (T = B·S). `experts`: the routed experts the device
    reads per MoE layer (`rank_experts`; None: all those the T tokens touch)."""
    flop = op.flop_per_token * T + op.flop_per_seq * B
    if S is not None and op.cls == "attention":
        flop = flop + op.flop_per_key * T * mean_keys(S, op.window, xp)
    touched = experts_touched(s, T) if experts is None else experts
    weight = op.weight_bytes + op.weight_bytes_per_expert * touched + op.weight_bytes_per_token * T
    act = op.act_bytes_per_token * T + op.act_bytes_per_seq * B
    if S is None:
        f1, k1, w = op.flop_per_key * B, op.kv_bytes_per_key * B, op.window
    else:
        f1, k1, w = 0.0, 0.0, INF
    kv_write = op.kv_bytes_per_token * T
    return Op(
        name=op.name,
        cls=op.cls,
        layers=op.layers,
        count=op.count,
        flop=flop,
        flop_per_context=f1,
        weight_bytes=weight,
        act_bytes=act,
        kv_write_bytes=kv_write,
        kv_bytes_per_context=k1,
        window=w,
        resident_bytes=op.resident_bytes,
        wasted_flop=op.flop_per_expert * touched,
        rate=op.rate,
    )


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
    experts = rank_experts(s, ExpertSplit(lay.ep, lay.imbalance), T, xp=xp)
    return [
        instantiate(op, s, T=T, B=B, S=prefill_tokens, xp=xp, experts=experts)
        for op in templates(s=s, lay=lay, xp=xp, phase=phase)
    ]


def step_lists(s: Shapes, lay: Layout, xp, phases=PHASES) -> tuple[list[Template], ...]:
    """The operator templates of the prefill and of a decode step, without those no layer
    carries. They depend on the shapes, TP and element sizes only, not on the batch or the
    tokens, so a caller may build them once for many requests."""
    out = []
    for phase in phases:
        step = templates(s=s, lay=lay, xp=xp, phase=phase)
        out.append([op for op in step if (op.count if xp is SCALAR else xp.any(op.count))])
    return tuple(out)
