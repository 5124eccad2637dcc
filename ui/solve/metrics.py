"""The headline metric grid of a single solve and its table of every figure.

Values come from the engine's SolveResult (SI floats) and are only formatted here, through
ui.core.format (one prefix chosen per value: "543 µs", "7.56 / 148 TFLOP/s", "68.8 mJ")."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine import ENERGY_FORMULA, SolveResult
from ui.core.format import MISSING, fmt, fmt_bytes, fmt_scaled, pct
from ui.core.text import FLOP_NOTE

# Unit-suffixed engine names -> (suffix to drop, ui.core.format unit, factor to that unit)
SUFFIXES = (
    ("_flop_per_byte", "FLOP/byte", 1.0),
    ("_bytes_per_s", "B/s", 1.0),
    ("_tflops", "FLOP/s", 1e12),
    ("_per_s", "/s", 1.0),
    ("_bytes", "B", 1.0),
    ("_ms", "s", 1e-3),
    ("_us", "s", 1e-6),
    ("_s", "s", 1.0),
    ("_j", "J", 1.0),
)
FRACTIONS = {"overhead_share", "mfu", "efficiency", "activation_fraction"}
LABELS = {"flops": "FLOPs per batch", "bytes": "Bytes moved per batch", "mfu": "MFU"}


def solve_metrics(r: SolveResult) -> None:
    """Two rows of st.metric: bound, latency, throughput, MFU; AI, ridges, roof, energy."""
    convention = FLOP_NOTE[r.assumptions.flop_convention]
    c = st.columns(4)
    c[0].metric(
        "Bottleneck",
        r.bottleneck,
        help=f"{r.bottleneck}-bound: the larger of the compute and memory terms sets the latency",
    )
    c[1].metric(
        "Latency", fmt(r.latency_s, "s"), help="max(compute, memory) + fixed overhead, per batch"
    )
    c[2].metric(f"Throughput ({r.sample}s/s)", fmt(r.throughput_per_s))
    c[3].metric("MFU (% of peak)", pct(r.mfu), help="achieved FLOP/s ÷ full peak FLOP/s")
    c = st.columns(4)
    c[0].metric(
        "Arithmetic intensity (FLOP/byte)",
        fmt(r.arithmetic_intensity_flop_per_byte),
        help=convention,
    )
    c[1].metric(
        "Ridge, effective / peak (FLOP/byte)",
        f"{fmt(r.effective_ridge_flop_per_byte)} / {fmt(r.ridge_flop_per_byte)}",
        help="peak × efficiency ÷ bandwidth / peak ÷ bandwidth",
    )
    (achieved, roof), unit = fmt_scaled((r.achieved_flop_per_s, r.attainable_flop_per_s), "FLOP/s")
    c[2].metric(
        f"Achieved / roof ({unit})",
        f"{achieved} / {roof}",
        help="the gap between them is the fixed overhead",
    )
    c[3].metric("Energy per batch", fmt(r.energy_j, "J"), help=ENERGY_FORMULA)
    fit = "fits" if r.fits_in_memory else "does NOT fit"
    st.progress(
        min(1.0, r.weight_bytes / r.memory_capacity_bytes),
        text=f"Weights {fmt_bytes(r.weight_bytes)} of {fmt_bytes(r.memory_capacity_bytes)} "
        f"({fmt_bytes(r.memory_capacity_bytes, binary=True)}) capacity — {fit}",
    )


def readable(name: str, value: object) -> tuple[str, str]:
    """An engine field as (human label, ui.core.format text): ('latency_ms', 0.5426) ->
    ('Latency', '543 µs'); fractions as percentages; text as is; None as '—'."""
    if value is None:
        return name.replace("_", " ").capitalize(), MISSING
    if isinstance(value, bool) or not isinstance(value, int | float):
        return name.replace("_", " ").capitalize(), str(value)
    if name in FRACTIONS:
        return LABELS.get(name, name.replace("_", " ").capitalize()), pct(value)
    if name in ("flops", "bytes"):
        return LABELS[name], fmt(value, "FLOP" if name == "flops" else "B")
    for suffix, unit, factor in SUFFIXES:
        if name.endswith(suffix):
            label = name.removesuffix(suffix).replace("_", " ").capitalize()
            if unit == "/s":
                return f"{label} (per s)", fmt(value)
            if unit == "FLOP/byte":
                return f"{label} (FLOP/byte)", fmt(value)
            return label, fmt(value * factor, unit)
    return name.replace("_", " ").capitalize(), fmt(value)


def result_table(r: SolveResult) -> pd.DataFrame:
    """Every figure of the result as (quantity, value) rows, for reading (the CSV keeps the
    engine's unit-suffixed names and full precision)."""
    d = r.as_dict()
    items = [readable(k, v) for k, v in d.items() if k not in ("assumptions", "warnings")]
    items += [
        (f"Assumption: {label[0].lower()}{label[1:]}", text)
        for label, text in (readable(k, v) for k, v in d["assumptions"].items())
    ]
    unit = f"({r.sample}s/s)"
    items = [(k.replace("(per s)", unit), v) for k, v in items]
    capacity = fmt_bytes(r.memory_capacity_bytes, binary=True)
    items = [(k, f"{v} ({capacity})" if k == "Memory capacity" else v) for k, v in items]
    return pd.DataFrame(items, columns=["Quantity", "Value"])
