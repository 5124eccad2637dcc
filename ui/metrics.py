"""The headline metric grid of a single solve (labels carry the units; values come from the
engine's SolveResult and are only formatted here)."""

from __future__ import annotations

import streamlit as st

from engine import SolveResult
from ui.common import FLOP_NOTE, num


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
        "Latency",
        f"{num(r.latency_s * 1e3, 3)} ms",
        help="max(compute, memory) + fixed overhead, per batch",
    )
    c[2].metric(f"Throughput ({r.sample}s/s)", num(r.throughput_per_s))
    c[3].metric("MFU (% of peak)", f"{r.mfu:.1%}", help="achieved FLOP/s ÷ full peak FLOP/s")
    c = st.columns(4)
    c[0].metric(
        "Arithmetic intensity (FLOP/byte)",
        num(r.arithmetic_intensity_flop_per_byte, 3),
        help=convention,
    )
    c[1].metric(
        "Ridge, effective / peak (FLOP/byte)",
        f"{num(r.effective_ridge_flop_per_byte, 3)} / {num(r.ridge_flop_per_byte, 3)}",
        help="peak × efficiency ÷ bandwidth / peak ÷ bandwidth",
    )
    c[2].metric(
        "Achieved / roof (TFLOP/s)",
        f"{num(r.achieved_flop_per_s / 1e12, 3)} / {num(r.attainable_flop_per_s / 1e12, 3)}",
        help="the gap between them is the fixed overhead",
    )
    c[3].metric(
        "Energy per batch (mJ)", num(r.energy_j * 1e3, 3), help="TDP × (0.3 + 0.7·MFU) × latency"
    )
    fit = "fits" if r.fits_in_memory else "does NOT fit"
    st.progress(
        min(1.0, r.weight_bytes / r.memory_capacity_bytes),
        text=f"Weights {num(r.weight_bytes / 1e9, 3)} GB of "
        f"{num(r.memory_capacity_bytes / 1e9, 3)} GB "
        f"({num(r.memory_capacity_bytes / 2**30, 3)} GiB) capacity — {fit}",
    )


def result_table(r: SolveResult):
    """Every figure of the result as (quantity, value) rows, numbers formatted for reading."""
    import pandas as pd

    items = [
        (k, num(v, 6) if isinstance(v, float) else str(v))
        for k, v in r.as_dict().items()
        if k not in ("assumptions", "warnings")
    ]
    items += [
        (f"assumption: {k}", "—" if v is None else (num(v, 6) if isinstance(v, float) else str(v)))
        for k, v in r.as_dict()["assumptions"].items()
    ]
    return pd.DataFrame(items, columns=["quantity (unit in name)", "value"])
