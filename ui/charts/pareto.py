"""The Pareto chart of a design space: every configuration as a point of two objectives, the
dominated and the infeasible ones faded, the front drawn as a line through its points.

Pure: numbers in, a plotly Figure out; hover values come from ui.words.format with their units;
titles and names arrive translated (callers pass `_()` text). Above WEBGL_POINTS points a trace
is drawn with WebGL.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ui.charts.theme import COLORS, GAP_COLOR, WEBGL_POINTS, legend_below, wrap_title
from ui.words.format import fmt_all

FADED = 0.25  # the opacity of the points off the front


@dataclass(frozen=True)
class Axis:
    """One objective on an axis: its title, values, their unit and scale (values × scale are in
    `unit`) and whether the axis is logarithmic."""

    title: str
    values: np.ndarray
    unit: str = ""
    scale: float = 1.0
    log: bool = False


def _trace(axes: tuple[Axis, Axis], *, mask: np.ndarray, name: str, style: dict, labels) -> dict:
    x, y = axes
    kind = "scattergl" if mask.sum() > WEBGL_POINTS else "scatter"
    xs, ys = x.values[mask], y.values[mask]
    shown = [
        f"{a} · {b}"
        for a, b in zip(fmt_all(xs * x.scale, x.unit), fmt_all(ys * y.scale, y.unit), strict=True)
    ]
    text = [f"{html.escape(str(t))}<br>{s}" for t, s in zip(labels[mask], shown, strict=True)]
    return {
        "type": kind,
        "x": xs,
        "y": ys,
        "name": html.escape(name),
        "customdata": text,
        "hovertemplate": "%{customdata}<extra></extra>",
        **style,
    }


def pareto_figure(
    x: Axis,
    y: Axis,
    *,
    front: np.ndarray,
    feasible: np.ndarray,
    labels: np.ndarray,
    names: tuple[str, str, str],
    title: str,
    line: bool = True,
) -> go.Figure:
    """`front`, `feasible`: boolean masks; `labels`: each point's configuration as text;
    `names`: the legend's words for the front, the dominated and the infeasible points; `line`:
    join the front's points (two objectives; with more, the front's projection is no line)."""
    front = np.asarray(front, dtype=bool)
    feasible = np.asarray(feasible, dtype=bool)
    labels = np.asarray(labels, dtype=object)
    order = np.argsort(x.values[front], kind="stable")
    axes = (x, y)
    traces = [
        _trace(
            axes,
            mask=feasible & ~front,
            name=names[1],
            style={"mode": "markers", "marker": {"color": COLORS[0], "size": 6, "opacity": FADED}},
            labels=labels,
        ),
        _trace(
            axes,
            mask=~feasible,
            name=names[2],
            style={"mode": "markers", "marker": {"color": GAP_COLOR, "size": 5, "opacity": FADED}},
            labels=labels,
        ),
    ]
    best = _trace(
        axes,
        mask=front,
        name=names[0],
        style={
            "mode": "lines+markers" if line else "markers",
            "line": {"color": COLORS[1], "width": 2, "shape": "hv"},
        },
        labels=labels,
    )
    for key in ("x", "y", "customdata"):
        best[key] = np.asarray(best[key], dtype=object if key == "customdata" else float)[order]
    best["marker"] = {"color": COLORS[1], "size": 9}
    traces.append(best)
    layout = {
        "title": wrap_title(title),
        "height": 460,
        "xaxis": _axis(x),
        "yaxis": _axis(y),
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
    }
    return go.Figure(data=traces, layout=layout, _validate=False)


def _axis(a: Axis) -> dict:
    axis = {"title": {"text": a.title}, "automargin": True}
    if a.log:
        axis["type"] = "log"
    return axis
