"""The decode view's display columns: SI terms -> JSON keys / DataFrame columns -> CSV headers.

One table per kind of column, shared by `DecodeResult.as_dict`, `engine.decode_sweep` and
`engine.to_csv`, so a quantity is named and scaled in exactly one place (docs/model.md,
"LLM decode"). Values may be floats or numpy arrays (the sweep passes whole columns).
"""

from __future__ import annotations

import numpy as np

from engine.assumptions import Assumptions
from engine.roofline.solve import REGIMES, regime_codes, regime_of
from engine.roofline.sweep import categorical

ACTIVATION_BYTES_PER_TOKEN = 0.0  # activations are neglected (engine/llm.py's docstring)
PHASES = ("decode", "prefill")
# The scenario's identity, first in `DecodeResult.as_dict`: key -> CSV header.
ID_COLUMNS: dict[str, str] = {
    "model": "model",
    "hardware": "hardware",
    "batch_size": "batch_size",
    "context": "context_tokens",
    "prompt": "prompt_tokens",
    "precision": "precision",
    "kv_precision": "kv_precision",
    "peak_precision": "peak_precision",
}
# SI term -> (display key, scale to its unit, CSV header); a scale of None: not a float.
SCENARIO_COLUMNS: dict[str, tuple[str, float | None, str]] = {
    "kv_cache_bytes_per_token": ("kv_cache_bytes_per_token", 1.0, "kv_cache_bytes_per_token"),
    "kv_cache_bytes": ("kv_cache_bytes", 1.0, "kv_cache_bytes"),
    "weight_bytes": ("weight_bytes", 1.0, "weight_bytes"),
    "memory_required_bytes": ("memory_required_bytes", 1.0, "memory_required_bytes"),
    "memory_capacity_bytes": ("memory_capacity_bytes", 1.0, "memory_capacity_bytes"),
    "usable_memory_bytes": ("usable_memory_bytes", 1.0, "usable_memory_bytes"),
    "fits_in_memory": ("fits_in_memory", None, "fits_in_memory"),
    "max_batch_at_context": ("max_batch_at_context", None, "max_batch_at_context"),
    "max_context_at_batch": ("max_context_at_batch", None, "max_context_at_batch_tokens"),
    "peak_flop_per_s": ("peak_tflops", 1e-12, "peak_tflops"),
    "memory_bandwidth_bytes_per_s": (
        "memory_bandwidth_bytes_per_s",
        1.0,
        "memory_bandwidth_bytes_per_s",
    ),
    "ridge_flop_per_byte": ("ridge_flop_per_byte", 1.0, "ridge_flop_per_byte"),
    "effective_ridge_flop_per_byte": (
        "effective_ridge_flop_per_byte",
        1.0,
        "effective_ridge_flop_per_byte",
    ),
}
# Per phase: SI term -> (key suffix, scale, CSV suffix); "{per}" is "step" (decode) or
# "batch" (prefill: the whole prompt of every sequence).
PHASE_COLUMNS: dict[str, tuple[str, float, str]] = {
    "flops": ("flops", 1.0, "work_flop_per_{per}"),
    "bytes": ("bytes", 1.0, "traffic_bytes_per_{per}"),
    "arithmetic_intensity_flop_per_byte": (
        "arithmetic_intensity_flop_per_byte",
        1.0,
        "arithmetic_intensity_flop_per_byte",
    ),
    "t_compute_s": ("t_compute_ms", 1e3, "t_compute_ms"),
    "t_memory_s": ("t_memory_ms", 1e3, "t_memory_ms"),
    "t_overhead_s": ("t_overhead_ms", 1e3, "t_overhead_ms"),
    "overhead_share": ("overhead_share", 1.0, "overhead_share_fraction"),
    "attainable_flop_per_s": ("attainable_tflops", 1e-12, "attainable_tflops"),
    "achieved_flop_per_s": ("achieved_tflops", 1e-12, "achieved_tflops"),
    "overhead_gap_flop_per_s": ("overhead_gap_tflops", 1e-12, "overhead_gap_tflops"),
    "mfu": ("mfu", 1.0, "mfu_fraction"),
}
PHASE_PER = {"decode": "step", "prefill": "batch"}
# Assumption field -> (display key, scale, CSV header): what the decode view uses and echoes.
ASSUMPTION_COLUMNS: dict[str, tuple[str, float, str]] = {
    "efficiency": ("efficiency", 1.0, "compute_efficiency_fraction"),
    "bandwidth_efficiency": ("bandwidth_efficiency", 1.0, "bandwidth_efficiency_fraction"),
    "memory_reserve": ("memory_reserve", 1.0, "memory_reserve_fraction"),
    "layer_overhead_s": ("layer_overhead_us", 1e6, "layer_overhead_us"),
    "dispatch_overhead_s": ("dispatch_overhead_ms", 1e3, "dispatch_overhead_ms"),
}
FIXED_ASSUMPTIONS = {  # modelling choices, echoed with the assumptions (CSV: same names)
    "activation_bytes_per_token": ACTIVATION_BYTES_PER_TOKEN,
    "flop_convention": "mac2",  # FLOPs from the shapes, 2 per multiply-accumulate
}
DERIVED_CSV = {  # display keys computed below whose names already carry their unit
    "tpot_ms": "tpot_ms",
    "tokens_per_s": "tokens_per_s",
    "aggregate_tokens_per_s": "aggregate_tokens_per_s",
    "ttft_ms": "ttft_ms",
    "prefill_tokens_per_s": "prefill_tokens_per_s",
    **{f"{p}_{what}": f"{p}_{what}" for p in PHASES for what in ("bottleneck", "regime")},
}


def csv_headers() -> dict[str, str]:
    """Display key -> CSV header for every column of a decode sweep."""
    out = dict(ID_COLUMNS) | DERIVED_CSV
    out |= {key: csv for key, _, csv in SCENARIO_COLUMNS.values()}
    for p in PHASES:
        per = PHASE_PER[p]
        out |= {f"{p}_{k}": f"{p}_{c.format(per=per)}" for k, _, c in PHASE_COLUMNS.values()}
    out |= {key: csv for key, _, csv in ASSUMPTION_COLUMNS.values()}
    return out | {k: k for k in FIXED_ASSUMPTIONS}


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
    out |= {key: _scaled(si[n], scale) for n, (key, scale, _) in SCENARIO_COLUMNS.items()}
    for name, ph in (("decode", d), ("prefill", p)):
        out |= {f"{name}_{k}": ph[n] * s for n, (k, s, _) in PHASE_COLUMNS.items()}
    return out


def display_assumptions(a: Assumptions) -> dict:
    """What the decode view assumed, in display units (a's dispatch: the figure used)."""
    out = {}
    for name, (key, scale, _) in ASSUMPTION_COLUMNS.items():
        value = getattr(a, name)
        out[key] = None if value is None else value * scale
    return out | FIXED_ASSUMPTIONS
