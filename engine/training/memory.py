"""Memory per GPU in training: weights, gradients, optimizer state and activations.

Mixed-precision Adam (Rajbhandari et al. 2020, "ZeRO", §3.1) keeps per parameter 2 bytes of
16-bit weights, 2 of 16-bit gradients (`gradient_bytes`: 4 for fp32 gradients, Megatron-LM's
default for bf16) and 12 of optimizer state (fp32 master weights, momentum and variance; the
moments at `optimizer_moment_bytes` each, 2 for bf16 moments: 8): 16 bytes. ZeRO shards them
over the data-parallel ranks (dp·cp, the ranks that hold the same weights; expert weights over
their edp = tp·cp·dp/(etp·ep) replicas): stage 1 the optimizer state, stage 2 also the
gradients, stage 3 also the weights. fp8 training keeps 16-bit weights
(the fp8 copies of a GEMM's operands are transient), or 1-byte ones with `fp8_param_gather`
(engine/training/numerics.py). A device holds the weights of the fullest pipeline stage of each
kind (engine/training/stages.py): its layers split tp ways plus the replicated parts, the
embedding table on the first stage and the final norm and a vocabulary table on the last, routed
experts split ep ways.

Activations per layer and micro-batch (Korthikanti et al. 2022, "Reducing Activation
Recomputation in Large Transformer Models", §4): s·b·h·(34 + 5·a·s/h) bytes for a GPT layer
(16-bit activations, 1-byte dropout masks, the score matrices of a heads), here from the
shapes: attention 2h + 2(H + K)·d_qk + 2K·d_v + 2H·d_v + h (11h for GPT), MLP 2h + 2(m−1)f +
2f + h (19h; m = 3 for a gated MLP; an MoE layer per routed and shared expert), norms 2h each
(4h; the two h are dropout's 1-byte masks, none with `dropout` 0), plus 5·H·s for the scores
when attention is unfused (FlashAttention keeps none: without
recomputation a layer then keeps 34h per token). Tensor parallelism with sequence parallelism
divides all of it by tp, context parallelism the tokens by cp. Selective recomputation keeps
everything but what its modules rebuild (the scores by default; Megatron-Core's
--recompute-modules, docs/model.md "Recomputation by module"); full recomputation keeps each
layer's input (2h per token) and rebuilds one layer at a time (that layer's activations, once).
An fp8 run keeps each GEMM's input as its own copy at `fp8_saved_bytes` an element (Transformer
Engine's: 1) beside any 16-bit tensor another operator keeps (docs/model.md, "FP8 training").
Stage i (0-based) holds min(m, pp − i) micro-batches in flight under 1F1B and, interleaved,
Megatron-LM's warm-up plus one, min(m·v, 2(pp − i − 1) + (v − 1)·pp + 1) chunks of 1/v of its
layers (the first stage: v·pp + pp − 1, Korthikanti et al. 2022, §4.2.3). The memory reported is
the most loaded stage's of the first, the first middle and the last (fewer layers on the first
stage, as Llama 3 405B put there, can make the second the most loaded). The embedding's output
and the logits are not counted.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.catalog.shapes import Shapes
from engine.serving.operators import Layout, templates
from engine.training.config import Config
from engine.training.numerics import Numerics
from engine.training.stages import StageLayers, in_flight

WEIGHT_BYTES = 2.0  # 16-bit weights per parameter
GRADIENT_BYTES = 2.0  # 16-bit gradients (the `gradient_bytes` assumption's default)
SCORE_BYTES = 5.0  # per head per key: softmax input and output (2 + 2 bytes) and its mask
SIXTEEN_BIT = Numerics(weight_bytes=2.0)  # every activation kept at 16 bits, dropout's masks


class MemoryTerms(NamedTuple):
    """Bytes per GPU on the first pipeline stage (arrays over configurations)."""

    weights: np.ndarray
    gradients: np.ndarray
    optimizer: np.ndarray
    activations: np.ndarray

    @property
    def total(self) -> np.ndarray:
        return self.weights + self.gradients + self.optimizer + self.activations


def _resident(s: Shapes, tp) -> dict:
    """Elements a device holds: per mean layer (dense, routed experts) and the end operators'
    (the embedding table, the final norm, the LM head's own table: 0 when tied)."""
    ops = templates(
        s=s,
        lay=Layout(tp=tp, pp=1.0, weight_bytes=1.0, kv_bytes=1.0, act_bytes=1.0),
        xp=np,
        phase="prefill",
    )  # 1 byte: elements
    out = {"layer": 0.0, "experts": 0.0, "embedding": 0.0, "final_norm": 0.0, "lm_head": 0.0}
    for op in ops:
        if op.layers != "once":
            out["layer"] = out["layer"] + op.count * op.resident_bytes / s.layers
            if op.name == "routed_experts":
                out["experts"] = out["experts"] + op.count * op.resident_bytes / s.layers
        else:
            out[op.name] = out[op.name] + op.resident_bytes
    return out


def stage_params(s: Shapes, tp, pp, ep, stages: StageLayers, etp=None) -> dict:
    """(dense, routed-expert) parameters held by a device of each stage kind (first, middle,
    last): its layers split tp ways, its routed experts ep ways and each of them etp ways (tp
    unless given), and its end: the embedding table on the first stage, the final norm and a
    vocabulary table (the head, or the tied embedding's copy) on the last, all three on a
    single stage (the head's table only when not tied)."""
    r = _resident(s, tp)
    experts = r["experts"] * (1.0 if etp is None else tp / etp)  # widths split etp ways
    dense_layer = r["layer"] - r["experts"]
    single = r["embedding"] + r["final_norm"] + r["lm_head"]
    ends = {
        "first": np.where(pp > 1, r["embedding"], single),
        "middle": 0.0,
        "last": np.where(pp > 1, r["final_norm"] + r["embedding"], single),
    }
    return {
        kind: (n * dense_layer + ends[kind], n * experts / ep)
        for kind, n in zip(StageLayers._fields, stages, strict=True)
    }


def device_params(c: Config, s: Shapes, stages: StageLayers) -> dict:
    """(dense, routed-expert) parameters a device of each stage kind holds (`stage_params`);
    under DualPipe and DualPipeV a device holds a stage and its mirror (device i stages i and
    S − 1 − i of S: an end device the first and the last, a middle one two middle stages)."""
    own = stage_params(s=s, tp=c.tp, pp=c.pp, ep=c.ep, stages=stages, etp=c.expert_tp)
    ends = tuple(f + x for f, x in zip(own["first"], own["last"], strict=True))
    mirrored = {"first": ends, "middle": tuple(2.0 * x for x in own["middle"]), "last": ends}
    return {
        kind: tuple(
            np.where(c.mirrored, d, o) for d, o in zip(mirrored[kind], own[kind], strict=True)
        )
        for kind in own
    }


def params_on_device(c: Config, s: Shapes, stages: StageLayers) -> tuple:
    """(dense, routed-expert) parameters held by the device holding the most
    (`device_params`)."""
    kinds = list(device_params(c=c, s=s, stages=stages).values())
    shape = np.shape(c.pp)
    totals = np.stack([np.broadcast_to(d + e, shape) for d, e in kinds])
    pick = np.argmax(totals, axis=0)
    dense = np.choose(pick, [np.broadcast_to(d, shape) for d, _ in kinds])
    experts = np.choose(pick, [np.broadcast_to(e, shape) for _, e in kinds])
    return dense, experts


def activation_bytes_per_token(
    s: Shapes, seq, c: Config | None = None, num: Numerics = SIXTEEN_BIT
) -> tuple:
    """(bytes a mean layer keeps per token without the scores, the scores' bytes per token),
    before any parallel split (Korthikanti et al. 2022); with `c`, less what each
    configuration's selective recomputation modules rebuild in the backward pass instead.
    What `num` says of the kept tensors: `saved_bytes` per element of a GEMM's input (2: the
    16-bit tensor; below 2, an fp8 run's own copy, kept beside any 16-bit tensor another
    operator keeps: the `fp8_saved_bytes` assumption); `masks`: dropout's 1-byte masks (h per
    token after attention and after the MLP, one per score element; the `dropout` assumption
    above 0); `moe_act_bytes` per element of an MoE expert's activation input
    (`moe_act_input_bytes`); `attn_out_bytes` per element of attention's output
    (`attention_output_bytes`: 2 keeps the 16-bit tensor and an fp8 run's copy beside it;
    below 2 one copy serves attention's backward pass and the output projection's)."""
    h, H, d, dv = s.hidden, s.heads, s.qk_dim, s.v_dim
    saved = num.saved_bytes
    mask = h * (1.0 if num.masks else 0.0)  # a block's dropout mask, per token
    again = (lambda m: c.runs_again(m)) if c is not None else (lambda m: False)
    copy = np.asarray(saved) < 2.0

    def gemm_in(n):  # a GEMM's input of n elements per token, as kept
        return np.where(copy, saved * n, 2.0 * n)

    kv = np.where(s.mla, H, s.kv_heads)  # MLA: decompressed per-head keys and values
    qkv = np.where(again("mla_up_proj"), 0.0, 2 * (H + kv) * d + 2 * kv * dv)  # FlashAttention's
    latents = np.where(s.mla, gemm_in(s.q_rank + s.kv_rank) + 2 * s.rope_dim, 0.0)  # up-projs'
    downs = np.where(s.mla & copy, 2.0, 1.0)  # MLA's two down-projections: an fp8 copy each
    norm_out = np.where(again("layernorm"), 0.0, downs * gemm_in(h))  # the first GEMMs' input
    one_copy = np.asarray(num.attn_out_bytes) < 2.0  # one narrow copy for both readers
    out = np.where(
        one_copy, num.attn_out_bytes * H * dv, 2 * H * dv + np.where(copy, saved * H * dv, 0.0)
    )  # attention's output, and the projection's fp8 copy
    attention = norm_out + qkv + latents + out + mask
    widths = 2 * (s.ffn_matrices - 1.0)
    act_in = num.moe_act_bytes * (s.ffn_matrices - 1.0) * s.expert_ffn  # an expert's SwiGLU's
    act_out = np.where(again("moe_act"), 0.0, gemm_in(s.expert_ffn))  # the routed experts' only
    routed = gemm_in(h) + act_in + act_out
    shared_in = np.where(copy, saved * h, 0.0)  # 16-bit: the norm's output the router keeps
    shared_body = shared_in + act_in + gemm_in(s.expert_ffn)
    shared = np.where(again("shared_experts"), 0.0, shared_body)
    moe_body = s.experts_per_token * routed + s.shared_experts * shared + mask
    moe_in = np.where(again("layernorm") & ~again("moe"), 0.0, 2 * h)  # the router's input
    moe = moe_in + np.where(again("moe"), 0.0, moe_body)
    dense_in = np.where(again("mlp"), 2 * h, np.where(again("layernorm"), 0.0, gemm_in(h)))
    dense = dense_in + np.where(again("mlp"), 0.0, widths * s.ffn + gemm_in(s.ffn) + mask)
    mlp = (s.dense_layers * dense + s.moe_layers * moe) / s.layers
    kept = attention + mlp + s.norms_per_layer * 2 * h
    return kept, (SCORE_BYTES - (0.0 if num.masks else 1.0)) * H * seq


def _stage_memory(c: Config, s: Shapes, params: tuple, layers, chunks, num: Numerics):
    """MemoryTerms of one stage kind: `params` (dense, experts) it holds, `layers` on it,
    `chunks` micro-batch chunks of activations in flight (each 1/vp of its layers)."""
    dense, experts = params
    group = c.dp * c.cp

    def held(bytes_per_param, sharded):  # routed experts shard over their edp ranks
        whole = dense + experts
        shard = dense / group + experts / c.expert_dp
        return bytes_per_param * np.where(sharded, shard, whole)

    whole, scores = activation_bytes_per_token(s, c.seq_len, num=num)
    base, _ = activation_bytes_per_token(s, c.seq_len, c=c, num=num)  # selective: less rebuilt
    scores = scores if num.unfused else 0.0
    tokens = c.micro_batch * c.seq_len / c.cp
    selective = base + np.where(c.runs_again("core_attn"), 0.0, scores)
    kept = np.select(
        [c.recompute == 0, c.recompute == 1], [whole + scores, selective], 2.0 * s.hidden
    )
    per_layer = tokens * kept / c.tp
    rebuilt = np.where((c.recompute == 2) & (layers > 0), tokens * (whole + scores) / c.tp, 0.0)
    return MemoryTerms(
        weights=held(num.param_bytes, c.zero >= 3),
        gradients=held(num.grad_bytes, c.zero >= 2),
        optimizer=held(num.optimizer_bytes, c.zero >= 1),
        activations=per_layer * chunks * layers / c.virtual + rebuilt,
    )


def memory_terms(c: Config, s: Shapes, stages: StageLayers, num: Numerics) -> MemoryTerms:
    """Memory per GPU of each configuration on its most loaded stage: the first stage (the
    most micro-batches in flight), the first middle stage (one fewer) or the last (one, or
    the interleaved warm-up), each with its own layers and end operators; the scores are kept
    only by unfused attention (FlashAttention keeps two numbers per row of them). Under DualPipe
    and DualPipeV (S stages) every device holds S + 1 chunks of its two stages' activations
    (deepseek-ai/DualPipe's table; each chunk the mean of its stages' layers; at most the m
    micro-batches' chunks) and both stages' weights."""
    params = device_params(c=c, s=s, stages=stages)
    m, v = c.micro_batches, c.virtual
    position = {"first": 0.0, "middle": 1.0, "last": c.pp - 1.0}
    ends = 0.5 * (stages.first + stages.last)
    dual_layers = {"first": ends, "middle": stages.middle, "last": ends}
    passes = np.where(c.dualpipev, 2.0, 1.0)  # chunks of a micro-batch on a device
    dual_chunks = np.minimum(m * passes, c.stages + 1.0)
    terms = [
        _stage_memory(
            c=c,
            s=s,
            params=params[kind],
            layers=np.where(c.mirrored, dual_layers[kind], getattr(stages, kind)),
            chunks=np.where(
                c.mirrored, dual_chunks, in_flight(pp=c.pp, vp=v, m=m, stage=position[kind])
            ),
            num=num,
        )
        for kind in StageLayers._fields
    ]
    pick = np.argmax(np.stack([np.broadcast_to(x.total, np.shape(c.pp)) for x in terms]), axis=0)
    return MemoryTerms(
        *(
            np.choose(pick, [np.broadcast_to(getattr(x, f), np.shape(c.pp)) for x in terms])
            for f in MemoryTerms._fields
        )
    )
