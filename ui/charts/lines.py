"""Two general builders for engine columns that are not a roofline or a batch sweep: lines of
several quantities against one axis (a pipeline's two stages against batch, overhead hours
against cluster size) and stacked bars of a budget's parts against its limit (memory per GPU:
weights, KV cache, gradients, optimizer state ... beside the usable memory).

Pure: numbers in, a plotly Figure out; every value on the chart (hover, bar labels, the limit)
comes from ui.words.format with its unit; titles and names arrive translated (callers pass
`_()` text). Log axes carry decade ticks (1, 10, 100, 1k); the legend sits under the plot so a
390 px chart keeps its title.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ui.charts.theme import COLORS, GAP_COLOR, legend_below, log_axis, wrap_title
from ui.words.format import fmt_all

LIMIT_COLOR = "#d62728"  # a budget's limit (e.g. the usable memory): red, dashed


@dataclass(frozen=True)
class Series:
    """One line or one stack of bars: its name, values, and the unit its values are shown in
    (values × `scale` are in `unit`, e.g. milliseconds × 1e-3 in s)."""

    name: str
    values: Sequence[float]
    unit: str = ""
    scale: float = 1.0
    dash: str = "solid"


def _shown(s: Series) -> list[str]:
    return fmt_all(np.asarray(s.values, dtype=float) * s.scale, s.unit)


def lines_figure(
    x: Sequence[float],
    series: Sequence[Series],
    *,
    title: str,
    x_title: str,
    y_title: str,
    log_y: bool = True,
    marks: Sequence[tuple[float, str]] = (),
) -> go.Figure:
    """Each series against `x` (a log axis of whole numbers: batch, GPUs); `marks` are
    vertical lines (x, label) such as a crossover."""
    xs = np.asarray(x, dtype=float)
    traces = []
    for i, s in enumerate(series):
        traces.append(
            {
                "type": "scatter",
                "x": xs,
                "y": np.asarray(s.values, dtype=float),
                "name": html.escape(s.name),
                "mode": "lines+markers",
                "line": {"color": COLORS[i % len(COLORS)], "width": 2, "dash": s.dash},
                "marker": {"size": 6},
                "customdata": _shown(s),
                "hovertemplate": "%{fullData.name}<br>%{x:,}: %{customdata}<extra></extra>",
            }
        )
    values = [v for s in series for v in np.asarray(s.values, dtype=float) if v > 0]
    y_axis = (
        log_axis(y_title, values)
        if log_y
        else {"title": {"text": y_title}, "automargin": True, "rangemode": "tozero"}
    )
    shapes, notes = [], []
    for at, label in marks:
        shapes.append(
            {
                "type": "line",
                "x0": at,
                "x1": at,
                "yref": "paper",
                "y0": 0,
                "y1": 1,
                "line": {"color": GAP_COLOR, "dash": "dashdot"},
            }
        )
        notes.append(
            {
                "x": float(np.log10(at)),
                "yref": "paper",
                "y": 1,
                "text": html.escape(label),
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "top",
                "font": {"size": 12, "color": GAP_COLOR},
            }
        )
    layout = {
        "title": wrap_title(title),
        "height": 440,
        "xaxis": log_axis(x_title, xs),
        "yaxis": y_axis,
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "shapes": shapes,
        "annotations": notes,
    }
    return go.Figure(data=traces, layout=layout, _validate=False)


def stacked_bars_figure(
    categories: Sequence[str],
    parts: Sequence[Series],
    *,
    title: str,
    y_title: str,
    limit: tuple[str, float] | None = None,
    limit_scale: float = 1.0,
) -> go.Figure:
    """Stacked bars, one per category, of the parts' values; `limit` (label, value in the
    parts' plotted unit) is a dashed horizontal line (e.g. the usable memory), named with its
    value in the legend: a label on the plot would sit on a bar."""
    traces = []
    for i, part in enumerate(parts):
        text = _shown(part)
        traces.append(
            {
                "type": "bar",
                "x": list(categories),
                "y": np.asarray(part.values, dtype=float),
                "name": html.escape(part.name),
                "marker": {"color": COLORS[i % len(COLORS)]},
                "customdata": text,
                "hovertemplate": "%{fullData.name}: %{customdata}<extra></extra>",
            }
        )
    shapes = []
    if limit is not None:  # a line across the plot, named in the legend (no label on a bar)
        label, value = limit
        line = {"color": LIMIT_COLOR, "dash": "dash", "width": 2}
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": value,
                "y1": value,
                "line": line,
            }
        )
        shown = fmt_all([value * limit_scale], parts[0].unit)[0] if parts else ""
        traces.append(
            {
                "type": "scatter",
                "x": [None],
                "y": [None],
                "mode": "lines",
                "name": html.escape(f"{label}: {shown}"),
                "line": line,
                "hoverinfo": "skip",
            }
        )
    layout = {
        "title": wrap_title(title),
        "barmode": "stack",
        "height": 440,
        "xaxis": {"type": "category", "automargin": True},
        "yaxis": {"title": {"text": y_title}, "automargin": True, "rangemode": "tozero"},
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "shapes": shapes,
    }
    return go.Figure(data=traces, layout=layout, _validate=False)
