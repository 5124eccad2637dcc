"""Every result column of the engine, named once: SI term -> JSON key / column -> CSV header.

The tables of the single-model solve (`SolveResult.as_dict`, `engine.sweep`), the tutorial's
decode view (`DecodeResult.as_dict`, `engine.decode_sweep`) and the serving model's unitless
metrics, and the echoed assumptions (from the one registry, engine/assumptions.py), so a
quantity is named, scaled and given its CSV header in exactly one place (docs/model.md).
"""

from __future__ import annotations

from engine.assumptions import REGISTRY, Assumptions

# SI result field -> (display key: JSON and DataFrame column, scale to its unit, CSV header).
# The one mapping shared by `SolveResult.as_dict`, `engine.sweep` and `engine.to_csv`.
SOLVE_COLUMNS: dict[str, tuple[str, float, str]] = {
    "latency_s": ("latency_ms", 1e3, "latency_ms"),
    "t_compute_s": ("t_compute_ms", 1e3, "t_compute_ms"),
    "t_memory_s": ("t_memory_ms", 1e3, "t_memory_ms"),
    "t_overhead_s": ("t_overhead_ms", 1e3, "t_overhead_ms"),
    "overhead_share": ("overhead_share", 1.0, "overhead_share_fraction"),
    "throughput_per_s": ("throughput_per_s", 1.0, "throughput_per_s"),
    "flops": ("flops", 1.0, "work_flop_per_batch"),
    "bytes": ("bytes", 1.0, "traffic_bytes_per_batch"),
    "arithmetic_intensity_flop_per_byte": (
        "arithmetic_intensity_flop_per_byte",
        1.0,
        "arithmetic_intensity_flop_per_byte",
    ),
    "ridge_flop_per_byte": ("ridge_flop_per_byte", 1.0, "ridge_flop_per_byte"),
    "effective_ridge_flop_per_byte": (
        "effective_ridge_flop_per_byte",
        1.0,
        "effective_ridge_flop_per_byte",
    ),
    "peak_flop_per_s": ("peak_tflops", 1e-12, "peak_tflops"),
    "effective_peak_flop_per_s": ("effective_peak_tflops", 1e-12, "effective_peak_tflops"),
    "memory_bandwidth_bytes_per_s": (
        "memory_bandwidth_bytes_per_s",
        1.0,
        "memory_bandwidth_bytes_per_s",
    ),
    "attainable_flop_per_s": ("attainable_tflops", 1e-12, "attainable_tflops"),
    "achieved_flop_per_s": ("achieved_tflops", 1e-12, "achieved_tflops"),
    "overhead_gap_flop_per_s": ("overhead_gap_tflops", 1e-12, "overhead_gap_tflops"),
    "mfu": ("mfu", 1.0, "mfu_fraction"),
    "energy_j": ("energy_j", 1.0, "energy_j"),
    "weight_bytes": ("weight_bytes", 1.0, "weight_bytes"),
    "memory_capacity_bytes": ("memory_capacity_bytes", 1.0, "memory_capacity_bytes"),
}


# Assumption field -> (display key, scale to its unit, CSV header): what the solve echoes. From
# the one registry (engine/assumptions.py), so names, units and headers agree everywhere.
def _assumption_columns(names: tuple[str, ...]) -> dict[str, tuple[str, float | None, str]]:
    by_name = {a.name: a for a in REGISTRY}
    chosen = [by_name[name] for name in names]
    return {a.field: (a.name, None if a.choices else float(a.scale), a.csv) for a in chosen}


ASSUMPTION_COLUMNS = _assumption_columns(
    (
        "efficiency",
        "layer_overhead_us",
        "dispatch_overhead_ms",
        "activation_fraction",
        "flop_convention",
    )
)

# ----------------------------------------------------------------- the decode view (tutorial)
ACTIVATION_BYTES_PER_TOKEN = 0.0  # the decode view neglects activations (roofline/decode.py)
PHASES = ("decode", "prefill")
# The scenario's identity, first in `DecodeResult.as_dict`: key -> CSV header.
DECODE_ID_COLUMNS: dict[str, str] = {
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
DECODE_SCENARIO_COLUMNS: dict[str, tuple[str, float | None, str]] = {
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
    "effective_peak_flop_per_s": ("effective_peak_tflops", 1e-12, "effective_peak_tflops"),
}
# Per phase: SI term -> (key suffix, scale, CSV suffix); "{per}" is "step" (decode) or
# "batch" (prefill: the whole prompt of every sequence).
DECODE_PHASE_COLUMNS: dict[str, tuple[str, float, str]] = {
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
DECODE_PHASE_PER = {"decode": "step", "prefill": "batch"}
# Assumption field -> (display key, scale, CSV header): what the decode view uses and echoes.
DECODE_ASSUMPTION_COLUMNS = _assumption_columns(
    (
        "efficiency",
        "bandwidth_efficiency",
        "memory_reserve",
        "layer_overhead_us",
        "dispatch_overhead_ms",
    )
)
DECODE_FIXED_ASSUMPTIONS = {  # modelling choices, echoed with the assumptions (CSV: same names)
    "activation_bytes_per_token": ACTIVATION_BYTES_PER_TOKEN,
    "flop_convention": "mac2",  # FLOPs from the shapes, 2 per multiply-accumulate
}
DECODE_DERIVED_CSV = {  # display keys computed below whose names already carry their unit
    "tpot_ms": "tpot_ms",
    "tokens_per_s": "tokens_per_s",
    "aggregate_tokens_per_s": "aggregate_tokens_per_s",
    "ttft_ms": "ttft_ms",
    "prefill_tokens_per_s": "prefill_tokens_per_s",
    **{f"{p}_{what}": f"{p}_{what}" for p in PHASES for what in ("bottleneck", "regime")},
}


# The training planner's unitless columns (its frames keep their JSON keys): CSV headers that say
# they are fractions of peak, as the solve's `mfu_fraction`.
TRAIN_CSV_HEADERS = {
    "hfu": "hfu_fraction",
    "published_mfu_ceiling": "published_mfu_ceiling_fraction",
}


def decode_csv_headers() -> dict[str, str]:
    """Display key -> CSV header for every column of a decode sweep."""
    out = dict(DECODE_ID_COLUMNS) | DECODE_DERIVED_CSV
    out |= {key: csv for key, _, csv in DECODE_SCENARIO_COLUMNS.values()}
    for p in PHASES:
        per = DECODE_PHASE_PER[p]
        out |= {f"{p}_{k}": f"{p}_{c.format(per=per)}" for k, _, c in DECODE_PHASE_COLUMNS.values()}
    out |= {key: csv for key, _, csv in DECODE_ASSUMPTION_COLUMNS.values()}
    return out | {k: k for k in DECODE_FIXED_ASSUMPTIONS}


def assumption_values(a: Assumptions, columns: dict = ASSUMPTION_COLUMNS) -> dict[str, object]:
    """The assumptions in display units (None stays None; text is not scaled)."""
    out = {}
    for name, (key, scale, _) in columns.items():
        value = getattr(a, name)
        out[key] = value if value is None or scale is None else value * scale
    return out


def display(si: dict) -> dict:
    """SI terms (floats or arrays) -> the display keys and units of SOLVE_COLUMNS, in order."""
    return {key: si[name] * scale for name, (key, scale, _) in SOLVE_COLUMNS.items()}
