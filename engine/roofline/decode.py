"""The tutorial's LLM decode view (docs/model.md, "LLM decode"): KV cache, decode step, prefill.

The tutorial's view, kept beside the serving model and labelled as such wherever it is shown
(`engine.decode`, the CLI's `decode`, /decode's "tutorial" switch, the lessons): the whole model
as one roofline point on one device, one decode step at a given context, one prefill. The
serving model (engine/serving/, `engine.serve`) prices each operator on TP×PP devices and whole
requests, with its own decode step (engine/serving/decode_step.py); the two differ on purpose.

A decode step reads every weight and each sequence's whole KV cache once per generated token,
so at small batch it is memory-bound; prefill pushes the prompt's S tokens through in one pass
and turns compute-bound (Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023).
The kernel `llm_terms` works on floats or numpy arrays through the shared `roofline_terms`, so
the scalar `decode` and the vectorised `decode_sweep` (engine/roofline/decode_sweep.py) agree.

Modelling choices, echoed in every result's `assumptions`: activation traffic is neglected,
ACTIVATION_BYTES_PER_TOKEN = 0 (activations are small: Llama-3.1-8B's residual stream is
2·32·4096·2 B = 0.5 MB per token against 16 GB of weights; the single-model solve's
activation_fraction is not used); FLOPs come from the shapes at 2 per multiply-accumulate
("mac2"); prefill's attention FLOPs are not halved for the causal mask; memory traffic runs at
bandwidth × bandwidth_efficiency; what fits is judged against the usable memory,
capacity × (1 − memory_reserve), and the longest context is capped at the model's own.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from engine.assumptions import Assumptions
from engine.catalog.arch import Architecture
from engine.catalog.shapes import Shapes, cached_tokens, shapes_of
from engine.checks import MAX_BATCH, MAX_TOKENS
from engine.report.columns import (
    ACTIVATION_BYTES_PER_TOKEN,
    DECODE_ASSUMPTION_COLUMNS,
    DECODE_FIXED_ASSUMPTIONS,
    DECODE_ID_COLUMNS,
    DECODE_PHASE_COLUMNS,
    DECODE_SCENARIO_COLUMNS,
)
from engine.report.frames import categorical
from engine.report.messages import Message
from engine.roofline.solve import REGIMES, regime_codes, regime_of, roofline_terms

MAX_CONTEXT = MAX_TOKENS  # tokens; the longest published context window (Llama 4 Scout, 10M)
# The scenario's identity: the first keys of `DecodeResult.as_dict`.
ID_KEYS = tuple(DECODE_ID_COLUMNS)


def head_dim_of(model) -> float:
    """Per-head width: the catalogued head_dim, else hidden / heads."""
    return float(model.head_dim) if model.head_dim else model.hidden / model.heads


def context_limit(model) -> int:
    """The longest context the capacity figures consider: the model's own, at most MAX_CONTEXT."""
    return min(model.context_length or MAX_CONTEXT, MAX_CONTEXT)


def kv_shapes(model) -> Shapes:
    """The shapes the KV-cache rule reads (engine/catalog/shapes.py): the model's architecture,
    or for an entry with only flat shapes (a custom model) a plain GQA stack of them."""
    if model.arch is not None:
        return shapes_of(model.arch)
    d = int(head_dim_of(model))
    flat = Architecture(
        layers=model.layers,
        hidden=model.hidden,
        heads=model.heads,
        kv_heads=model.kv_heads,
        head_dim=d,
        intermediate=0,
        vocab=1,
        context_length=context_limit(model),
    )
    return shapes_of(flat)


def sequence_kv(s: Shapes, kv_layer, context):
    """KV-cache bytes of one sequence at `context` tokens: the one rule (MLA, windows)."""
    return kv_layer * cached_tokens(s, context, np)


def largest_fitting(memory_of, estimate, capacity_bytes, limit):
    """Largest whole n in [0, limit] with memory_of(n) <= capacity (arrays or floats).

    The estimate (the exact real solution) is floored, then corrected by one step either way
    with the very expression `fits_in_memory` uses, so n fits and n + 1 does not.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.clip(np.floor(np.nan_to_num(estimate, nan=limit, posinf=limit)), 0, limit)
    up = np.minimum(n + 1, limit)
    n = np.where(memory_of(up) <= capacity_bytes, up, n)
    return np.where((n > 0) & (memory_of(n) > capacity_bytes), n - 1, n)


def _phase(flops, bytes_moved, roof: dict) -> dict:
    r = roofline_terms(flops=flops, bytes_moved=bytes_moved, **roof)
    return {k: r[k] for k in PHASE_TERMS} | {"flops": flops, "bytes": bytes_moved}


PHASE_TERMS = (  # what a phase keeps of `roofline_terms`
    "t_compute_s",
    "t_memory_s",
    "t_overhead_s",
    "latency_s",
    "overhead_share",
    "arithmetic_intensity_flop_per_byte",
    "attainable_flop_per_s",
    "achieved_flop_per_s",
    "overhead_gap_flop_per_s",
    "mfu",
    "compute_bound",
    "overhead_bound",
)


def _limits(s: Shapes, weight, kv_layer, batch, context, usable, context_limit) -> dict:
    # The same association as `kv` in llm_terms, so these agree with fits_in_memory exactly.
    room = usable - weight
    per_seq = sequence_kv(s, kv_layer, context)
    # Invert cached_tokens: L·c up to the window w, then (L − local)·c + local·w.
    tokens = room / (kv_layer * batch)
    full = s.layers * np.minimum(s.window, MAX_CONTEXT)
    with np.errstate(divide="ignore", invalid="ignore"):
        past = s.window + (tokens - full) / (s.layers - s.local_layers)
    c = np.where(tokens <= full, tokens / s.layers, past)
    return {
        "max_batch_at_context": largest_fitting(
            memory_of=lambda n: weight + per_seq * n,
            estimate=room / per_seq,
            capacity_bytes=usable,
            limit=MAX_BATCH,
        ),
        "max_context_at_batch": largest_fitting(
            memory_of=lambda n: weight + sequence_kv(s, kv_layer, n) * batch,
            estimate=c,
            capacity_bytes=usable,
            limit=context_limit,
        ),
    }


def llm_terms(*, model: dict, batch, context, prompt, peak, bandwidth, capacity, **roof) -> dict:
    """The decode view for one scenario or a broadcast grid of them; SI floats or arrays.

    Args:
        model: params, params_active, heads, head_dim, bytes_per_param, context_limit (the
            longest context allowed), kv_layer (KV bytes per token per layer; floats or
            arrays) and shapes (a Shapes: layers and windows, for the one KV-cache rule).
        batch, context, prompt: sequences, KV length at the decode step, prompt tokens S.
        peak, bandwidth, capacity: FLOP/s, catalogued byte/s and bytes of the accelerator.
        **roof: efficiency, bandwidth_efficiency, memory_reserve (fractions), overhead_s
            (d + N·τ) and tdp_w; all but the middle two go to `roofline_terms`.

    Returns:
        The memory and capacity figures, ridges, and a dict per phase ("decode", "prefill").
    """
    m, s, kv_layer = model, model["shapes"], model["kv_layer"]
    kv_tok = kv_layer * s.layers  # while every layer still grows
    weight = m["params"] * m["bytes_per_param"]  # P·b; MoE: all experts are read
    kv = sequence_kv(s, kv_layer, context) * batch  # MLA's latent; windows hold at most w
    usable = capacity * (1 - roof.pop("memory_reserve"))
    achievable = bandwidth * roof.pop("bandwidth_efficiency")
    attention = 4.0 * m["heads"] * m["head_dim"]  # QKᵀ and AV per (query, key) per layer
    roof = {"peak": peak, "bandwidth": achievable, **roof}
    keys = cached_tokens(s, context, np)  # Σ over layers of the keys each attends
    decode_flops = 2.0 * m["params_active"] * batch + attention * keys * batch
    prompt_keys = prompt * cached_tokens(s, prompt, np)  # S·Σ min(S, w), no causal halving
    prefill_flops = (2.0 * m["params_active"] * prompt + attention * prompt_keys) * batch
    prefill_kv = sequence_kv(s, kv_layer, prompt) * batch
    prefill_bytes = weight + prefill_kv + ACTIVATION_BYTES_PER_TOKEN * prompt * batch
    memory = weight + kv
    return {
        "weight_bytes": weight,
        "kv_cache_bytes_per_token": kv_tok,
        "kv_cache_bytes": kv,
        "memory_required_bytes": memory,
        "memory_capacity_bytes": capacity,
        "usable_memory_bytes": usable,
        "fits_in_memory": memory <= usable,
        **_limits(
            s=s,
            weight=weight,
            kv_layer=kv_layer,
            batch=batch,
            context=context,
            usable=usable,
            context_limit=m["context_limit"],
        ),
        "peak_flop_per_s": peak,
        "memory_bandwidth_bytes_per_s": bandwidth,
        "ridge_flop_per_byte": peak / bandwidth,
        "effective_ridge_flop_per_byte": peak * roof["efficiency"] / achievable,
        "effective_peak_flop_per_s": peak * roof["efficiency"],
        "decode": _phase(decode_flops, memory + ACTIVATION_BYTES_PER_TOKEN * batch, roof),
        "prefill": _phase(prefill_flops, prefill_bytes, roof),
    }


@dataclass(frozen=True, slots=True)
class PhaseCost:
    """One phase (decode step or prefill) on the roofline, in SI units."""

    flops: float
    bytes: float
    t_compute_s: float
    t_memory_s: float
    t_overhead_s: float
    latency_s: float
    overhead_share: float
    arithmetic_intensity_flop_per_byte: float
    attainable_flop_per_s: float
    achieved_flop_per_s: float
    overhead_gap_flop_per_s: float
    mfu: float
    compute_bound: bool
    overhead_bound: bool  # fixed overhead is at least half of latency

    @property
    def bottleneck(self) -> str:
        return "compute" if self.compute_bound else "memory"

    @property
    def regime(self) -> str:
        """ "overhead" when fixed overhead is at least half of latency, else the bottleneck."""
        return regime_of(self.compute_bound, self.overhead_bound)


@dataclass(frozen=True, slots=True)
class DecodeResult:
    """The tutorial's LLM decode view of one LLM × accelerator × batch × context scenario: the
    whole model as one roofline point on one device, one decode step and one prefill (not the
    serving model's figures: `engine.serve`); `as_dict` is the CLI JSON."""

    model: str
    hardware: str
    batch_size: int
    context: int
    prompt: int
    precision: str
    kv_precision: str
    peak_precision: str  # the precision whose peak was used (fp16 on fallback)
    weight_bytes: float
    kv_cache_bytes_per_token: float
    kv_cache_bytes: float
    memory_required_bytes: float
    memory_capacity_bytes: float
    usable_memory_bytes: float  # capacity × (1 − memory_reserve)
    fits_in_memory: bool  # weights + KV cache <= usable memory
    max_batch_at_context: int  # 0 when not even one sequence fits; capped at MAX_BATCH
    max_context_at_batch: int  # 0 if not even one token fits; <= the model's context, MAX_CONTEXT
    peak_flop_per_s: float
    memory_bandwidth_bytes_per_s: float  # as catalogued (time uses × bandwidth_efficiency)
    ridge_flop_per_byte: float
    effective_ridge_flop_per_byte: float
    effective_peak_flop_per_s: float  # peak × η: the compute roof of both phases
    decode: PhaseCost
    prefill: PhaseCost
    assumptions: Assumptions  # dispatch_overhead_s is the figure used
    warnings: tuple[Message, ...] = field(default=())

    @property
    def tpot_s(self) -> float:
        """Time per output token: one decode step."""
        return self.decode.latency_s

    @property
    def ttft_s(self) -> float:
        """Time to first token: the prefill of the prompt."""
        return self.prefill.latency_s

    def as_dict(self) -> dict[str, object]:
        """The public JSON shape (CLI `decode`, sweep columns): keys are a contract."""
        si = asdict(self)
        out = {k: si[k] for k in ID_KEYS} | display_metrics(si)
        out["assumptions"] = display_assumptions(self.assumptions)
        out["warnings"] = [str(w) for w in self.warnings]
        return out


def _labels(compute_bound, overhead_bound=None):
    """Bottleneck (or, with overhead_bound, regime) as text or a categorical column."""
    if np.ndim(compute_bound) == 0:
        if overhead_bound is None:
            return "compute" if compute_bound else "memory"
        return regime_of(bool(compute_bound), bool(overhead_bound))
    if overhead_bound is None:
        return categorical(np.asarray(compute_bound).astype(np.int8), ["memory", "compute"])
    return categorical(regime_codes(compute_bound, overhead_bound), REGIMES)


def _scaled(value, scale):
    """A float column scaled to its unit; counts (float arrays in a sweep) as int64."""
    if scale is not None:
        return value * scale
    if np.ndim(value) and np.asarray(value).dtype.kind == "f":
        return np.asarray(value).astype(np.int64)
    return value


def display_metrics(si: dict) -> dict:
    """SI terms (floats or arrays, plus batch_size and prompt) -> display keys with units."""
    d, p, batch = si["decode"], si["prefill"], si["batch_size"]
    out = {
        "tpot_ms": d["latency_s"] * 1e3,
        "tokens_per_s": 1.0 / d["latency_s"],
        "aggregate_tokens_per_s": batch / d["latency_s"],
        "ttft_ms": p["latency_s"] * 1e3,
        "prefill_tokens_per_s": si["prompt"] * batch / p["latency_s"],
    }
    for name, ph in (("decode", d), ("prefill", p)):
        out[f"{name}_bottleneck"] = _labels(ph["compute_bound"])
        out[f"{name}_regime"] = _labels(ph["compute_bound"], ph["overhead_bound"])
    out |= {key: _scaled(si[n], scale) for n, (key, scale, _) in DECODE_SCENARIO_COLUMNS.items()}
    for name, ph in (("decode", d), ("prefill", p)):
        out |= {f"{name}_{k}": ph[n] * s for n, (k, s, _) in DECODE_PHASE_COLUMNS.items()}
    return out


def display_assumptions(a: Assumptions) -> dict:
    """What the decode view assumed, in display units (a's dispatch: the figure used)."""
    out = {}
    for name, (key, scale, _) in DECODE_ASSUMPTION_COLUMNS.items():
        value = getattr(a, name)
        out[key] = None if value is None else value * scale
    return out | DECODE_FIXED_ASSUMPTIONS
