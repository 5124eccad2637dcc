"""LLM serving model (SPEC.md §2): KV cache, the decode step and prefill on one accelerator.

A decode step reads every weight and each sequence's whole KV cache once per generated token,
so at small batch it is memory-bound; prefill pushes the prompt's S tokens through in one pass
and turns compute-bound (Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023).
The kernel `llm_terms` works on floats or numpy arrays through the shared `roofline_terms`, so
the scalar `decode` and the vectorised `decode_sweep` (engine/llm_sweep.py) agree.

Modelling choices, echoed in every result's `assumptions`: activation traffic is neglected,
ACTIVATION_BYTES_PER_TOKEN = 0 (SPEC §2's "small activations": Llama-3.1-8B's residual stream
is 2·32·4096·2 B = 0.5 MB per token against 16 GB of weights; §1's activation_fraction is not
used); FLOPs come from the shapes at 2 per multiply-accumulate ("mac2"); prefill's attention
FLOPs are not halved for the causal mask (SPEC §2 as written).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from engine.api import MAX_BATCH
from engine.roofline import roofline_terms
from engine.specs import BYTES_PER_PARAM, PRECISIONS, Assumptions
from engine.sweep import categorical

MAX_CONTEXT = 10_000_000  # tokens; the longest published context window (Llama 4 Scout, 10M)
ACTIVATION_BYTES_PER_TOKEN = 0.0  # see the module docstring
# The scenario's identity: the first keys of `DecodeResult.as_dict`.
ID_KEYS = (
    "model",
    "hardware",
    "batch_size",
    "context",
    "prompt",
    "precision",
    "kv_precision",
    "peak_precision",
)


def check_tokens(value: object, name: str) -> int:
    """A whole number of tokens from 1 to MAX_CONTEXT, or ValueError naming `name`."""
    return int(check_token_list([value], name)[0])


def check_token_list(values: list, name: str) -> np.ndarray:
    """Whole numbers of tokens from 1 to MAX_CONTEXT (as float64), or ValueError naming `name`."""
    raw = np.asarray(values).ravel()
    if raw.dtype.kind not in "iuf":  # rejects text, None, booleans and mixtures
        raise ValueError(f"{name}: expected whole numbers of tokens, got {values!r}"[:200])
    x = raw.astype(float)
    bad = ~np.isfinite(x) | (x != np.round(x)) | (x < 1) | (x > MAX_CONTEXT)
    if bad.any():
        raise ValueError(
            f"{name}: expected whole numbers of tokens from 1 to {MAX_CONTEXT:,}, "
            f"got {raw[int(np.argmax(bad))].item()!r}"
        )
    return x


def check_kv_precision(kv_precision: str | None, precision: str) -> str:
    """The KV-cache precision (the weight precision when None), or ValueError listing choices."""
    name = precision if kv_precision is None else str(kv_precision).strip().lower()
    if name not in BYTES_PER_PARAM:
        raise ValueError(f"unknown KV precision {kv_precision!r} (known: {', '.join(PRECISIONS)})")
    return name


def head_dim_of(model) -> float:
    """Per-head width: the catalogued head_dim, else hidden / heads (SPEC §2)."""
    return float(model.head_dim) if model.head_dim else model.hidden / model.heads


def kv_bytes_per_token(model, kv_precision: str) -> float:
    """KV-cache bytes per token of one sequence: 2 (K and V) · layers · kv_heads · head_dim · b_kv.

    Grouped-query attention caches kv_heads heads, not heads (Ainslie et al., GQA, 2023).
    """
    return 2.0 * model.layers * model.kv_heads * head_dim_of(model) * BYTES_PER_PARAM[kv_precision]


def largest_fitting(memory_of, per_unit_bytes, room_bytes, capacity_bytes, limit):
    """Largest whole n in [0, limit] with memory_of(n) <= capacity (arrays or floats).

    The estimate floor(room / per_unit) is corrected by one step either way with the very
    expression `fits_in_memory` uses, so n fits and n + 1 does not, despite rounding.
    """
    n = np.clip(np.floor(room_bytes / per_unit_bytes), 0, limit)
    up = np.minimum(n + 1, limit)
    n = np.where(memory_of(up) <= capacity_bytes, up, n)
    return np.where((n > 0) & (memory_of(n) > capacity_bytes), n - 1, n)


def _phase(flops, bytes_moved, roof: dict) -> dict:
    r = roofline_terms(flops=flops, bytes_moved=bytes_moved, **roof)
    return {
        "flops": flops,
        "bytes": bytes_moved,
        "t_compute_s": r["t_compute_s"],
        "t_memory_s": r["t_memory_s"],
        "t_overhead_s": roof["overhead_s"],
        "latency_s": r["latency_s"],
        "arithmetic_intensity_flop_per_byte": r["intensity"],
        "attainable_flop_per_s": r["attainable"],
        "achieved_flop_per_s": r["achieved"],
        "mfu": r["mfu"],
        "compute_bound": r["compute_bound"],
    }


def _limits(weight, kv_tok, batch, context, capacity) -> dict:
    # The same association as `kv` in llm_terms, so these agree with fits_in_memory exactly.
    room = capacity - weight
    return {
        "max_batch_at_context": largest_fitting(
            lambda n: weight + kv_tok * context * n, kv_tok * context, room, capacity, MAX_BATCH
        ),
        "max_context_at_batch": largest_fitting(
            lambda n: weight + kv_tok * n * batch, kv_tok * batch, room, capacity, MAX_CONTEXT
        ),
    }


def llm_terms(*, model: dict, batch, context, prompt, peak, bandwidth, capacity, **roof) -> dict:
    """SPEC §2 for one scenario or a broadcast grid of them; SI floats or arrays throughout.

    Args:
        model: params, params_active, layers, heads, head_dim, kv_bytes_per_token,
            bytes_per_param (floats or arrays).
        batch, context, prompt: sequences, KV length at the decode step, prompt tokens S.
        peak, bandwidth, capacity: FLOP/s, byte/s and bytes of the accelerator.
        **roof: efficiency, overhead_s (d + N·τ) and tdp_w, passed to `roofline_terms`.

    Returns:
        The memory and capacity figures, ridges, and a dict per phase ("decode", "prefill").
    """
    m = model
    kv_tok = m["kv_bytes_per_token"]
    weight = m["params"] * m["bytes_per_param"]  # P·b; MoE: all experts are read
    kv = kv_tok * context * batch
    attention = 4.0 * m["layers"] * m["heads"] * m["head_dim"]  # QKᵀ and AV per (query, key)
    roof = {"peak": peak, "bandwidth": bandwidth, **roof}
    decode_flops = 2.0 * m["params_active"] * batch + attention * context * batch
    prefill_flops = (2.0 * m["params_active"] * prompt + attention * prompt * prompt) * batch
    prefill_bytes = weight + kv_tok * prompt * batch + ACTIVATION_BYTES_PER_TOKEN * prompt * batch
    memory = weight + kv
    return {
        "weight_bytes": weight,
        "kv_cache_bytes_per_token": kv_tok,
        "kv_cache_bytes": kv,
        "memory_required_bytes": memory,
        "memory_capacity_bytes": capacity,
        "fits_in_memory": memory <= capacity,
        **_limits(weight, kv_tok, batch, context, capacity),
        "peak_flop_per_s": peak,
        "ridge_flop_per_byte": peak / bandwidth,
        "effective_ridge_flop_per_byte": peak * roof["efficiency"] / bandwidth,
        "decode": _phase(decode_flops, memory + ACTIVATION_BYTES_PER_TOKEN * batch, roof),
        "prefill": _phase(prefill_flops, prefill_bytes, roof),
    }


def _int(x):
    return int(x) if np.ndim(x) == 0 else np.asarray(x).astype(np.int64)


def _bound(compute_bound):
    if np.ndim(compute_bound) == 0:
        return "compute" if compute_bound else "memory"
    return categorical(np.asarray(compute_bound).astype(np.int8), ["memory", "compute"])


def display_metrics(si: dict) -> dict:
    """SI terms (floats or arrays, plus batch_size and prompt) -> display keys with units.

    The one place where units are scaled, shared by `DecodeResult.as_dict` and the sweep.
    """
    d, p, batch = si["decode"], si["prefill"], si["batch_size"]
    out = {
        "tpot_ms": d["latency_s"] * 1e3,
        "tokens_per_s": 1.0 / d["latency_s"],
        "aggregate_tokens_per_s": batch / d["latency_s"],
        "ttft_ms": p["latency_s"] * 1e3,
        "prefill_tokens_per_s": si["prompt"] * batch / p["latency_s"],
        "decode_bottleneck": _bound(d["compute_bound"]),
        "prefill_bottleneck": _bound(p["compute_bound"]),
        "kv_cache_bytes_per_token": si["kv_cache_bytes_per_token"],
        "kv_cache_bytes": si["kv_cache_bytes"],
        "weight_bytes": si["weight_bytes"],
        "memory_required_bytes": si["memory_required_bytes"],
        "memory_capacity_bytes": si["memory_capacity_bytes"],
        "fits_in_memory": si["fits_in_memory"],
        "max_batch_at_context": _int(si["max_batch_at_context"]),
        "max_context_at_batch": _int(si["max_context_at_batch"]),
        "peak_tflops": si["peak_flop_per_s"] / 1e12,
        "ridge_flop_per_byte": si["ridge_flop_per_byte"],
        "effective_ridge_flop_per_byte": si["effective_ridge_flop_per_byte"],
    }
    return out | _phase_display("decode", d) | _phase_display("prefill", p)


def _phase_display(name: str, ph: dict) -> dict:
    gap = ph["attainable_flop_per_s"] - ph["achieved_flop_per_s"]  # the fixed-overhead gap
    return {
        f"{name}_flops": ph["flops"],
        f"{name}_bytes": ph["bytes"],
        f"{name}_arithmetic_intensity_flop_per_byte": ph["arithmetic_intensity_flop_per_byte"],
        f"{name}_t_compute_ms": ph["t_compute_s"] * 1e3,
        f"{name}_t_memory_ms": ph["t_memory_s"] * 1e3,
        f"{name}_t_overhead_ms": ph["t_overhead_s"] * 1e3,
        f"{name}_overhead_share": ph["t_overhead_s"] / ph["latency_s"],
        f"{name}_attainable_tflops": ph["attainable_flop_per_s"] / 1e12,
        f"{name}_achieved_tflops": ph["achieved_flop_per_s"] / 1e12,
        f"{name}_overhead_gap_tflops": gap / 1e12,
        f"{name}_mfu": ph["mfu"],
    }


def display_assumptions(a: Assumptions) -> dict:
    """What the LLM model assumed, in display units (a's dispatch: the figure used, or None)."""
    d = a.dispatch_overhead_s
    return {
        "efficiency": a.efficiency,
        "layer_overhead_us": a.layer_overhead_s * 1e6,
        "dispatch_overhead_ms": None if d is None else d * 1e3,
        "activation_bytes_per_token": ACTIVATION_BYTES_PER_TOKEN,
        "flop_convention": "mac2",  # FLOPs from the shapes, 2 per multiply-accumulate
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
    arithmetic_intensity_flop_per_byte: float
    attainable_flop_per_s: float
    achieved_flop_per_s: float
    mfu: float
    compute_bound: bool

    @property
    def bottleneck(self) -> str:
        return "compute" if self.compute_bound else "memory"


@dataclass(frozen=True, slots=True)
class DecodeResult:
    """One LLM × accelerator × batch × context scenario (SPEC §2); `as_dict` is the CLI JSON."""

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
    fits_in_memory: bool
    max_batch_at_context: int  # 0 when not even one sequence fits; capped at MAX_BATCH
    max_context_at_batch: int  # 0 when not even one token fits; capped at MAX_CONTEXT
    peak_flop_per_s: float
    ridge_flop_per_byte: float
    effective_ridge_flop_per_byte: float
    decode: PhaseCost
    prefill: PhaseCost
    assumptions: Assumptions  # dispatch_overhead_s is the figure used
    warnings: tuple[str, ...] = field(default=())

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
        out["warnings"] = list(self.warnings)
        return out
