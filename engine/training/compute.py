"""One micro-batch on one pipeline stage, operator by operator, and the FLOPs of a token.

The forward pass of a micro-batch of b sequences of s tokens is the serving model's prefill
(engine/serving/operators.py): the operators of one forward step with T = b·s/cp tokens per
device (causal attention: each token attends (s+1)/2 keys on average; context parallelism
splits the tokens, not the keys), every token's logits computed (training predicts every
position, so the LM head sees T tokens, not one per sequence). Each operator runs on its own
roofline, max(F/(Π·η_class), bytes/(β·η_mem)), with the efficiency of its class (Williams et
al. 2009): the serving model's one operator rule (engine/serving/decode_step.py `operator_s`).
The backward pass of a GEMM is two GEMMs of its size (input and weight gradients): 2× its
forward time; FlashAttention's backward is about 2.5× its forward (Dao 2023: five matrix
products against two, plus the recomputed scores), the `attention_backward_factor` assumption.
With sequence parallelism (Korthikanti et al. 2022) the norms run on T/tp tokens. With expert
parallelism a device holds E/ep routed experts and reads only those.

Unfused attention (`attention="unfused"`: Megatron-LM before FlashAttention, e.g. the 2021
paper's runs) computes the whole s×s score matrix (masking skips nothing) with two batched
GEMMs and writes it to memory between kernels: per score element the forward writes the
scores (2 bytes), the fused scale-mask-softmax reads and writes them (4), dropout reads them
and writes its output and mask (5) and the second GEMM reads them (2): 13 bytes; the backward
writes and reads the gradient of each (the value GEMM's, dropout's, softmax's and the two
score GEMMs' reads: 19 bytes). Its time is the GEMMs at the attention efficiency (backward:
twice) plus that traffic at the memory bandwidth, since they are separate kernels.

Model FLOPs follow PaLM's definition (Chowdhery et al. 2022, appendix B): 6·N + 6·L·H·(d_qk +
d_v)·s per token (12·L·H·Q·T for d_qk = d_v = Q), N the weights a token multiplies (matrix
products, the LM head included; embeddings, norms and biases excluded), attention over the
whole sequence (no causal halving). Hardware FLOPs add what recomputation runs again: the
layers' forward pass (full) or the attention core's (selective).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.catalog.shapes import Shapes, heads_per_device
from engine.serving.decode_step import operator_s
from engine.serving.kernel import Device, Efficiencies, rates
from engine.serving.operators import Layout, instantiate, templates
from engine.training.numerics import Numerics

GEMM_BACKWARD = 2.0  # input gradient + weight gradient: two GEMMs the size of the forward
WIDE_GEMMS = ("lm_head", "router")  # kept in 16 bits by fp8 runs (engine/training/numerics.py)
WIDE_BYTES = 2.0  # bytes per weight element of a 16-bit GEMM
SCORE_BYTES_FORWARD = 13.0  # unfused attention: memory traffic per score element, forward
SCORE_BYTES_BACKWARD = 19.0  # and backward (see the module docstring)


class PassTimes(NamedTuple):
    """Seconds per micro-batch on one device (arrays over configurations): per mean layer, and
    the operators of the first stage (embedding) and of the last (final norm, LM head)."""

    layer_fwd: np.ndarray
    layer_bwd: np.ndarray
    attn_fwd: np.ndarray  # the attention core of a mean layer (selective recompute, CP overlap)
    attn_bwd: np.ndarray
    first_fwd: np.ndarray
    first_bwd: np.ndarray
    last_fwd: np.ndarray
    last_bwd: np.ndarray
    # the forward seconds of a mean layer's parts that selective recomputation modules run again
    norm_fwd: np.ndarray  # layernorm: the layer's norms
    up_fwd: np.ndarray  # mla_up_proj: MLA's up-projection GEMMs
    act_fwd: np.ndarray  # moe_act: the routed experts' activation function (memory-bound)
    mlp_fwd: np.ndarray  # mlp: the dense MLP (and its fp8 casts)
    moe_fwd: np.ndarray  # moe: router, routed and shared experts (and their fp8 casts)
    shared_fwd: np.ndarray  # shared_experts: the shared experts (and their fp8 casts)
    # the weight-gradient GEMMs of a mean layer's backward (each as long as its forward GEMM):
    # what a zero-bubble schedule such as DualPipe moves into the bubble
    wgrad: np.ndarray


class PassOp(NamedTuple):
    """One operator of one micro-batch on one device: its forward FLOPs and bytes, the compute
    and memory terms of its roofline, its forward and backward seconds (arrays or floats)."""

    op: object  # the instantiated operator (engine/serving/operators.py Op)
    flop: object  # forward FLOPs per device
    moved: object  # forward bytes moved per device
    t_compute: object  # FLOPs / its class's rate
    t_memory: object  # bytes / bandwidth
    fwd: object  # forward seconds: max of the two (unfused attention: their sum)
    bwd: object  # backward seconds
    backward: object  # backward / forward FLOPs and bytes (2 for a GEMM's two GEMMs)
    roof: str  # the key of its rate: its class, or "head" (a 16-bit GEMM of an fp8 run)


def roofs(dev: Device, eta: Efficiencies) -> dict:
    """Achievable FLOP/s per operator class (engine.serving.kernel.rates) and "head": a GEMM
    kept in 16 bits (the LM head and router of an fp8 run) at the 16-bit peak."""
    return {k: float(v) if np.ndim(v) == 0 else v for k, v in rates(dev, eta).items()} | {
        "head": dev.peak_attn * eta.gemm
    }


def _unfused(tmpl, s: Shapes, lay: Layout, tokens, seq) -> tuple:
    """(FLOPs, score bytes forward, score bytes backward) of an unfused attention operator:
    every key of the window (no causal skipping), the scores through memory between kernels."""
    keys = np.minimum(tmpl.window, seq)
    flop = tmpl.flop_per_key * tokens * keys
    scores = heads_per_device(s, lay.tp, np)[0] * tokens * keys
    return flop, SCORE_BYTES_FORWARD * scores, SCORE_BYTES_BACKWARD * scores


def _casts(op, lay: Layout, num: Numerics, bandwidth) -> PassOp:
    """An fp8 GEMM's quantisation kernels as an operator of their own, `<gemm>_fp8_cast`
    (engine/training/numerics.py), memory-bound: forward, the GEMM's input and its weights;
    backward, its output's gradient. The input and output elements are taken as half the
    GEMM's activation elements each."""
    elements = op.act_bytes / lay.act_bytes  # in + out, per micro-batch
    weights = op.weight_bytes / lay.weight_bytes
    moved = 0.5 * elements * num.quant_act + weights * num.quant_weight
    back = 0.5 * elements * num.quant_act / np.where(moved > 0, moved, 1.0)  # 0: no such op
    cast = op._replace(
        name=f"{op.name}_fp8_cast",
        cls="other",
        flop=0.0,
        flop_per_context=0.0,
        weight_bytes=0.0,
        act_bytes=moved,
        kv_write_bytes=0.0,
        kv_bytes_per_context=0.0,
        wasted_flop=0.0,
    )
    t = moved / bandwidth
    return PassOp(
        op=cast,
        flop=0.0 * moved,
        moved=moved,
        t_compute=0.0 * moved,
        t_memory=t,
        fwd=t,
        bwd=back * t,
        backward=back,
        roof="other",
    )


def pass_ops(
    s: Shapes,
    lay: Layout,
    tokens,
    seq,
    ep,
    rate_of: dict,
    bandwidth,
    attention_backward: float,
    num: Numerics,
) -> list[PassOp]:
    """Every operator of one micro-batch's forward and backward passes on one device, each on
    its own roofline (arguments as `pass_times`, which sums them)."""
    out = []
    for tmpl in templates(s=s, lay=lay, xp=np, phase="prefill"):
        op = instantiate(tmpl, s, T=tokens, B=tokens, S=seq, xp=np)
        if op.name == "routed_experts":
            op = op._replace(weight_bytes=op.weight_bytes / ep)
        wide = num.wide_gemms and op.name in WIDE_GEMMS
        if wide and op.name != "lm_head":  # 16-bit weights (the LM head's template has them)
            op = op._replace(weight_bytes=op.weight_bytes * WIDE_BYTES / lay.weight_bytes)
        flop, moved = op.flop, op.weight_bytes + op.act_bytes + op.kv_write_bytes
        if op.cls == "other" and op.name != "embedding":
            flop, moved = flop / lay.tp, moved / lay.tp  # sequence parallelism: T/tp tokens
        roof = "head" if wide else (op.rate or op.cls)
        rate = rate_of[roof]
        t_c, t_m, fwd = operator_s(
            flop=flop, moved_bytes=moved, rate=rate, bandwidth=bandwidth, xp=np
        )
        back = attention_backward if op.cls == "attention" else GEMM_BACKWARD
        bwd = back * fwd
        if num.unfused and op.cls == "attention":  # separate kernels: GEMMs, then score traffic
            flop, moved, moved_back = _unfused(tmpl=tmpl, s=s, lay=lay, tokens=tokens, seq=seq)
            t_c, t_m, _ = operator_s(
                flop=flop, moved_bytes=moved, rate=rate, bandwidth=bandwidth, xp=np
            )
            fwd = t_c + t_m  # one kernel after another: their times add
            bwd = GEMM_BACKWARD * t_c + moved_back / bandwidth
            back = GEMM_BACKWARD
        out.append(
            PassOp(
                op=op,
                flop=flop,
                moved=moved,
                t_compute=t_c,
                t_memory=t_m,
                fwd=fwd,
                bwd=bwd,
                backward=back,
                roof=roof,
            )
        )
        if num.quant_act and op.cls in ("gemm", "expert") and not wide:
            out.append(_casts(op=op, lay=lay, num=num, bandwidth=bandwidth))
    return out


def pass_times(
    s: Shapes,
    lay: Layout,
    tokens,
    seq,
    ep,
    rate_of: dict,
    bandwidth,
    attention_backward: float,
    num: Numerics,
) -> PassTimes:
    """Forward and backward seconds of one micro-batch, `tokens` per device, `seq` per sequence.

    Args:
        s, lay: the model's shapes; tp and bytes per element (Layout, pp unused).
        tokens: T = b·s/cp per device; seq: s (the keys a causal prompt attends).
        ep: expert-parallel degree (routed expert weights read: E/ep of them).
        rate_of: achievable FLOP/s per operator class and of a 16-bit GEMM (`roofs`).
        bandwidth: memory bytes/s, the bandwidth efficiency applied.
        attention_backward: backward/forward time of attention (FlashAttention: 2.5).
        num: the fp8 casts and 16-bit LM head, and attention as separate kernels with the
            scores in memory (see above; engine/training/numerics.py).
    """
    zero = np.zeros(np.shape(tokens))
    acc = {k: zero for k in PassTimes._fields}
    acc["up_fwd"] = tokens * up_projection_flops(s, lay.tp) / rate_of["gemm"] + zero
    for p in pass_ops(
        s=s,
        lay=lay,
        tokens=tokens,
        seq=seq,
        ep=ep,
        rate_of=rate_of,
        bandwidth=bandwidth,
        attention_backward=attention_backward,
        num=num,
    ):
        op, t, t_back = p.op, p.fwd, p.bwd
        if op.layers != "once":
            share = op.count / s.layers  # per mean layer
            acc["layer_fwd"] = acc["layer_fwd"] + share * t
            acc["layer_bwd"] = acc["layer_bwd"] + share * t_back
            if op.cls == "attention":
                acc["attn_fwd"] = acc["attn_fwd"] + share * t
                acc["attn_bwd"] = acc["attn_bwd"] + share * t_back
            elif op.cls in ("gemm", "expert"):
                acc["wgrad"] = acc["wgrad"] + share * t
            for f in _module_fields(op.name):
                acc[f] = acc[f] + share * t
            if op.name == "routed_experts":  # reads the gate and up, writes the activation:
                # ffn_matrices·width·2 bytes per routed pair, pairs = FLOPs / (2·m·h·width)
                acc["act_fwd"] = acc["act_fwd"] + share * op.flop * lay.act_bytes / (
                    2.0 * s.hidden * bandwidth
                )
        else:
            end = "first" if op.name == "embedding" else "last"
            acc[f"{end}_fwd"] = acc[f"{end}_fwd"] + t
            acc[f"{end}_bwd"] = acc[f"{end}_bwd"] + t_back
    return PassTimes(**acc)


# The operators (and their fp8 casts) each selective recompute module runs again: PassTimes field
MODULE_OPS = {
    "norm_fwd": ("norm",),
    "mlp_fwd": ("mlp",),
    "moe_fwd": ("router", "routed_experts", "shared_experts"),
    "shared_fwd": ("shared_experts",),
}


def _module_fields(name: str) -> list[str]:
    """The PassTimes fields an operator named `name` (or its fp8 cast) adds its forward to."""
    base = name.removesuffix("_fp8_cast")
    return [f for f, ops in MODULE_OPS.items() if base in ops]


def up_projection_flops(s: Shapes, tp) -> object:
    """FLOPs per token of MLA's up-projections on one device: the query's from its latent (when
    the query is compressed) and the keys' and values' from theirs (0 without MLA)."""
    q = np.where(s.q_rank > 0, s.q_rank * s.heads * s.qk_dim, 0.0)
    kv = s.kv_rank * s.heads * (s.nope_dim + s.v_dim)
    return np.where(s.mla, 2.0 * (q + kv) / tp, 0.0)


class TokenFlops(NamedTuple):
    """FLOPs per token (floats, or arrays over models), PaLM's convention."""

    matmul_params: object  # N: weights of the matrix products a token multiplies
    model: object  # 6·N + 6·Σ_layers H·(d_qk + d_v)·keys: forward and backward
    recompute_full: object  # the layers' forward again: 2·(N − head) + attention forward
    recompute_selective: object  # the attention core's forward again
    recompute_up: object  # MLA's up-projections again (mla_up_proj)
    recompute_mlp: object  # the dense MLPs again (mlp)
    recompute_moe: object  # the MoE layers' router, routed and shared experts again (moe)
    recompute_shared: object  # the shared experts again (shared_experts)


def token_flops(s: Shapes, seq) -> TokenFlops:
    """Model FLOPs per token of a sequence of `seq` tokens, and what recomputation adds."""
    lay = Layout(
        tp=1.0, pp=1.0, weight_bytes=1.0, kv_bytes=1.0, act_bytes=1.0
    )  # FLOPs do not depend on bytes: one device, no split
    matmul = head = attention = 0.0
    parts = dict.fromkeys(MODULE_OPS, 0.0)
    for op in templates(s=s, lay=lay, xp=np, phase="prefill"):
        if op.cls == "attention":  # whole-sequence attention (PaLM), window-capped
            attention = attention + op.count * op.flop_per_key * np.minimum(op.window, seq)
        elif op.cls in ("gemm", "expert"):
            per_token = op.count * (op.flop_per_token + op.flop_per_seq)
            matmul = matmul + per_token
            head = head + (per_token if op.layers == "once" else 0.0)
            for f in _module_fields(op.name):
                parts[f] = parts[f] + per_token
    return TokenFlops(
        matmul_params=matmul / 2.0,
        model=3.0 * (matmul + attention),
        recompute_full=matmul - head + attention,
        recompute_selective=attention,
        recompute_up=s.layers * up_projection_flops(s, 1.0),
        recompute_mlp=parts["mlp_fwd"],
        recompute_moe=parts["moe_fwd"],
        recompute_shared=parts["shared_fwd"],
    )
