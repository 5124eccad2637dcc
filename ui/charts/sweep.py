"""Plotly builders for the batch-sweep and hardware-comparison pages, and the table reshapes
behind them.

Pure functions over `engine.sweep` DataFrames: no streamlit and no physics. Every number is an
engine column, at most divided by another (speedup) or regrouped for display, and shown through
ui.words.format (hover text, legend, table cells). Axes are log where the quantity spans decades
(batch, throughput, latency, intensity), with decade ticks 1, 10, 100, 1k. The ridge lines are
the engine's `ridge_flop_per_byte` (peak ÷ bandwidth) and `effective_ridge_flop_per_byte`
(peak × η ÷ bandwidth), as in Williams et al. 2009. Colours follow ui.charts.roofline.COLORS in the
sweep's hardware order, so an accelerator has the same colour on every chart of a page.
"""

from __future__ import annotations

import html
from collections.abc import Iterator

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts.roofline import roof_table, roofline_figure
from ui.charts.tables import sample_unit
from ui.charts.theme import (
    COLORS,
    GAP_COLOR,
    WEBGL_POINTS,
    legend_below,
    log_axis,
    wrap_lines,
    wrap_title,
)
from ui.words.format import fmt, fmt_all
from ui.words.i18n import _
from ui.words.text import FLOP_NOTE

# What roofline_figure reads, plus the keys of a point's label.
POINT_COLUMNS = ["hardware", "batch_size", "bottleneck", "latency_ms", "t_overhead_ms"]
POINT_COLUMNS += ["overhead_share", "arithmetic_intensity_flop_per_byte"]
POINT_COLUMNS += ["attainable_tflops", "achieved_tflops"]
BOUND_COLORS = {"memory": "#1f77b4", "compute": "#d62728"}


def _groups(df: pd.DataFrame) -> Iterator[tuple[int, str, pd.DataFrame]]:
    """(colour index, hardware id, its rows by batch) in the sweep's hardware order."""
    for i, (hw, rows) in enumerate(df.groupby("hardware", observed=True, sort=False)):
        yield i, str(hw), rows.sort_values("batch_size")


def _values(traces: list[dict], axis: str) -> list[float]:
    """Every finite number the traces put on `axis` ("x" or "y"), for the tick range."""
    out = []
    for t in traces:
        out += [v for v in np.asarray(t.get(axis, []), dtype=float).ravel() if np.isfinite(v)]
    return out


def _figure(traces: list[dict], title: str, y_title: str, *, y_log: bool = True) -> go.Figure:
    """A figure built in one step, unvalidated: plotly's per-property validation costs more
    than the rest of a page rerun (the unit tests validate every builder's output instead)."""
    yaxis = {"type": "linear", "title": {"text": y_title}, "automargin": True}
    layout = {
        "title": wrap_title(title),
        "xaxis": log_axis(_("Batch size (samples per batch)"), _values(traces, "x")),
        "yaxis": log_axis(y_title, _values(traces, "y")) if y_log else yaxis,
        "height": 440,
        "margin": {"l": 10, "r": 10, "t": 45 + 15 * max(1, title.count("<br>")), "b": 10},
        "legend": legend_below(),
        "hovermode": "closest",
    }
    return go.Figure(data=traces, layout=layout, _validate=False)


def _trace(x, y, name: str, **style) -> dict:
    """A scatter trace as a plain dict (see `_figure`)."""
    return {"type": "scatter", "x": x, "y": y, "name": name, **style}


def _lines(
    df: pd.DataFrame, names: dict[str, str], column: str, unit: str, scale: float = 1.0
) -> list[dict]:
    """One line per accelerator of `column` against batch size; hover text via ui.words.format
    (`column` × `scale` is in `unit`, e.g. latency_ms × 1e-3 in s). WebGL for long sweeps."""
    traces = []
    for i, hw, rows in _groups(df):
        y = rows[column].to_numpy()
        text = fmt_all(y * scale, unit)
        kind = "scattergl" if len(rows) > WEBGL_POINTS else "scatter"
        traces.append(
            _trace(
                rows["batch_size"].to_numpy(),
                y,
                html.escape(names.get(hw, hw)),
                type=kind,
                mode="lines+markers",
                line={"color": COLORS[i % len(COLORS)], "width": 2},
                marker={"size": 5},
                customdata=text,
                hovertemplate=_("%{fullData.name}<br>batch %{x:,}<br>%{customdata}")
                + "<extra></extra>",
            )
        )
    return traces


def _hline(batches, y: float, name: str, color: str, dash: str) -> dict:
    """A horizontal line across the batch range (widened around a single batch)."""
    lo, hi = float(np.min(batches)), float(np.max(batches))
    x = [lo, hi] if hi > lo else [lo / 2, hi * 2]
    return _trace(
        x, [y, y], name, mode="lines", line={"color": color, "dash": dash}, hoverinfo="name"
    )


def throughput_figure(df: pd.DataFrame, names: dict[str, str]) -> go.Figure:
    """Throughput (samples/s) against batch size, one line per accelerator; log-log."""
    unit = html.escape(sample_unit(df))
    return _figure(
        _lines(df=df, names=names, column="throughput_per_s", unit=unit),
        _("Throughput"),
        _("Throughput ({unit})").format(unit=unit),
    )


def latency_figure(
    df: pd.DataFrame, names: dict[str, str], budget_ms: float | None = None
) -> go.Figure:
    """Latency per batch (ms) against batch size; the latency budget as a horizontal line."""
    traces = _lines(df=df, names=names, column="latency_ms", unit="s", scale=1e-3)
    if budget_ms is not None:
        name = _("Latency budget {time}").format(time=fmt(budget_ms * 1e-3, "s"))
        traces.append(
            _hline(batches=df["batch_size"], y=budget_ms, name=name, color="#2ca02c", dash="dash")
        )
    return _figure(traces, _("Latency per batch"), _("Latency (ms per batch)"))


def intensity_figure(rows: pd.DataFrame, crossover: int | None, convention: str) -> go.Figure:
    """Arithmetic intensity against batch for one accelerator, with both ridges and the
    crossover batch (the first compute-bound one) marked; log-log.

    Args:
        rows: one model × hardware × precision of a sweep.
        crossover: `engine.crossover_batch`'s value for it; None when there is none.
        convention: "catalog" or "mac2", named on the intensity axis.
    """
    rows = rows.sort_values("batch_size")
    b = rows["batch_size"].to_numpy()
    ai = rows["arithmetic_intensity_flop_per_byte"].to_numpy()
    bound = rows["bottleneck"].astype(str).to_numpy()
    ridge = float(rows["ridge_flop_per_byte"].iloc[0])
    ridge_eff = float(rows["effective_ridge_flop_per_byte"].iloc[0])
    traces = [_trace(b, ai, _("Intensity"), mode="lines", line={"color": GAP_COLOR})]
    names = {"memory": _("memory-bound batches"), "compute": _("compute-bound batches")}
    for label, color in BOUND_COLORS.items():
        style = {"mode": "markers", "marker": {"color": color, "size": 6}}
        hover = _("batch %{x:,}<br>%{customdata}") + f"<extra>{_(label)}</extra>"
        mask, name = bound == label, names[label]
        text = fmt_all(ai[mask], "FLOP/B")
        traces.append(
            _trace(b[mask], ai[mask], name, customdata=text, hovertemplate=hover, **style)
        )
    name = _("Effective ridge {ridge} (peak × η ÷ bandwidth)").format(
        ridge=fmt(ridge_eff, "FLOP/B")
    )
    traces.append(_hline(batches=b, y=ridge_eff, name=name, color="#d62728", dash="dash"))
    name = _("Theoretical ridge {ridge} (peak ÷ bandwidth)").format(ridge=fmt(ridge, "FLOP/B"))
    traces.append(_hline(batches=b, y=ridge, name=name, color="#d62728", dash="dot"))
    if crossover is not None:
        y = float(ai[b == crossover][0])
        span = [min(ai.min(), ridge_eff) / 1.5, max(ai.max(), ridge) * 1.5]
        style = {"mode": "lines", "line": {"color": "#9467bd", "dash": "dashdot"}}
        traces.append(_trace([crossover] * 2, span, _("crossover"), showlegend=False, **style))
        name = _("Crossover: batch {batch} (first compute-bound), {intensity}").format(
            batch=f"{crossover:,}", intensity=fmt(y, "FLOP/B")
        )
        marker = {"symbol": "star", "size": 15, "color": "#9467bd"}
        traces.append(_trace([crossover], [y], name, mode="markers", marker=marker))
    note = wrap_lines(_(FLOP_NOTE[convention]))  # two short lines: fits a phone
    title = _("Arithmetic intensity vs batch") + f"<br><sup>{note}</sup>"
    return _figure(traces, title, _("Arithmetic intensity (FLOP/byte)"))


def roofline_trajectories(
    df: pd.DataFrame, names: dict[str, str], convention: str, title: str
) -> go.Figure:
    """ui.charts.roofline.roofline_figure with one point per row ("H100, batch 8") and, per
    accelerator, a line through its achieved points in batch order (the trajectory)."""
    points = df[POINT_COLUMNS]
    hw = points["hardware"].astype("category")
    shown = [names.get(str(h), str(h)) for h in hw.cat.categories]
    point = _("{hardware}, batch {batch}")
    labels = [
        point.format(hardware=shown[code], batch=f"{b:,}")
        for code, b in zip(hw.cat.codes.tolist(), points["batch_size"].tolist(), strict=True)
    ]
    labels = pd.Series(labels, index=points.index, dtype=object)  # object: fast to iterate
    fig = roofline_figure(
        points=points.assign(label=labels),
        roofs=roof_table(df, names),
        convention=convention,
        title=title,
    )
    for i, hw, rows in _groups(points):
        b = rows["batch_size"].to_numpy()
        name = _("Trajectory {hardware} (batch {first} → {last})").format(
            hardware=html.escape(names.get(hw, hw)), first=f"{b[0]:,}", last=f"{b[-1]:,}"
        )
        kind = "scattergl" if len(rows) > WEBGL_POINTS else "scatter"
        x, y = rows["arithmetic_intensity_flop_per_byte"].to_numpy(), rows["achieved_tflops"]
        line = {"color": COLORS[i % len(COLORS)], "width": 1}
        fig.add_trace(
            {
                "type": kind,
                "x": x,
                "y": y.to_numpy(),
                "mode": "lines",
                "name": name,
                "line": line,
                "hoverinfo": "skip",
                "legendgroup": hw,
            }
        )
    return fig


def with_speedup(df: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """`df` plus baseline_hardware and speedup_vs_baseline_ratio (throughput ÷ the baseline's
    throughput at the same model, precision and batch)."""
    keys = [df[k] for k in ("model", "precision", "batch_size")]
    own = df["throughput_per_s"]
    ref = own.where(df["hardware"] == baseline).groupby(keys, observed=True).transform("max")
    return df.assign(baseline_hardware=baseline, speedup_vs_baseline_ratio=own / ref)


def speedup_figure(df: pd.DataFrame, names: dict[str, str], baseline: str) -> go.Figure:
    """Speedup over the baseline (× throughput) against batch, one line per accelerator."""
    base = html.escape(names.get(baseline, baseline))
    traces = _lines(df=df, names=names, column="speedup_vs_baseline_ratio", unit=f"× {base}")
    return _figure(
        traces,
        _("Speedup vs {baseline}").format(baseline=base)
        + "<br><sup>"
        + _("throughput ratio")
        + "</sup>",
        _("Speedup (× {baseline})").format(baseline=base),
        y_log=False,
    )


def budget_rows(df: pd.DataFrame, budget_ms: float) -> tuple[pd.Series, pd.Series] | None:
    """(the largest batch, the best-throughput batch) whose latency is within `budget_ms`;
    None when no batch meets it."""
    ok = df[df["latency_ms"] <= budget_ms]
    if ok.empty:
        return None
    return ok.loc[ok["batch_size"].idxmax()], ok.loc[ok["throughput_per_s"].idxmax()]
