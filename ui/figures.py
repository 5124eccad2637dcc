"""Plotly figure builders: the roofline with its fixed-overhead gap, and the latency split.

Pure functions (DataFrame in, Figure out), tested without a browser. The roofline follows
Williams et al. 2009: log-log, memory roof = bandwidth × intensity, compute roofs at peak and
at peak × efficiency. Each scenario shows its attainable point on the roof, its achieved point
below it, and the gap between the two (the fixed overhead), labelled in ms and share of latency.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.common import FLOP_NOTE

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
GAP_COLOR = "#7f7f7f"
MAX_GAP_LABELS = 12  # more points than this: the gap is labelled on hover only


def roof_table(rows: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """One roof per hardware from solve/sweep rows: peak, effective peak and bandwidth."""
    first = rows.drop_duplicates("hardware")
    return pd.DataFrame(
        {
            "hardware": first["hardware"].astype(str).to_numpy(),
            "name": [names.get(str(h), str(h)) for h in first["hardware"]],
            "peak_tflops": first["peak_tflops"].to_numpy(),
            "effective_peak_tflops": (first["peak_tflops"] * first["efficiency"]).to_numpy(),
            "bandwidth_tb_per_s": (first["peak_tflops"] / first["ridge_flop_per_byte"]).to_numpy(),
        }
    )


def _x_range(points: pd.DataFrame, roofs: pd.DataFrame) -> tuple[float, float]:
    ridges = roofs["peak_tflops"] / roofs["bandwidth_tb_per_s"]
    xs = np.concatenate([points["arithmetic_intensity_flop_per_byte"].to_numpy(), ridges])
    return float(xs.min()) / 8, float(xs.max()) * 8


def _roof_traces(fig: go.Figure, roofs: pd.DataFrame, x_lo: float, x_hi: float) -> None:
    for i, roof in enumerate(roofs.itertuples()):
        color, name = COLORS[i % len(COLORS)], html.escape(roof.name)
        ridge = roof.peak_tflops / roof.bandwidth_tb_per_s
        ridge_eff = roof.effective_peak_tflops / roof.bandwidth_tb_per_s
        fig.add_scatter(
            x=[x_lo, ridge],
            y=[roof.bandwidth_tb_per_s * x_lo, roof.peak_tflops],
            mode="lines",
            line={"color": color, "width": 2},
            name=f"Memory roof {name} ({roof.bandwidth_tb_per_s:.3g} TB/s)",
            hovertemplate="memory roof: %{y:.3g} TFLOP/s at %{x:.3g} FLOP/byte<extra></extra>",
        )
        fig.add_scatter(
            x=[ridge, x_hi],
            y=[roof.peak_tflops] * 2,
            mode="lines",
            line={"color": color, "width": 2},
            name=f"Compute roof {name} (peak {roof.peak_tflops:.4g} TFLOP/s)",
            hovertemplate="peak compute roof: %{y:.4g} TFLOP/s<extra></extra>",
        )
        fig.add_scatter(
            x=[ridge_eff, x_hi],
            y=[roof.effective_peak_tflops] * 2,
            mode="lines",
            line={"color": color, "width": 2, "dash": "dash"},
            name=f"Effective compute roof {name} ({roof.effective_peak_tflops:.4g} TFLOP/s)",
            hovertemplate="peak × efficiency: %{y:.4g} TFLOP/s<extra></extra>",
        )
        fig.add_scatter(
            x=[ridge, ridge_eff],
            y=[roof.peak_tflops, roof.effective_peak_tflops],
            mode="markers",
            marker={"symbol": "diamond", "size": 9, "color": color},
            name=f"Ridge points {name} ({ridge:.3g} / {ridge_eff:.3g} FLOP/byte)",
            hovertemplate="ridge: %{x:.4g} FLOP/byte<extra></extra>",
        )


def _hover(points: pd.DataFrame, convention: str) -> list[str]:
    note = FLOP_NOTE[convention]
    return [
        f"<b>{html.escape(str(p.label))}</b><br>{p.bottleneck}-bound<br>"
        f"AI {p.arithmetic_intensity_flop_per_byte:.4g} FLOP/byte<br>"
        f"roof {p.attainable_tflops:.4g} TFLOP/s · achieved {p.achieved_tflops:.4g} TFLOP/s<br>"
        f"latency {p.latency_ms:.4g} ms (fixed overhead {p.t_overhead_ms:.4g} ms, "
        f"{p.overhead_share:.0%})<br><i>{note}</i>"
        for p in points.itertuples()
    ]


def roofline_figure(
    points: pd.DataFrame, roofs: pd.DataFrame, convention: str, title: str = "Roofline"
) -> go.Figure:
    """The roofline chart.

    Args:
        points: one row per scenario with columns label, arithmetic_intensity_flop_per_byte,
            attainable_tflops, achieved_tflops, latency_ms, t_overhead_ms, overhead_share,
            bottleneck.
        roofs: `roof_table` output (one row per accelerator).
        convention: "catalog" or "mac2" (shown on the intensity axis and in hovers).
    """
    x_lo, x_hi = _x_range(points, roofs)
    fig = go.Figure()
    _roof_traces(fig, roofs, x_lo, x_hi)
    x = points["arithmetic_intensity_flop_per_byte"].to_numpy()
    top, low = points["attainable_tflops"].to_numpy(), points["achieved_tflops"].to_numpy()
    hover = _hover(points, convention)
    gap_x = np.column_stack([x, x, np.full_like(x, np.nan)]).ravel()
    gap_y = np.column_stack([top, low, np.full_like(x, np.nan)]).ravel()
    fig.add_scatter(
        x=gap_x,
        y=gap_y,
        mode="lines",
        name="Fixed-overhead gap",
        line={"color": GAP_COLOR, "width": 3, "dash": "dot"},
        hoverinfo="skip",
    )
    fig.add_scatter(
        x=x,
        y=top,
        mode="markers",
        name="Attainable (on the roof)",
        marker={"symbol": "circle-open", "size": 11, "color": "black"},
        hovertext=hover,
        hoverinfo="text",
    )
    fig.add_scatter(
        x=x,
        y=low,
        mode="markers",
        name="Achieved (with overhead)",
        marker={"size": 10, "color": "#ff7f0e"},
        hovertext=hover,
        hoverinfo="text",
    )
    if len(points) <= MAX_GAP_LABELS:
        for p in points.itertuples():
            fig.add_annotation(
                x=np.log10(p.arithmetic_intensity_flop_per_byte),
                y=np.log10(np.sqrt(p.attainable_tflops * p.achieved_tflops)),
                text=f"gap {p.t_overhead_ms:.3g} ms ({p.overhead_share:.0%})",
                showarrow=False,
                xanchor="left",
                xshift=8,
                font={"size": 11, "color": GAP_COLOR},
            )
    fig.update_xaxes(
        type="log", dtick=1, title=f"Arithmetic intensity (FLOP/byte) — {FLOP_NOTE[convention]}"
    )
    fig.update_yaxes(type="log", dtick=1, title="Performance (TFLOP/s)")
    fig.update_layout(
        title=title,
        height=620,
        legend={"orientation": "h", "y": -0.18, "font": {"size": 11}},
        margin={"l": 60, "r": 20, "t": 50, "b": 60},
    )
    return fig


def latency_breakdown_figure(
    t_compute_ms: float, t_memory_ms: float, t_overhead_ms: float
) -> go.Figure:
    """Latency = max(compute, memory) + fixed overhead, as a stacked bar beside the terms."""
    bound = "compute" if t_compute_ms > t_memory_ms else "memory"
    binding = max(t_compute_ms, t_memory_ms)
    total = binding + t_overhead_ms
    fig = go.Figure()
    fig.add_bar(
        y=["latency"],
        x=[binding],
        orientation="h",
        name=f"{bound} (binding)",
        marker_color="#1f77b4",
        text=[f"{binding:.3g} ms ({binding / total:.0%})"],
    )
    fig.add_bar(
        y=["latency"],
        x=[t_overhead_ms],
        orientation="h",
        name="fixed overhead",
        marker_color=GAP_COLOR,
        text=[f"{t_overhead_ms:.3g} ms ({t_overhead_ms / total:.0%})"],
    )
    fig.add_bar(
        y=["compute term", "memory term"],
        x=[t_compute_ms, t_memory_ms],
        orientation="h",
        name="terms (only the larger counts)",
        marker_color="#aec7e8",
        text=[f"{t_compute_ms:.3g} ms", f"{t_memory_ms:.3g} ms"],
    )
    fig.update_layout(
        barmode="stack",
        height=230,
        title=f"Latency split: {total:.4g} ms",
        xaxis_title="time (ms)",
        margin={"l": 110, "r": 20, "t": 40, "b": 40},
        legend={"orientation": "h", "y": -0.45},
    )
    return fig
