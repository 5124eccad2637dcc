"""Plotly builders and plain-language text for the LLM decode page (docs/model.md, "LLM decode").

Pure functions over `engine.decode(...).as_dict()` (a mapping, `r`: the tutorial view) and the
serving page's curves (`df`: `engine.serve_sweep` rows, ui.decode.view.curves): no streamlit,
no physics; numbers are engine figures, at most scaled for
display (bytes to decimal GB, data/README.md) or divided by another (a share), and shown through
ui.words.format (SI prefixes, 3-4 significant figures, decade ticks on log axes). The roofline is
ui.charts.roofline.roofline_figure with a request's two phases, prefill (the prompt in one pass) and
the decode step (one token per sequence), as its operating points (Pope et al., MLSys 2023).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts.roofline import roof_table, roofline_figure
from ui.charts.theme import (
    COLORS,
    GAP_COLOR,
    WEBGL_POINTS,
    legend_below,
    log_axis,
    wrap_lines,
    wrap_title,
)
from ui.words.format import fmt, fmt_all, fmt_bytes, pct
from ui.words.i18n import N_, _

GB = 1e9  # decimal gigabytes (data/README.md)
CAPACITY_COLOR = "#d62728"
STAR_COLOR = "#e6a800"  # this scenario: amber reads on light and dark backgrounds
OOM_FILL = "rgba(214, 39, 40, 0.12)"
PHASES = (N_("prefill"), N_("decode"))  # column prefixes; shown through _()
BOUNDS = (N_("memory"), N_("compute"))  # the engine's bottleneck words, shown through _()
WORDS = (N_("context"), N_("input"))  # what a `word=` names, shown through _()
METRIC_ROWS = (4, 3, 3)
SPEED_CHARTS = {  # column: (title, y-axis title, ui.words.format unit, factor to that unit)
    "aggregate_tokens_per_s": (
        N_("Aggregate throughput"),
        N_("Aggregate (tokens/s)"),
        "tokens/s",
        1.0,
    ),
    "tpot_ms": (N_("Time per output token (TPOT)"), N_("TPOT (ms)"), "s", 1e-3),
}


# a legend entry's line at most (font 11 px): longer ones ran past, or were cut off, on a phone
LEGEND_COLUMNS = 46


def gb(n_bytes: float) -> str:
    """Bytes for reading, decimal units: 16060000000 -> '16.1 GB' (ui.words.format.fmt_bytes)."""
    return fmt_bytes(n_bytes)


def ms(value_ms: float) -> str:
    """A duration given in ms, for reading: 54.23 -> '54.2 ms', 0.5 -> '500 µs'."""
    return fmt(float(value_ms) * 1e-3, "s")


def memory_split(r: Mapping) -> str:
    """'weights 16.1 GB + KV cache 537 MB, fits' for the memory metric."""
    fits = _("fits") if r["fits_in_memory"] else _("does NOT fit")
    return _("weights {weights} + KV cache {kv}, {fits}").format(
        weights=gb(r["weight_bytes"]), kv=gb(r["kv_cache_bytes"]), fits=fits
    )


def phase_points(r: Mapping) -> pd.DataFrame:
    """The request's two operating points (prefill, decode) in roofline_figure's columns."""
    batch, latency = int(r["batch_size"]), {"prefill": r["ttft_ms"], "decode": r["tpot_ms"]}
    labels = {
        "prefill": _("prefill: {prompt}-token prompt × batch {batch} (TTFT)").format(
            prompt=f"{int(r['prompt']):,}", batch=f"{batch:,}"
        ),
        "decode": _("decode step: batch {batch} at context {context} (TPOT)").format(
            batch=f"{batch:,}", context=f"{int(r['context']):,}"
        ),
    }
    return pd.DataFrame(
        {
            "phase": p,
            "label": labels[p],
            "arithmetic_intensity_flop_per_byte": r[f"{p}_arithmetic_intensity_flop_per_byte"],
            "attainable_tflops": r[f"{p}_attainable_tflops"],
            "achieved_tflops": r[f"{p}_achieved_tflops"],
            "latency_ms": latency[p],
            "t_overhead_ms": r[f"{p}_t_overhead_ms"],
            "overhead_share": r[f"{p}_overhead_share"],
            "bottleneck": str(r[f"{p}_bottleneck"]),
        }
        for p in PHASES
    )


def decode_roofline(r: Mapping, hw_name: str, title: str) -> go.Figure:
    """The roofline of `r`'s accelerator with prefill and decode as two labelled points."""
    keys = ("hardware", "peak_tflops", "effective_peak_tflops", "memory_bandwidth_bytes_per_s")
    row = {k: r[k] for k in keys}
    roofs = roof_table(pd.DataFrame([row]), {str(r["hardware"]): hw_name})
    points = phase_points(r)
    fig = roofline_figure(points=points, roofs=roofs, convention="mac2", title=title)
    for p in points.itertuples():  # annotations on log axes take log10 positions
        fig.add_annotation(
            x=np.log10(p.arithmetic_intensity_flop_per_byte),
            y=np.log10(p.attainable_tflops),
            text=f"<b>{_(p.phase)}</b>",
            showarrow=False,
            yshift=14,
        )
    return fig


def _trace(x, y, name: str, **style) -> dict:
    """A scatter trace as a plain dict."""
    return {"type": "scatter", "x": x, "y": y, "name": name, **style}


def _figure(traces: list[dict], title: str, y_title: str, df: pd.DataFrame, x_range=None):
    """Log-log against batch, decade ticks (1, 10, 100, 1k); the legend sits below."""
    batches = df["batch_size"].to_numpy(dtype=float)
    y = [v for t in traces for v in np.asarray(t.get("y", []), dtype=float) if v == v]
    xaxis = log_axis(_("Batch (concurrent sequences)"), batches, x_range or ())
    if x_range is not None:
        xaxis["range"] = [np.log10(x_range[0]), np.log10(x_range[1])]
    layout = {
        "title": wrap_title(title),
        "xaxis": xaxis,
        "yaxis": log_axis(y_title, y),
        "height": 480,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "legend": legend_below(),
        "hovermode": "closest",
    }
    return go.Figure(data=traces, layout=layout, _validate=False)  # dicts; tests validate


def _current(
    df: pd.DataFrame, column: str, current: tuple[int, int], scale=1.0, word="context"
) -> list:
    """A star on this scenario's (batch, context) row, if the sweep holds it."""
    at = (df["batch_size"].to_numpy() == current[0]) & (df["context"].to_numpy() == current[1])
    if not at.any():
        return []
    name = _("This scenario (batch {batch}, {word} {tokens})").format(
        batch=f"{current[0]:,}", word=_(word), tokens=f"{current[1]:,}"
    )
    marker = {"symbol": "star", "size": 16, "color": STAR_COLOR, "line": {"width": 1}}
    y = df[column].to_numpy(dtype=float)[at][:1] / scale
    return [_trace([current[0]], y, name, mode="markers", marker=marker, hoverinfo="name")]


def _context_lines(
    df: pd.DataFrame, column: str, unit: str, scale: float = 1.0, si: float = 1.0, word="context"
) -> list[dict]:
    """Per context, `column` (÷ scale) against batch: a solid line through the batches that fit
    in memory, then a faint dotted one with ✕ from the last that fits through those that do
    not (hypothetical: nothing is drawn as if it fitted). Hover text: `column` × `si` in
    ui.words.format's `unit`; `word` names the `context` column ("input" on the serving page,
    where it holds the input tokens)."""
    # numpy, not pandas row filters: several times faster on the sweep's 54 columns
    ctxs, batches = df["context"].to_numpy(), df["batch_size"].to_numpy()
    values = df[column].to_numpy(dtype=float) / scale
    all_fits = df["fits_in_memory"].to_numpy(dtype=bool)
    bounds = np.asarray(df["decode_bottleneck"], dtype=str)
    kinds, at = np.unique(bounds, return_inverse=True)  # the engine's words, translated
    bounds = np.asarray([_(k) for k in kinds], dtype=object)[at.reshape(-1)].astype(str)
    yes, no = _("fits"), _("does NOT fit")
    order, traces = np.lexsort((batches, ctxs)), []
    for i, ctx in enumerate(np.unique(ctxs)):
        rows = order[ctxs[order] == ctx]
        fits = all_fits[rows]
        shown = fmt_all(values[rows] * scale * si, unit)
        extra = np.column_stack([bounds[rows], np.where(fits, yes, no), shown])
        name = _("{word} {tokens} tokens").format(word=_(word), tokens=f"{ctx:,}")
        hover = name + _("<br>batch %{x:,}<br>%{customdata[2]}<br>")
        hover += _("%{customdata[0]}-bound decode · %{customdata[1]} in memory")
        hover += "<extra></extra>"
        color = COLORS[i % len(COLORS)]
        kind = "scattergl" if len(rows) > WEBGL_POINTS else "scatter"
        common = {"type": kind, "legendgroup": name, "hovertemplate": hover}
        ok = np.flatnonzero(fits)
        traces.append(
            _trace(
                batches[rows[ok]],
                values[rows[ok]],
                name,
                mode="lines+markers",
                customdata=extra[ok],
                line={"color": color, "width": 2},
                marker={"symbol": "circle", "size": 7},
                **common,
            )
        )
        if ok.size < len(rows):  # from the last that fits (continuity) through the rest
            tail = np.arange(ok[-1] if ok.size else 0, len(rows))
            sizes = np.where(fits[tail], 0, 8)  # the joint is the solid line's marker
            traces.append(
                _trace(
                    batches[rows[tail]],
                    values[rows[tail]],
                    _("{name}: does not fit").format(name=name),
                    mode="lines+markers",
                    customdata=extra[tail],
                    line={"color": color, "width": 1.5, "dash": "dot"},
                    marker={"symbol": "x", "size": sizes.tolist()},
                    opacity=0.5,
                    showlegend=not ok.size,  # no solid line names this context
                    **common,
                )
            )
    key = {"symbol": "x", "size": 8, "color": GAP_COLOR}  # a legend-only entry explaining ✕
    line = {"color": GAP_COLOR, "dash": "dot", "width": 1.5}
    label = _(NO_FIT_LEGEND)
    return [*traces, _trace([None], [None], label, mode="lines+markers", marker=key, line=line)]


NO_FIT_LEGEND = N_("┈✕┈ does not fit in memory (hypothetical)")


def speed_figure(
    df: pd.DataFrame, column: str, current: tuple[int, int], word: str = "context"
) -> go.Figure:
    """`column` ("aggregate_tokens_per_s" or "tpot_ms") against batch, one line per context
    (solid while it fits, dotted past that), this scenario (batch, context) starred; log-log."""
    title, y_title, unit, si = SPEED_CHARTS[column]
    traces = [*_context_lines(df, column, unit, si=si, word=word)]
    traces += _current(df, column, current, word=word)
    return _figure(traces=traces, title=_(title), y_title=_(y_title), df=df)


def _line(x: list[float], y: list[float], name: str, color: str, dash: str, width=2.0) -> dict:
    line = {"color": color, "dash": dash, "width": width}
    return _trace(x, y, name, mode="lines", line=line, hoverinfo="name")


def memory_figure(df: pd.DataFrame, current: tuple[int, int], word: str = "context") -> go.Figure:
    """Weights + KV cache (GB) against batch, one line per context: the limit at usable memory
    (capacity less the stack's runtime memory and reserve: what the fit uses), the
    out-of-memory region above it shaded, the physical capacity, and the engine's largest batch
    that fits at current[1] (`max_batch_size`).

    Args:
        df: the page's serve_sweep curves (ui.decode.view.curves).
    """
    b = df["batch_size"].to_numpy(dtype=float)
    x = [b.min() / 1.5, b.max() * 1.5]
    first = df.iloc[0]
    weights = float(first["weight_bytes"]) / GB
    capacity = float(first["memory_capacity_bytes"]) / GB
    usable = float(first["usable_memory_bytes"]) / GB
    top = max(float(df["memory_required_bytes"].max()) / GB, capacity) * 3
    box = ([x[0], x[1], x[1], x[0], x[0]], [usable, usable, top, top, usable])
    style = {"fill": "toself", "fillcolor": OOM_FILL, "line": {"width": 0}, "hoverinfo": "name"}
    traces = [_trace(*box, _("Out of memory (above the usable memory)"), mode="lines", **style)]
    traces += _context_lines(df=df, column="memory_required_bytes", unit="B", scale=GB, word=word)
    held = {"usable": gb(usable * GB), "reserve": pct(float(first["memory_reserve"]))}
    runtime = float(first.get("runtime_memory_bytes", 0.0))
    if runtime > 0:  # the stack's rule sets its runtime memory aside before the reserve
        name = _(
            "Usable {usable}: capacity less {runtime} runtime memory and the {reserve} reserve "
            "(the fit's limit)"
        ).format(runtime=gb(runtime), **held)
    else:
        name = _("Usable {usable}: capacity less the {reserve} reserve (the fit's limit)").format(
            **held
        )
    name = wrap_lines(name, LEGEND_COLUMNS)
    traces.append(_line(x=x, y=[usable] * 2, name=name, color=CAPACITY_COLOR, dash="solid"))
    cap = _("Capacity {capacity} ({binary})").format(
        capacity=gb(capacity * GB), binary=fmt_bytes(capacity * GB, binary=True)
    )
    traces.append(_line(x=x, y=[capacity] * 2, name=cap, color=GAP_COLOR, dash="dot", width=1.0))
    name = _("Weights alone {weights}").format(weights=gb(weights * GB))
    traces.append(_line(x=x, y=[weights] * 2, name=name, color=GAP_COLOR, dash="dash"))
    at = df["context"].to_numpy() == current[1]
    most = int(df["max_batch_size"].to_numpy()[at][0]) if at.any() else 0
    if x[0] <= most <= x[1]:
        name = _("Max batch {batch} at {word} {tokens} (fits in the usable memory)").format(
            batch=f"{most:,}", word=_(word), tokens=f"{current[1]:,}"
        )
        name = wrap_lines(name, LEGEND_COLUMNS)
        traces.append(
            _line(
                x=[most] * 2, y=[weights / 3, usable], name=name, color=CAPACITY_COLOR, dash="dot"
            )
        )
    traces += _current(df=df, column="memory_required_bytes", current=current, scale=GB, word=word)
    return _figure(
        traces=traces,
        title=_("Memory: weights + KV cache"),
        y_title=_("Memory needed (GB)"),
        df=df,
        x_range=x,
    )


def headline_metrics(r: Mapping) -> list[tuple[str, str, str]]:
    """(label with unit, value, help) for the metric cards in rows of 4, 3, 3 (`METRIC_ROWS`):
    speed, the regime, memory."""
    ridge = _("effective ridge {ridge}").format(
        ridge=fmt(r["effective_ridge_flop_per_byte"], "FLOP/byte")
    )
    ai = {p: fmt(r[f"{p}_arithmetic_intensity_flop_per_byte"]) for p in PHASES}
    most = _("the largest whose weights + KV cache fit in capacity")
    memory = f"{gb(r['memory_required_bytes'])} / {gb(r['memory_capacity_bytes'])}"
    prompt = _("Prefill of the {prompt}-token prompt").format(prompt=f"{int(r['prompt']):,}")
    return [
        (_("TPOT"), ms(r["tpot_ms"]), _("Time per output token: one decode step")),
        (_("Per user (tokens/s)"), fmt(r["tokens_per_s"]), _("1 ÷ TPOT")),
        (_("Aggregate (tokens/s)"), fmt(r["aggregate_tokens_per_s"]), _("batch ÷ TPOT")),
        (_("TTFT"), ms(r["ttft_ms"]), prompt),
        (
            _("Decode bottleneck"),
            _(str(r["decode_bottleneck"])),
            f"{ai['decode']} FLOP/byte; {ridge}",
        ),
        (
            _("Prefill bottleneck"),
            _(str(r["prefill_bottleneck"])),
            f"{ai['prefill']} FLOP/byte; {ridge}",
        ),
        (_("Decode intensity (FLOP/byte)"), ai["decode"], ridge),
        (
            _("Memory used / capacity"),
            memory,
            _("{split}; GB = 10⁹ bytes").format(split=memory_split(r)),
        ),
        (_("Max batch at this context (sequences)"), f"{int(r['max_batch_at_context']):,}", most),
        (_("Max context at this batch (tokens)"), f"{int(r['max_context_at_batch']):,}", most),
    ]
