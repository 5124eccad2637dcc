"""Plotly builders and plain-language text for the LLM decode page (docs/model.md, "LLM decode").

Pure functions over `engine.decode(...).as_dict()` (a mapping, `r`: the tutorial view) and the
serving page's curves (`df`: `engine.serve_sweep` rows, ui.decode.view.curves): no streamlit,
no physics; numbers are engine figures, at most scaled for
display (bytes to decimal GB, data/README.md) or divided by another (a share), and shown through
ui.core.format (SI prefixes, 3-4 significant figures, decade ticks on log axes). The roofline is
ui.charts.roofline.roofline_figure with a request's two phases, prefill (the prompt in one pass) and
the decode step (one token per sequence), as its operating points (Pope et al., MLSys 2023).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts.roofline import roof_table, roofline_figure
from ui.charts.theme import COLORS, GAP_COLOR, WEBGL_POINTS, legend_below, log_axis, wrap_title
from ui.core.format import fmt, fmt_all, fmt_bytes, pct

GB = 1e9  # decimal gigabytes (data/README.md)
CAPACITY_COLOR = "#d62728"
STAR_COLOR = "#e6a800"  # this scenario: amber reads on light and dark backgrounds
OOM_FILL = "rgba(214, 39, 40, 0.12)"
PHASES = ("prefill", "decode")
METRIC_ROWS = (4, 3, 3)
SPEED_CHARTS = {  # column: (title, y-axis title, ui.core.format unit, factor to that unit)
    "aggregate_tokens_per_s": ("Aggregate throughput", "Aggregate (tokens/s)", "tokens/s", 1.0),
    "tpot_ms": ("Time per output token (TPOT)", "TPOT (ms)", "s", 1e-3),
}


def gb(n_bytes: float) -> str:
    """Bytes for reading, decimal units: 16060000000 -> '16.1 GB' (ui.core.format.fmt_bytes)."""
    return fmt_bytes(n_bytes)


def ms(value_ms: float) -> str:
    """A duration given in ms, for reading: 54.23 -> '54.2 ms', 0.5 -> '500 µs'."""
    return fmt(float(value_ms) * 1e-3, "s")


def memory_split(r: Mapping) -> str:
    """'weights 16.1 GB + KV cache 537 MB, fits' for the memory metric."""
    fits = "fits" if r["fits_in_memory"] else "does NOT fit"
    return f"weights {gb(r['weight_bytes'])} + KV cache {gb(r['kv_cache_bytes'])}, {fits}"


def phase_points(r: Mapping) -> pd.DataFrame:
    """The request's two operating points (prefill, decode) in roofline_figure's columns."""
    batch, latency = int(r["batch_size"]), {"prefill": r["ttft_ms"], "decode": r["tpot_ms"]}
    labels = {
        "prefill": f"prefill: {int(r['prompt']):,}-token prompt × batch {batch:,} (TTFT)",
        "decode": f"decode step: batch {batch:,} at context {int(r['context']):,} (TPOT)",
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
    fig = roofline_figure(points, roofs, "mac2", title)
    for p in points.itertuples():  # annotations on log axes take log10 positions
        fig.add_annotation(
            x=np.log10(p.arithmetic_intensity_flop_per_byte),
            y=np.log10(p.attainable_tflops),
            text=f"<b>{p.phase}</b>",
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
    xaxis = log_axis("Batch (concurrent sequences)", batches, x_range or ())
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
    name = f"This scenario (batch {current[0]:,}, {word} {current[1]:,})"
    marker = {"symbol": "star", "size": 16, "color": STAR_COLOR, "line": {"width": 1}}
    y = df[column].to_numpy(dtype=float)[at][:1] / scale
    return [_trace([current[0]], y, name, mode="markers", marker=marker, hoverinfo="name")]


def _context_lines(
    df: pd.DataFrame, column: str, unit: str, scale: float = 1.0, si: float = 1.0, word="context"
) -> list[dict]:
    """Per context, `column` (÷ scale) against batch: a solid line through the batches that fit
    in memory, then a faint dotted one with ✕ from the last that fits through those that do
    not (hypothetical: nothing is drawn as if it fitted). Hover text: `column` × `si` in
    ui.core.format's `unit`; `word` names the `context` column ("input" on the serving page,
    where it holds the input tokens)."""
    # numpy, not pandas row filters: several times faster on the sweep's 54 columns
    ctxs, batches = df["context"].to_numpy(), df["batch_size"].to_numpy()
    values = df[column].to_numpy(dtype=float) / scale
    all_fits = df["fits_in_memory"].to_numpy(dtype=bool)
    bounds = np.asarray(df["decode_bottleneck"], dtype=str)
    order, traces = np.lexsort((batches, ctxs)), []
    for i, ctx in enumerate(np.unique(ctxs)):
        rows = order[ctxs[order] == ctx]
        fits = all_fits[rows]
        shown = fmt_all(values[rows] * scale * si, unit)
        extra = np.column_stack([bounds[rows], np.where(fits, "fits", "does NOT fit"), shown])
        hover = f"{word} {ctx:,} tokens<br>batch %{{x:,}}<br>%{{customdata[2]}}<br>"
        hover += "%{customdata[0]}-bound decode · %{customdata[1]} in memory<extra></extra>"
        color, name = COLORS[i % len(COLORS)], f"{word} {ctx:,} tokens"
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
                    f"{name}: does not fit",
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
    label = NO_FIT_LEGEND
    return [*traces, _trace([None], [None], label, mode="lines+markers", marker=key, line=line)]


NO_FIT_LEGEND = "┈✕┈ does not fit in memory (hypothetical)"


def speed_figure(
    df: pd.DataFrame, column: str, current: tuple[int, int], word: str = "context"
) -> go.Figure:
    """`column` ("aggregate_tokens_per_s" or "tpot_ms") against batch, one line per context
    (solid while it fits, dotted past that), this scenario (batch, context) starred; log-log."""
    title, y_title, unit, si = SPEED_CHARTS[column]
    traces = [*_context_lines(df, column, unit, si=si, word=word)]
    traces += _current(df, column, current, word=word)
    return _figure(traces, title, y_title, df)


def _line(x: list[float], y: list[float], name: str, color: str, dash: str, width=2.0) -> dict:
    line = {"color": color, "dash": dash, "width": width}
    return _trace(x, y, name, mode="lines", line=line, hoverinfo="name")


def memory_figure(df: pd.DataFrame, current: tuple[int, int], word: str = "context") -> go.Figure:
    """Weights + KV cache (GB) against batch, one line per context: the limit at usable memory
    (capacity less the reserve: what the fit uses), the out-of-memory region above it shaded,
    the physical capacity, and the engine's largest batch that fits at current[1]
    (`max_batch_size`).

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
    traces = [_trace(*box, "Out of memory (above the usable memory)", mode="lines", **style)]
    traces += _context_lines(df, "memory_required_bytes", "B", GB, word=word)
    reserve = pct(float(first["memory_reserve"]))
    name = f"Usable {gb(usable * GB)}: capacity less the {reserve} reserve (the fit's limit)"
    traces.append(_line(x, [usable] * 2, name, CAPACITY_COLOR, "solid"))
    cap = f"Capacity {gb(capacity * GB)} ({fmt_bytes(capacity * GB, binary=True)})"
    traces.append(_line(x, [capacity] * 2, cap, GAP_COLOR, "dot", 1.0))
    name = f"Weights alone {gb(weights * GB)}"
    traces.append(_line(x, [weights] * 2, name, GAP_COLOR, "dash"))
    at = df["context"].to_numpy() == current[1]
    most = int(df["max_batch_size"].to_numpy()[at][0]) if at.any() else 0
    if x[0] <= most <= x[1]:
        name = f"Max batch {most:,} at {word} {current[1]:,} (fits in the usable memory)"
        traces.append(_line([most] * 2, [weights / 3, usable], name, CAPACITY_COLOR, "dot"))
    traces += _current(df, "memory_required_bytes", current, GB, word)
    return _figure(traces, "Memory: weights + KV cache", "Memory needed (GB)", df, x)


def _phase_lines(r: Mapping, hw_name: str) -> list[str]:
    ai, ridge = r["decode_arithmetic_intensity_flop_per_byte"], r["effective_ridge_flop_per_byte"]
    where = "far below" if ai < ridge / 4 else ("below" if ai < ridge else "above")
    prompt, batch = int(r["prompt"]), int(r["batch_size"])
    return [
        f"**Decode is {r['decode_bottleneck']}-bound.** Each step makes one token per sequence "
        f"but reads all {gb(r['weight_bytes'])} of weights and {gb(r['kv_cache_bytes'])} "
        f"of KV cache for {fmt(r['decode_flops'], 'FLOP')}: {fmt(ai, 'FLOP/byte')}, {where} "
        f"{hw_name}'s effective ridge of {fmt(ridge, 'FLOP/byte')}. TPOT {ms(r['tpot_ms'])} "
        f"= max(memory {ms(r['decode_t_memory_ms'])}, compute {ms(r['decode_t_compute_ms'])})"
        f" + {ms(r['decode_t_overhead_ms'])} fixed overhead.",
        f"**Prefill is {r['prefill_bottleneck']}-bound.** The {prompt:,}-token prompt goes "
        f"through in one pass, so each weight read serves {prompt:,} × {batch:,} tokens: "
        f"{fmt(r['prefill_arithmetic_intensity_flop_per_byte'], 'FLOP/byte')}, TTFT "
        f"{ms(r['ttft_ms'])}.",
    ]


def first_compute_bound(df: pd.DataFrame, context: int) -> pd.Series | None:
    """The sweep's smallest batch at `context` whose decode step is compute-bound, or None."""
    rows = df[(df["context"] == context) & (df["decode_bottleneck"] == "compute")]
    return None if rows.empty else rows.loc[rows["batch_size"].idxmin()]


def _batch_line(r: Mapping, df: pd.DataFrame) -> str:
    rows = df[df["context"] == r["context"]].sort_values("batch_size")
    fit, text = rows[rows["fits_in_memory"]], "- **Batch** shares the weight read among sequences"
    if len(fit) > 1:
        lo, hi = fit.iloc[0], fit.iloc[-1]
        rate = [fmt(row["aggregate_tokens_per_s"], "tokens/s") for row in (lo, hi)]
        text += (
            f": aggregate throughput goes from {rate[0]} at batch {lo['batch_size']:,} to "
            f"{rate[1]} at batch {hi['batch_size']:,} (the largest in the sweep that fits at "
            "this context)"
        )
    cross, last = first_compute_bound(df, int(r["context"])), rows.iloc[-1]
    if cross is not None:
        fits = "" if cross["fits_in_memory"] else " (but that batch does not fit in memory)"
        return text + f"; decode turns compute-bound at batch {cross['batch_size']:,}{fits}."
    return text + (
        f"; it stays memory-bound up to batch {last['batch_size']:,} "
        f"({fmt(last['decode_arithmetic_intensity_flop_per_byte'], 'FLOP/byte')}), because "
        "every extra sequence adds its own KV-cache read."
    )


def explain_decode(r: Mapping, df: pd.DataFrame, hw_name: str) -> list[str]:
    """The regime in plain language and what moves it, with the engine's numbers.

    Args:
        r: `engine.decode(...).as_dict()` of the page's scenario.
        df: the page's `engine.decode_sweep` (it holds r's context).
        hw_name: the accelerator's display name.
    """
    weights, kv = (r[k] / r["decode_bytes"] for k in ("weight_bytes", "kv_cache_bytes"))
    fit = (
        f"**Capacity.** At context {int(r['context']):,} at most "
        f"{int(r['max_batch_at_context']):,} sequences fit in "
        f"{gb(r['memory_capacity_bytes'])}; at batch {int(r['batch_size']):,}, contexts up "
        f"to {int(r['max_context_at_batch']):,} tokens."
        if r["fits_in_memory"]
        else f"⚠️ **Does not fit.** This scenario needs {gb(r['memory_required_bytes'])}, "
        f"more than the {gb(r['memory_capacity_bytes'])} capacity: lower the batch or "
        "context, quantise, or shard."
    )
    return [
        *_phase_lines(r, hw_name),
        f"**What moves it.** Weights are {weights:.0%} and the KV cache {kv:.0%} of the "
        "bytes a decode step reads.\n" + _batch_line(r, df) + "\n"
        f"- **KV-cache quantisation** (now {r['kv_precision']}): fp8/int8 halve an fp16 cache "
        "and int4 quarters it: fewer bytes per step, a larger batch and context fit.\n"
        f"- **Weight quantisation** (now {r['precision']}) cuts the weight bytes every step "
        "reads; **more bandwidth** shortens a memory-bound step in proportion.",
        fit,
    ]


def headline_metrics(r: Mapping) -> list[tuple[str, str, str]]:
    """(label with unit, value, help) for the metric cards in rows of 4, 3, 3 (`METRIC_ROWS`):
    speed, the regime, memory."""
    ridge = f"effective ridge {fmt(r['effective_ridge_flop_per_byte'], 'FLOP/byte')}"
    ai = {p: fmt(r[f"{p}_arithmetic_intensity_flop_per_byte"]) for p in PHASES}
    most = "the largest whose weights + KV cache fit in capacity"
    memory = f"{gb(r['memory_required_bytes'])} / {gb(r['memory_capacity_bytes'])}"
    return [
        ("TPOT", ms(r["tpot_ms"]), "Time per output token: one decode step"),
        ("Per user (tokens/s)", fmt(r["tokens_per_s"]), "1 ÷ TPOT"),
        ("Aggregate (tokens/s)", fmt(r["aggregate_tokens_per_s"]), "batch ÷ TPOT"),
        ("TTFT", ms(r["ttft_ms"]), f"Prefill of the {int(r['prompt']):,}-token prompt"),
        ("Decode bottleneck", str(r["decode_bottleneck"]), f"{ai['decode']} FLOP/byte; {ridge}"),
        ("Prefill bottleneck", str(r["prefill_bottleneck"]), f"{ai['prefill']} FLOP/byte; {ridge}"),
        ("Decode intensity (FLOP/byte)", ai["decode"], ridge),
        ("Memory used / capacity", memory, f"{memory_split(r)}; GB = 10⁹ bytes"),
        ("Max batch at this context (sequences)", f"{int(r['max_batch_at_context']):,}", most),
        ("Max context at this batch (tokens)", f"{int(r['max_context_at_batch']):,}", most),
    ]
