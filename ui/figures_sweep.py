"""Plotly builders for the batch-sweep and hardware-comparison pages, and the table reshapes
behind them.

Pure functions over `engine.sweep` DataFrames: no streamlit and no physics. Every number is an
engine column, at most divided by another (speedup) or regrouped for display. Axes are log
where the quantity spans decades (batch, throughput, latency, intensity). The ridge lines are
the engine's `ridge_flop_per_byte` (peak ÷ bandwidth) and `effective_ridge_flop_per_byte`
(peak × η ÷ bandwidth), as in Williams et al. 2009. Colours follow ui.figures.COLORS in the
sweep's hardware order, so an accelerator has the same colour on every chart of a page.
"""

from __future__ import annotations

import html
from collections.abc import Iterator

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.common import FLOP_NOTE
from ui.figures import COLORS, roof_table, roofline_figure

# What roofline_figure reads, plus the keys of a point's label.
POINT_COLUMNS = ["hardware", "batch_size", "bottleneck", "latency_ms", "t_overhead_ms"]
POINT_COLUMNS += ["overhead_share", "arithmetic_intensity_flop_per_byte"]
POINT_COLUMNS += ["attainable_tflops", "achieved_tflops"]
BOUND_COLORS = {"memory": "#1f77b4", "compute": "#d62728"}


def _groups(df: pd.DataFrame) -> Iterator[tuple[int, str, pd.DataFrame]]:
    """(colour index, hardware id, its rows by batch) in the sweep's hardware order."""
    for i, (hw, rows) in enumerate(df.groupby("hardware", observed=True, sort=False)):
        yield i, str(hw), rows.sort_values("batch_size")


def _figure(traces: list[dict], title: str, y_title: str, *, y_log: bool = True) -> go.Figure:
    """A figure built in one step, unvalidated: plotly's per-property validation costs more
    than the rest of a page rerun (the unit tests validate every builder's output instead)."""
    layout = {
        "title": {"text": title},
        "xaxis": {"type": "log", "title": {"text": "Batch size (samples per batch)"}},
        "yaxis": {"type": "log" if y_log else "linear", "title": {"text": y_title}},
        "height": 440,
        "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
        "legend": {"orientation": "h", "y": -0.25, "font": {"size": 11}},
        "hovermode": "closest",
    }
    return go.Figure(data=traces, layout=layout, _validate=False)


def _trace(x, y, name: str, **style) -> dict:
    """A scatter trace as a plain dict (see `_figure`)."""
    return {"type": "scatter", "x": x, "y": y, "name": name, **style}


def _lines(df: pd.DataFrame, names: dict[str, str], column: str, unit: str) -> list[dict]:
    """One line per accelerator of `column` against batch size."""
    hover = "%{fullData.name}<br>batch %{x:,}<br>%{y:,.4g} " + unit + "<extra></extra>"
    return [
        _trace(
            rows["batch_size"].to_numpy(),
            rows[column].to_numpy(),
            html.escape(names.get(hw, hw)),
            mode="lines+markers",
            line={"color": COLORS[i % len(COLORS)], "width": 2},
            marker={"size": 5},
            hovertemplate=hover,
        )
        for i, hw, rows in _groups(df)
    ]


def _hline(batches, y: float, name: str, color: str, dash: str) -> dict:
    """A horizontal line across the batch range (widened around a single batch)."""
    lo, hi = float(np.min(batches)), float(np.max(batches))
    x = [lo, hi] if hi > lo else [lo / 2, hi * 2]
    return _trace(
        x, [y, y], name, mode="lines", line={"color": color, "dash": dash}, hoverinfo="name"
    )


def sample_unit(df: pd.DataFrame) -> str:
    """The model's throughput unit, e.g. 'images/s' (from the catalogue's `sample`)."""
    return f"{df['sample'].iloc[0]}s/s"


def throughput_figure(df: pd.DataFrame, names: dict[str, str]) -> go.Figure:
    """Throughput (samples/s) against batch size, one line per accelerator; log-log."""
    unit = html.escape(sample_unit(df))
    return _figure(
        _lines(df, names, "throughput_per_s", unit), "Throughput", f"Throughput ({unit})"
    )


def latency_figure(
    df: pd.DataFrame, names: dict[str, str], budget_ms: float | None = None
) -> go.Figure:
    """Latency per batch (ms) against batch size; the latency budget as a horizontal line."""
    traces = _lines(df, names, "latency_ms", "ms")
    if budget_ms is not None:
        name = f"Latency budget {budget_ms:.4g} ms"
        traces.append(_hline(df["batch_size"], budget_ms, name, "#2ca02c", "dash"))
    return _figure(traces, "Latency per batch", "Latency (ms per batch)")


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
    traces = [_trace(b, ai, "Intensity", mode="lines", line={"color": "#555"})]
    for label, color in BOUND_COLORS.items():
        style = {"mode": "markers", "marker": {"color": color, "size": 6}}
        hover = f"batch %{{x:,}}<br>%{{y:.4g}} FLOP/byte<extra>{label}</extra>"
        mask, name = bound == label, f"{label}-bound batches"
        traces.append(_trace(b[mask], ai[mask], name, hovertemplate=hover, **style))
    name = f"Effective ridge {ridge_eff:.4g} FLOP/byte (peak × η ÷ bandwidth)"
    traces.append(_hline(b, ridge_eff, name, "#d62728", "dash"))
    name = f"Theoretical ridge {ridge:.4g} FLOP/byte (peak ÷ bandwidth)"
    traces.append(_hline(b, ridge, name, "#d62728", "dot"))
    if crossover is not None:
        y = float(ai[b == crossover][0])
        span = [min(ai.min(), ridge_eff) / 1.5, max(ai.max(), ridge) * 1.5]
        style = {"mode": "lines", "line": {"color": "#9467bd", "dash": "dashdot"}}
        traces.append(_trace([crossover] * 2, span, "crossover", showlegend=False, **style))
        name = f"Crossover: batch {crossover:,} (first compute-bound), {y:.4g} FLOP/byte"
        marker = {"symbol": "star", "size": 15, "color": "#9467bd"}
        traces.append(_trace([crossover], [y], name, mode="markers", marker=marker))
    title = f"Arithmetic intensity vs batch<br><sup>{FLOP_NOTE[convention]}</sup>"
    return _figure(traces, title, "Arithmetic intensity (FLOP/byte)")


def roofline_trajectories(
    df: pd.DataFrame, names: dict[str, str], convention: str, title: str
) -> go.Figure:
    """ui.figures.roofline_figure with one point per row ("H100, batch 8") and, per
    accelerator, a line through its achieved points in batch order (the trajectory)."""
    points = df[POINT_COLUMNS]
    hw = points["hardware"].astype("category")
    shown = [names.get(str(h), str(h)) for h in hw.cat.categories]
    labels = [
        f"{shown[code]}, batch {b:,}"
        for code, b in zip(hw.cat.codes.tolist(), points["batch_size"].tolist(), strict=True)
    ]
    labels = pd.Series(labels, index=points.index, dtype=object)  # object: fast to iterate
    fig = roofline_figure(points.assign(label=labels), roof_table(df, names), convention, title)
    for i, hw, rows in _groups(points):
        b = rows["batch_size"].to_numpy()
        fig.add_scatter(
            x=rows["arithmetic_intensity_flop_per_byte"].to_numpy(),
            y=rows["achieved_tflops"].to_numpy(),
            mode="lines",
            name=f"Trajectory {html.escape(names.get(hw, hw))} (batch {b[0]:,} → {b[-1]:,})",
            line={"color": COLORS[i % len(COLORS)], "width": 1},
            hoverinfo="skip",
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
    traces = _lines(df, names, "speedup_vs_baseline_ratio", f"× {base}")
    return _figure(
        traces, f"Speedup vs {base} (throughput ratio)", f"Speedup (× {base})", y_log=False
    )


def speedup_table(df: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """Batch × accelerator grid of `with_speedup`'s ratio (×), headed by display name."""
    wide = df.pivot(index="batch_size", columns="hardware", values="speedup_vs_baseline_ratio")
    wide.columns = [names.get(str(h), str(h)) for h in wide.columns]
    return wide.rename_axis("Batch size").reset_index()


def hardware_summary(
    df: pd.DataFrame, crossover: pd.DataFrame, names: dict[str, str]
) -> pd.DataFrame:
    """One row per accelerator (sweep order): roofs, ridges, crossover batch, best throughput.

    Bandwidth is peak ÷ ridge, as in ui.figures.roof_table."""
    codes, ids = pd.factorize(df["hardware"].astype(str))
    first = df.iloc[[int(np.argmax(codes == c)) for c in range(len(ids))]]
    tp = df["throughput_per_s"].to_numpy()
    best = df.iloc[[int(np.argmax(np.where(codes == c, tp, -np.inf))) for c in range(len(ids))]]
    cross = dict(zip(crossover["hardware"].astype(str), crossover["crossover_batch"], strict=True))
    return pd.DataFrame(
        {
            "Accelerator": [names.get(h, h) for h in ids],
            "Peak (TFLOP/s)": first["peak_tflops"].to_numpy(),
            "Bandwidth (TB/s)": (first["peak_tflops"] / first["ridge_flop_per_byte"]).to_numpy(),
            "Ridge, theoretical (FLOP/byte)": first["ridge_flop_per_byte"].to_numpy(),
            "Ridge, effective (FLOP/byte)": first["effective_ridge_flop_per_byte"].to_numpy(),
            "Crossover batch": [crossover_text(cross[h]) for h in ids],
            f"Best throughput ({sample_unit(df)})": best["throughput_per_s"].to_numpy(),
            "at batch": best["batch_size"].to_numpy(),
        }
    )


def crossover_value(value: object) -> int | None:
    """A crossover batch from `engine.crossover_batch` (<NA> when none) as an int or None."""
    return None if pd.isna(value) else int(value)


def crossover_text(value: object) -> str:
    """A crossover batch for display: '78', or 'never in sweep' for <NA>/None."""
    batch = crossover_value(value)
    return "never in sweep" if batch is None else f"{batch:,}"


def budget_rows(df: pd.DataFrame, budget_ms: float) -> tuple[pd.Series, pd.Series] | None:
    """(the largest batch, the best-throughput batch) whose latency is within `budget_ms`;
    None when no batch meets it."""
    ok = df[df["latency_ms"] <= budget_ms]
    if ok.empty:
        return None
    return ok.loc[ok["batch_size"].idxmax()], ok.loc[ok["throughput_per_s"].idxmax()]


def display_table(df: pd.DataFrame, names: dict[str, str], columns: list[str]) -> pd.DataFrame:
    """The chosen sweep columns under readable headers that carry their units."""
    unit = sample_unit(df)
    headers = {
        "hardware": "Accelerator",
        "batch_size": "Batch size",
        "bottleneck": "Bound",
        "latency_ms": "Latency (ms)",
        "t_overhead_ms": "Fixed overhead (ms)",
        "throughput_per_s": f"Throughput ({unit})",
        "marginal_throughput_gain_pct": "Marginal throughput gain vs previous batch (%)",
        "speedup_vs_baseline_ratio": "Speedup vs baseline (×)",
        "arithmetic_intensity_flop_per_byte": "Intensity (FLOP/byte)",
        "achieved_tflops": "Achieved (TFLOP/s)",
        "attainable_tflops": "Roof (TFLOP/s)",
        "mfu": "MFU (fraction of peak)",
        "energy_j": "Energy per batch (J)",
    }
    out = df[columns].rename(columns=headers)
    if "hardware" in columns:
        out["Accelerator"] = [names.get(str(h), str(h)) for h in df["hardware"]]
    return out.reset_index(drop=True)
