"""Memory per GPU in training: weights, gradients, optimizer state and activations.

Mixed-precision Adam (Rajbhandari et al. 2020, "ZeRO", §3.1) keeps per parameter 2 bytes of
16-bit weights, 2 of 16-bit gradients and 12 of optimizer state (fp32 master weights, momentum
and variance): 16 bytes. ZeRO shards them over the data-parallel ranks (dp·cp, the ranks that
hold the same weights; expert weights over their dp·cp/ep replicas): stage 1 the optimizer
state, stage 2 also the gradients, stage 3 also the weights. fp8 training keeps 16-bit weights
(the fp8 copies of a GEMM's operands are transient). A device holds the weights of the fullest
pipeline stage, ⌈L/pp⌉ layers split tp ways plus the replicated parts and a vocabulary table at
either end (engine/serving/parallel.py `weight_bytes_per_device`), routed experts split ep ways.

Activations per layer and micro-batch (Korthikanti et al. 2022, "Reducing Activation
Recomputation in Large Transformer Models", §4): s·b·h·(34 + 5·a·s/h) bytes for a GPT layer
(16-bit activations, 1-byte dropout masks, the score matrices of a heads), here from the
shapes: attention 2h + 2(H + K)·d_qk + 2K·d_v + 2H·d_v + h (11h for GPT), MLP 2h + 2(m−1)f +
2f + h (19h; m = 3 for a gated MLP; an MoE layer per routed and shared expert), norms 2h each
(4h), plus 5·H·s for the scores when attention is unfused (FlashAttention keeps none: without
recomputation a layer then keeps 34h per token). Tensor parallelism with sequence parallelism
divides all of it by tp, context parallelism the tokens by cp. Selective recomputation keeps
everything but the scores; full recomputation keeps each layer's input (2h per token) and
rebuilds one layer at a time (that layer's activations, once). The first pipeline stage holds
the most micro-batches in flight: min(m, pp) under 1F1B, i.e. L layers' worth, and under the
interleaved schedule min(m·v, v·pp + pp − 1) chunks of ⌈L/pp⌉/v layers, L·(1 + (pp−1)/(pp·v))
layers' worth (Korthikanti et al. 2022, §4.2.3). The embedding's output and the logits are not
counted.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.catalog.shapes import Shapes
from engine.serving.operators import Layout, templates
from engine.serving.parallel import weight_bytes_per_device
from engine.training.config import Config

WEIGHT_BYTES = 2.0  # 16-bit weights per parameter
GRADIENT_BYTES = 2.0  # 16-bit gradients
OPTIMIZER_BYTES = 12.0  # fp32 master weights, Adam momentum and variance
SCORE_BYTES = 5.0  # per head per key: softmax input and output (2 + 2 bytes) and its mask


class MemoryTerms(NamedTuple):
    """Bytes per GPU on the first pipeline stage (arrays over configurations)."""

    weights: np.ndarray
    gradients: np.ndarray
    optimizer: np.ndarray
    activations: np.ndarray

    @property
    def total(self) -> np.ndarray:
        return self.weights + self.gradients + self.optimizer + self.activations


def params_on_device(s: Shapes, tp, pp, ep) -> tuple:
    """(dense, routed-expert) parameters held by a device of the fullest stage."""
    ops = templates(s, Layout(tp, pp, 1.0, 1.0, 1.0), np, "prefill")  # 1 byte: elements
    total = weight_bytes_per_device(ops, s, pp, np)
    experts = weight_bytes_per_device([op for op in ops if op.name == "routed_experts"], s, pp, np)
    return total - experts, experts / ep


def activation_bytes_per_token(s: Shapes, seq) -> tuple:
    """(bytes a layer keeps per token without the scores, the scores' bytes per token), mean
    over the layers, before any parallel split (Korthikanti et al. 2022)."""
    h, H, d, dv = s.hidden, s.heads, s.qk_dim, s.v_dim
    kv = np.where(s.mla, H, s.kv_heads)  # MLA: decompressed per-head keys and values
    attention = 2 * h + 2 * (H + kv) * d + 2 * kv * dv + 2 * H * dv + h
    widths = 2 * (s.ffn_matrices - 1.0)
    dense = 2 * h + widths * s.ffn + 2 * s.ffn + h
    expert = 2 * h + widths * s.expert_ffn + 2 * s.expert_ffn
    moe = 2 * h + (s.experts_per_token + s.shared_experts) * expert + h
    mlp = (s.dense_layers * dense + s.moe_layers * moe) / s.layers
    return attention + mlp + s.norms_per_layer * 2 * h, SCORE_BYTES * H * seq


def memory_terms(c: Config, s: Shapes, stage_layers, unfused: bool = False) -> MemoryTerms:
    """Memory per GPU of each configuration (first stage, the fullest); the scores are kept
    only by unfused attention (FlashAttention keeps two numbers per row of them)."""
    dense, experts = params_on_device(s, c.tp, c.pp, c.ep)
    group = c.dp * c.cp

    def held(bytes_per_param, sharded):
        whole = dense + experts
        shard = dense / group + experts / (group / c.ep)
        return bytes_per_param * np.where(sharded, shard, whole)

    base, scores = activation_bytes_per_token(s, c.seq_len)
    scores = scores if unfused else 0.0
    tokens = c.micro_batch * c.seq_len / c.cp
    kept = np.select([c.recompute == 0, c.recompute == 1], [base + scores, base], 2.0 * s.hidden)
    per_layer = tokens * kept / c.tp
    rebuilt = np.where(c.recompute == 2, tokens * (base + scores) / c.tp, 0.0)
    v, m = c.virtual, c.micro_batches
    chunks = np.where(v > 1, np.minimum(m * v, v * c.pp + c.pp - 1), np.minimum(m, c.pp))
    return MemoryTerms(
        weights=held(WEIGHT_BYTES, c.zero >= 3),
        gradients=held(GRADIENT_BYTES, c.zero >= 2),
        optimizer=held(OPTIMIZER_BYTES, c.zero >= 1),
        activations=per_layer * chunks * stage_layers / v + rebuilt,
    )
