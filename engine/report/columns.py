"""The single-model solve's display columns: SI result -> JSON key / DataFrame column -> CSV.

One table for the results and one for the echoed assumptions, shared by `SolveResult.as_dict`,
`engine.sweep` and `engine.to_csv`, so each quantity is named and scaled in exactly one place
(docs/model.md). The decode view's tables are in engine/llm_columns.py.
"""

from __future__ import annotations

from engine.assumptions import Assumptions

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


# Assumption field -> (display key, scale to its unit, CSV header): what the solve echoes.
ASSUMPTION_COLUMNS: dict[str, tuple[str, float, str]] = {
    "efficiency": ("efficiency", 1.0, "compute_efficiency_fraction"),
    "layer_overhead_s": ("layer_overhead_us", 1e6, "layer_overhead_us"),
    "dispatch_overhead_s": ("dispatch_overhead_ms", 1e3, "dispatch_overhead_ms"),
    "activation_fraction": ("activation_fraction", 1.0, "activation_traffic_fraction"),
    "flop_convention": ("flop_convention", None, "flop_convention"),
}


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
