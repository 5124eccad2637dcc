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


POINT_COLUMNS = (
    "label",
    "bottleneck",
    "arithmetic_intensity_flop_per_byte",
    "attainable_tflops",
    "achieved_tflops",
    "latency_ms",
    "t_overhead_ms",
    "overhead_share",
)


def _plain(frame: pd.DataFrame, columns) -> pd.DataFrame:
    """Only the columns a figure needs, as plain numpy/object columns (fast to iterate)."""
    return pd.DataFrame(
        {
            c: frame[c].to_numpy(dtype=object if frame[c].dtype.kind not in "fiub" else None)
            for c in columns
        }
    )


def _x_range(points: pd.DataFrame, roofs: pd.DataFrame) -> tuple[float, float]:
    ridges = roofs["peak_tflops"] / roofs["bandwidth_tb_per_s"]
    xs = np.concatenate([points["arithmetic_intensity_flop_per_byte"].to_numpy(), ridges])
    return float(xs.min()) / 8, float(xs.max()) * 8


def _line(x, y, name: str, color: str, hover: str, dash: str = "solid") -> dict:
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "lines",
        "name": name,
        "line": {"color": color, "width": 2, "dash": dash},
        "hovertemplate": hover + "<extra></extra>",
    }


def _roof_traces(roofs: pd.DataFrame, x_lo: float, x_hi: float) -> list[dict]:
    """Per accelerator: memory roof, compute roof at peak and at peak × efficiency, ridges."""
    traces = []
    for i, roof in enumerate(roofs.itertuples()):
        color, name = COLORS[i % len(COLORS)], html.escape(roof.name)
        peak, eff_peak, bw = roof.peak_tflops, roof.effective_peak_tflops, roof.bandwidth_tb_per_s
        ridge, ridge_eff = peak / bw, eff_peak / bw
        traces += [
            _line(
                [x_lo, ridge],
                [bw * x_lo, peak],
                f"Memory roof {name} ({bw:.3g} TB/s)",
                color,
                "memory roof: %{y:.3g} TFLOP/s at %{x:.3g} FLOP/byte",
            ),
            _line(
                [ridge, x_hi],
                [peak, peak],
                f"Compute roof {name} (peak {peak:.4g} TFLOP/s)",
                color,
                "peak compute roof: %{y:.4g} TFLOP/s",
            ),
            _line(
                [ridge_eff, x_hi],
                [eff_peak, eff_peak],
                f"Effective compute roof {name} ({eff_peak:.4g} TFLOP/s)",
                color,
                "peak × efficiency: %{y:.4g} TFLOP/s",
                dash="dash",
            ),
            {
                "type": "scatter",
                "x": [ridge, ridge_eff],
                "y": [peak, eff_peak],
                "mode": "markers",
                "marker": {"symbol": "diamond", "size": 9, "color": color},
                "name": f"Ridge points {name} ({ridge:.3g} / {ridge_eff:.3g} FLOP/byte)",
                "hovertemplate": "ridge: %{x:.4g} FLOP/byte<extra></extra>",
            },
        ]
    return traces


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
    points = _plain(points, POINT_COLUMNS)
    x_lo, x_hi = _x_range(points, roofs)
    x = points["arithmetic_intensity_flop_per_byte"].to_numpy()
    top, low = points["attainable_tflops"].to_numpy(), points["achieved_tflops"].to_numpy()
    hover = np.asarray(_hover(points, convention))  # an array validates faster than a list
    gap_x = np.column_stack([x, x, np.full_like(x, np.nan)]).ravel()
    gap_y = np.column_stack([top, low, np.full_like(x, np.nan)]).ravel()
    traces = [
        *_roof_traces(roofs, x_lo, x_hi),
        {
            "type": "scatter",
            "x": gap_x,
            "y": gap_y,
            "mode": "lines",
            "name": "Fixed-overhead gap",
            "hoverinfo": "skip",
            "line": {"color": GAP_COLOR, "width": 3, "dash": "dot"},
        },
        {
            "type": "scatter",
            "x": x,
            "y": top,
            "mode": "markers",
            "name": "Attainable (on the roof)",
            "hovertemplate": "roof %{y:.4g} TFLOP/s at %{x:.4g} FLOP/byte<extra></extra>",
            "marker": {"symbol": "circle-open", "size": 11, "color": "black"},
        },
        {
            "type": "scatter",
            "x": x,
            "y": low,
            "mode": "markers",
            "name": "Achieved (with overhead)",
            "hovertext": hover,
            "hoverinfo": "text",
            "marker": {"size": 10, "color": "#ff7f0e"},
        },
    ]
    labels = (
        []
        if len(points) > MAX_GAP_LABELS
        else [
            {
                "x": np.log10(p.arithmetic_intensity_flop_per_byte),
                "y": np.log10(np.sqrt(p.attainable_tflops * p.achieved_tflops)),
                "text": f"gap {p.t_overhead_ms:.3g} ms ({p.overhead_share:.0%})",
                "showarrow": False,
                "xanchor": "left",
                "xshift": 8,
                "font": {"size": 11, "color": GAP_COLOR},
            }
            for p in points.itertuples()
        ]
    )
    layout = {
        "title": {"text": html.escape(title)},
        "height": 620,
        "xaxis": {
            "type": "log",
            "dtick": 1,
            "title": {"text": f"Arithmetic intensity (FLOP/byte) — {FLOP_NOTE[convention]}"},
        },
        "yaxis": {"type": "log", "dtick": 1, "title": {"text": "Performance (TFLOP/s)"}},
        "legend": {"orientation": "h", "y": -0.18, "font": {"size": 11}},
        "margin": {"l": 60, "r": 20, "t": 50, "b": 60},
        "annotations": labels,
    }
    return go.Figure(data=traces, layout=layout)  # one validation pass: ~10x faster than add_*


def latency_breakdown_figure(
    t_compute_ms: float, t_memory_ms: float, t_overhead_ms: float
) -> go.Figure:
    """Latency = max(compute, memory) + fixed overhead, as a stacked bar beside the terms."""
    bound = "compute" if t_compute_ms > t_memory_ms else "memory"
    binding = max(t_compute_ms, t_memory_ms)
    total = binding + t_overhead_ms

    def bar(y, x, name, color, text) -> dict:
        return {
            "type": "bar",
            "orientation": "h",
            "y": y,
            "x": x,
            "name": name,
            "marker": {"color": color},
            "text": text,
        }

    traces = [
        bar(
            ["latency"],
            [binding],
            f"{bound} (binding)",
            "#1f77b4",
            [f"{binding:.3g} ms ({binding / total:.0%})"],
        ),
        bar(
            ["latency"],
            [t_overhead_ms],
            "fixed overhead",
            GAP_COLOR,
            [f"{t_overhead_ms:.3g} ms ({t_overhead_ms / total:.0%})"],
        ),
        bar(
            ["compute term", "memory term"],
            [t_compute_ms, t_memory_ms],
            "terms (only the larger counts)",
            "#aec7e8",
            [f"{t_compute_ms:.3g} ms", f"{t_memory_ms:.3g} ms"],
        ),
    ]
    layout = {
        "barmode": "stack",
        "height": 230,
        "title": {"text": f"Latency split: {total:.4g} ms"},
        "xaxis": {"title": {"text": "time (ms)"}},
        "legend": {"orientation": "h", "y": -0.45},
        "margin": {"l": 110, "r": 20, "t": 40, "b": 40},
    }
    return go.Figure(data=traces, layout=layout)
