"""Figures of the training planner: the chosen configuration's step time and memory per GPU,
and the scaling curves (docs/model.md, "Training step").

Pure builders over `engine.train(...).as_dict()` (`r`) and `engine.train_search` rows (no
streamlit, no physics): every bar segment is one of the engine's terms, which add up to its
step time or memory per GPU; numbers in labels and hover text come from ui.core.format. A
configuration that does not fit is drawn as what it needs against the usable-memory line, never
as a step time.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts.theme import COLORS, GAP_COLOR, legend_below, log_axis, wrap_title
from ui.core.format import fmt, fmt_all, pct

STEP_PARTS = (  # (label, the engine's key, colour)
    ("compute", "compute_s", COLORS[2]),
    ("tensor-parallel communication", "comm_tp_s", COLORS[4]),
    ("context-parallel communication", "comm_cp_s", COLORS[5]),
    ("expert-parallel communication", "comm_ep_s", COLORS[6]),
    ("pipeline sends", "comm_pp_s", COLORS[7]),
    ("data-parallel communication (exposed)", "comm_dp_s", COLORS[1]),
    ("pipeline bubble", "bubble_s", COLORS[3]),
    ("overhead", "overhead_s", GAP_COLOR),
    ("optimizer step", "optimizer_s", COLORS[0]),
)
MEMORY_PARTS = (
    ("weights", "weight_bytes_per_gpu", COLORS[0]),
    ("gradients", "gradient_bytes_per_gpu", COLORS[2]),
    ("optimizer state", "optimizer_bytes_per_gpu", COLORS[3]),
    ("activations", "activation_bytes_per_gpu", COLORS[4]),
)
LIMIT_COLOR = "#d62728"


def config_text(r: Mapping) -> str:
    """'tp 8 · pp 4 · cp 1 · vp 5 · ep 1 · dp 2 · micro-batch 1 · ZeRO 1 · selective'."""
    parts = [f"{k} {int(r[k])}" for k in ("tp", "pp", "cp", "vp", "ep", "dp")]
    return " · ".join(
        [
            *parts,
            f"micro-batch {int(r['micro_batch_size'])}",
            f"ZeRO {int(r['zero'])}",
            f"recompute {r['recompute']}",
        ]
    )


def _bar(value: float, label: str, color: str, text: str, y: object) -> dict:
    return {
        "type": "bar",
        "orientation": "h",
        "x": [value],
        "y": [y],
        "name": label,
        "marker": {"color": color},
        "text": [text],
        "textposition": "inside",
        "hovertext": [text],
        "hoverinfo": "text",
    }


def step_figure(r: Mapping) -> go.Figure:
    """One stacked bar: the step time split into the engine's terms (they add up to it)."""
    total = float(r["step_time_s"])
    traces = []
    for label, key, color in STEP_PARTS:
        value = float(r[key])
        if value > 0:
            text = f"{label}: {fmt(value, 's')} ({pct(value / total)})"
            traces.append(_bar(value, label, color, text, 0))
    hidden = float(r["comm_dp_total_s"]) - float(r["comm_dp_s"])
    note = f", {fmt(hidden, 's')} of data-parallel traffic hidden" if hidden > 0 else ""
    layout = {
        "barmode": "stack",
        "height": 300,
        "title": wrap_title(f"Step time: {fmt(total, 's')}{note}"),
        "xaxis": {"title": {"text": "Seconds per step"}, "rangemode": "tozero"},
        "yaxis": {"showticklabels": False, "range": [-0.6, 0.6]},
        "uniformtext": {"minsize": 10, "mode": "hide"},
        "legend": legend_below() | {"traceorder": "normal"},
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
    }
    return go.Figure(data=traces, layout=layout, _validate=False)


def memory_figure(r: Mapping, capacity_bytes: float) -> go.Figure:
    """One stacked bar per GPU (weights, gradients, optimizer state, activations) against the
    usable memory (capacity less the reserve) and the capacity."""
    need, usable = float(r["memory_per_gpu_bytes"]), float(r["usable_memory_bytes"])
    traces = []
    for label, key, color in MEMORY_PARTS:
        value = float(r[key])
        if value > 0:
            text = f"{label}: {fmt(value, 'B')} ({pct(value / need)})"
            traces.append(_bar(value / 1e9, label, color, text, 0))
    top = max(need, capacity_bytes) / 1e9 * 1.08
    for x, name, color, dash in (
        (usable, f"usable: {fmt(usable, 'B')}", LIMIT_COLOR, "dash"),
        (capacity_bytes, f"capacity: {fmt(capacity_bytes, 'B')}", GAP_COLOR, "dot"),
    ):
        traces.append(
            {
                "type": "scatter",
                "x": [x / 1e9, x / 1e9],
                "y": [-0.5, 0.5],
                "mode": "lines",
                "name": name,
                "line": {"color": color, "width": 2.5, "dash": dash},
                "hovertemplate": f"{name}<extra></extra>",
            }
        )
    verdict = (
        f"fits: {fmt(need, 'B')} of {fmt(usable, 'B')} usable"
        if r["fits_in_memory"]
        else f"does NOT fit: {fmt(need, 'B')} needed, {fmt(usable, 'B')} usable"
    )
    layout = {
        "barmode": "stack",
        "height": 300,
        "title": wrap_title(f"Memory per GPU: {verdict}"),
        "xaxis": {"title": {"text": "GB per GPU"}, "range": [0, top]},
        "yaxis": {"showticklabels": False, "range": [-0.6, 0.6]},
        "uniformtext": {"minsize": 10, "mode": "hide"},
        "legend": legend_below() | {"traceorder": "normal"},
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
    }
    return go.Figure(data=traces, layout=layout, _validate=False)


def scaling_figure(best: pd.DataFrame, column: str, band: float | None) -> go.Figure:
    """The best configuration per GPU count: tokens/s (log) or MFU against GPUs (log), with
    the profile's leave-one-out error as a band (none drawn when not measured)."""
    gpus = best["gpus"].to_numpy(dtype=float)
    y = best[column].to_numpy(dtype=float) * (100.0 if column == "mfu" else 1.0)
    unit = "%" if column == "mfu" else "tokens/s"
    title = "MFU (model FLOPs utilisation)" if column == "mfu" else "Training throughput"
    configs = [config_text(row) for _, row in best.iterrows()]
    hover = [
        f"{int(g):,} GPUs: {v}<br>{html.escape(c)}"
        for g, v, c in zip(gpus, fmt_all(y, unit), configs, strict=True)
    ]
    traces = []
    if band is not None and len(y):
        lo, hi = y * (1 - band / 100), y * (1 + band / 100)
        traces.append(
            {
                "type": "scatter",
                "x": [*gpus, *gpus[::-1]],
                "y": [*hi, *lo[::-1]],
                "fill": "toself",
                "fillcolor": "rgba(31, 119, 180, 0.15)",
                "line": {"width": 0},
                "mode": "lines",
                "name": f"± {pct(band / 100)} (leave-one-out error)",
                "hoverinfo": "skip",
            }
        )
    traces.append(
        {
            "type": "scatter",
            "x": list(gpus),
            "y": list(y),
            "mode": "lines+markers",
            "name": "best configuration per GPU count",
            "line": {"color": COLORS[0], "width": 2},
            "marker": {"size": 9, "color": COLORS[0]},
            "hovertext": hover,
            "hoverinfo": "text",
        }
    )
    y_axis = (
        {"title": {"text": "MFU (%)"}, "rangemode": "tozero"}
        if column == "mfu"
        else log_axis("Tokens/s (all GPUs)", [v for v in y if np.isfinite(v) and v > 0])
    )
    layout = {
        "title": wrap_title(html.escape(title)),
        "height": 420,
        "xaxis": log_axis("GPUs", gpus),
        "yaxis": y_axis,
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "hovermode": "closest",
    }
    return go.Figure(data=traces, layout=layout, _validate=False)
