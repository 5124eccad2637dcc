"""Plotly builders and plain-language text for the LLM decode page (docs/model.md, "LLM decode").

Pure functions over `engine.decode(...).as_dict()` (a mapping, `r`) and `engine.decode_sweep`
DataFrames (`df`): no streamlit, no physics; numbers are engine figures, at most scaled for
display (bytes to decimal GB, data/README.md) or divided by another (a share). The roofline is
ui.figures.roofline_figure with a request's two phases, prefill (the prompt in one pass) and
the decode step (one token per sequence), as its operating points (Pope et al., MLSys 2023).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.common import num
from ui.figures import COLORS, roof_table, roofline_figure

GB = 1e9  # decimal gigabytes (data/README.md)
CAPACITY_COLOR = "#d62728"
OOM_FILL = "rgba(214, 39, 40, 0.12)"
PHASES = ("prefill", "decode")
METRIC_ROWS = (4, 3, 3)
SPEED_CHARTS = {  # column: (title, y-axis title, unit)
    "aggregate_tokens_per_s": ("Aggregate decode throughput", "Aggregate (tokens/s)", "tokens/s"),
    "tpot_ms": ("Time per output token (TPOT)", "TPOT (ms)", "ms"),
}
TABLE_HEADERS = {
    "context": "Context (tokens)",
    "batch_size": "Batch (sequences)",
    "tpot_ms": "TPOT (ms)",
    "tokens_per_s": "Per user (tokens/s)",
    "aggregate_tokens_per_s": "Aggregate (tokens/s)",
    "ttft_ms": "TTFT (ms)",
    "decode_bottleneck": "Decode bound",
    "decode_arithmetic_intensity_flop_per_byte": "Decode intensity (FLOP/byte)",
    "kv_cache_bytes": "KV cache (GB)",
    "memory_required_bytes": "Memory needed (GB)",
    "fits_in_memory": "Fits",
}


def gb(n_bytes: float, digits: int = 4) -> str:
    """Bytes as decimal GB for reading: 16060000000 -> '16.06'."""
    return num(float(n_bytes) / GB, digits)


def memory_split(r: Mapping) -> str:
    """'weights 16.06 GB + KV cache 0.5369 GB, fits' for the memory metric."""
    fits = "fits" if r["fits_in_memory"] else "does NOT fit"
    return f"weights {gb(r['weight_bytes'])} GB + KV cache {gb(r['kv_cache_bytes'])} GB, {fits}"


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
    row = {k: r[k] for k in ("hardware", "peak_tflops", "ridge_flop_per_byte")}
    row["efficiency"] = r["assumptions"]["efficiency"]
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
    """Log-log against batch; a short batch list is the x ticks, the legend sits below."""
    batches = np.unique(df["batch_size"].to_numpy()).tolist()
    xaxis = {"type": "log", "title": {"text": "Batch (concurrent sequences)"}}
    xaxis |= {"tickvals": batches} if len(batches) <= 12 else {"dtick": 1}
    if x_range is not None:
        xaxis["range"] = [np.log10(x_range[0]), np.log10(x_range[1])]
    layout = {
        "title": {"text": title},
        "xaxis": xaxis,
        "yaxis": {"type": "log", "title": {"text": y_title}},
        "height": 480,
        "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
        "legend": {"orientation": "h", "y": -0.2, "font": {"size": 11}},
        "hovermode": "closest",
    }
    return go.Figure(data=traces, layout=layout, _validate=False)  # dicts; tests validate


def _current(df: pd.DataFrame, column: str, current: tuple[int, int], scale=1.0) -> list:
    """A star on this scenario's (batch, context) row, if the sweep holds it."""
    at = (df["batch_size"].to_numpy() == current[0]) & (df["context"].to_numpy() == current[1])
    if not at.any():
        return []
    name = f"This scenario (batch {current[0]:,}, context {current[1]:,})"
    marker = {"symbol": "star", "size": 16, "color": "black"}
    y = df[column].to_numpy(dtype=float)[at][:1] / scale
    return [_trace([current[0]], y, name, mode="markers", marker=marker, hoverinfo="name")]


def _context_lines(df: pd.DataFrame, column: str, unit: str, scale: float = 1.0) -> list[dict]:
    """One line per context of `column` (÷ scale) against batch; ✕ marks what does not fit."""
    # numpy, not pandas row filters: several times faster on the sweep's 54 columns
    ctxs, batches = df["context"].to_numpy(), df["batch_size"].to_numpy()
    values = df[column].to_numpy(dtype=float) / scale
    all_fits = df["fits_in_memory"].to_numpy(dtype=bool)
    bounds = np.asarray(df["decode_bottleneck"], dtype=str)
    order, traces = np.lexsort((batches, ctxs)), []
    for i, ctx in enumerate(np.unique(ctxs)):
        rows = order[ctxs[order] == ctx]
        fits = all_fits[rows]
        extra = np.column_stack([bounds[rows], np.where(fits, "fits", "does NOT fit")])
        hover = f"context {ctx:,}<br>batch %{{x:,}}<br>%{{y:,.4g}} {unit}<br>"
        hover += "%{customdata[0]}-bound decode · %{customdata[1]} in memory<extra></extra>"
        style = {
            "line": {"color": COLORS[i % len(COLORS)], "width": 2},
            "marker": {"symbol": np.where(fits, "circle", "x").tolist(), "size": 7},
        }
        x, y, name = batches[rows], values[rows], f"context {ctx:,} tokens"
        traces.append(
            _trace(x, y, name, mode="lines+markers", customdata=extra, hovertemplate=hover, **style)
        )
    key = {"symbol": "x", "size": 8, "color": "#555"}  # a legend-only entry explaining ✕
    return [*traces, _trace([None], [None], "✕ does not fit in memory", mode="markers", marker=key)]


def speed_figure(df: pd.DataFrame, column: str, current: tuple[int, int]) -> go.Figure:
    """`column` ("aggregate_tokens_per_s" or "tpot_ms") against batch, one line per context,
    this scenario (batch, context) starred; log-log."""
    title, y_title, unit = SPEED_CHARTS[column]
    traces = [*_context_lines(df, column, unit), *_current(df, column, current)]
    return _figure(traces, title, y_title, df)


def _line(x: list[float], y: list[float], name: str, color: str, dash: str) -> dict:
    line = {"color": color, "dash": dash, "width": 2}
    return _trace(x, y, name, mode="lines", line=line, hoverinfo="name")


def memory_figure(df: pd.DataFrame, current: tuple[int, int]) -> go.Figure:
    """Weights + KV cache (GB) against batch, one line per context: the capacity line, the
    out-of-memory region above it shaded, and the largest batch that fits at current[1]."""
    b = df["batch_size"].to_numpy(dtype=float)
    x = [b.min() / 1.5, b.max() * 1.5]
    weights = float(df["weight_bytes"].iloc[0]) / GB
    capacity = float(df["memory_capacity_bytes"].iloc[0]) / GB
    top = max(float(df["memory_required_bytes"].max()) / GB, capacity) * 3
    box = ([x[0], x[1], x[1], x[0], x[0]], [capacity, capacity, top, top, capacity])
    style = {"fill": "toself", "fillcolor": OOM_FILL, "line": {"width": 0}, "hoverinfo": "name"}
    traces = [_trace(*box, "Out of memory (above capacity)", mode="lines", **style)]
    traces += _context_lines(df, "memory_required_bytes", "GB", GB)
    cap = f"Capacity {num(capacity)} GB ({num(capacity * GB / 2**30)} GiB)"
    traces.append(_line(x, [capacity] * 2, cap, CAPACITY_COLOR, "solid"))
    traces.append(_line(x, [weights] * 2, f"Weights alone {num(weights)} GB", "#555", "dash"))
    at = df["context"].to_numpy() == current[1]
    most = int(df["max_batch_at_context"].to_numpy()[at][0]) if at.any() else 0
    if x[0] <= most <= x[1]:
        name = f"Max batch {most:,} at context {current[1]:,}"
        traces.append(_line([most] * 2, [weights / 3, capacity], name, CAPACITY_COLOR, "dot"))
    traces += _current(df, "memory_required_bytes", current, GB)
    return _figure(traces, "Memory: weights + KV cache", "Memory needed (GB)", df, x)


def display_table(df: pd.DataFrame) -> pd.DataFrame:
    """The sweep's headline columns under readable headers with units (bytes as GB)."""
    out = df[list(TABLE_HEADERS)].copy()
    for column in ("kv_cache_bytes", "memory_required_bytes"):
        out[column] = out[column] / GB
    return out.rename(columns=TABLE_HEADERS).reset_index(drop=True)


def _phase_lines(r: Mapping, hw_name: str) -> list[str]:
    ai, ridge = r["decode_arithmetic_intensity_flop_per_byte"], r["effective_ridge_flop_per_byte"]
    where = "far below" if ai < ridge / 4 else ("below" if ai < ridge else "above")
    prompt, batch = int(r["prompt"]), int(r["batch_size"])
    return [
        f"**Decode is {r['decode_bottleneck']}-bound.** Each step makes one token per sequence "
        f"but reads all {gb(r['weight_bytes'])} GB of weights and {gb(r['kv_cache_bytes'])} GB "
        f"of KV cache for {num(r['decode_flops'] / 1e9)} GFLOP: {num(ai, 3)} FLOP/byte, {where} "
        f"{hw_name}'s effective ridge of {num(ridge, 3)} FLOP/byte. TPOT {num(r['tpot_ms'])} ms "
        f"= max(memory {num(r['decode_t_memory_ms'])}, compute {num(r['decode_t_compute_ms'])})"
        f" + {num(r['decode_t_overhead_ms'])} ms fixed overhead.",
        f"**Prefill is {r['prefill_bottleneck']}-bound.** The {prompt:,}-token prompt goes "
        f"through in one pass, so each weight read serves {prompt:,} × {batch:,} tokens: "
        f"{num(r['prefill_arithmetic_intensity_flop_per_byte'], 3)} FLOP/byte, TTFT "
        f"{num(r['ttft_ms'])} ms.",
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
        text += (
            f": aggregate throughput goes from {num(lo['aggregate_tokens_per_s'])} tokens/s at "
            f"batch {lo['batch_size']:,} to {num(hi['aggregate_tokens_per_s'])} at batch "
            f"{hi['batch_size']:,} (the largest in the sweep that fits at this context)"
        )
    cross, last = first_compute_bound(df, int(r["context"])), rows.iloc[-1]
    if cross is not None:
        fits = "" if cross["fits_in_memory"] else " (but that batch does not fit in memory)"
        return text + f"; decode turns compute-bound at batch {cross['batch_size']:,}{fits}."
    return text + (
        f"; it stays memory-bound up to batch {last['batch_size']:,} "
        f"({num(last['decode_arithmetic_intensity_flop_per_byte'], 3)} FLOP/byte), because "
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
        f"{gb(r['memory_capacity_bytes'])} GB; at batch {int(r['batch_size']):,}, contexts up "
        f"to {int(r['max_context_at_batch']):,} tokens."
        if r["fits_in_memory"]
        else f"⚠️ **Does not fit.** This scenario needs {gb(r['memory_required_bytes'])} GB, "
        f"more than the {gb(r['memory_capacity_bytes'])} GB capacity: lower the batch or "
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
    ridge = f"effective ridge {num(r['effective_ridge_flop_per_byte'], 3)} FLOP/byte"
    ai = {p: num(r[f"{p}_arithmetic_intensity_flop_per_byte"], 3) for p in PHASES}
    most = "the largest whose weights + KV cache fit in capacity"
    memory = f"{gb(r['memory_required_bytes'])} / {gb(r['memory_capacity_bytes'])}"
    return [
        ("TPOT (ms)", num(r["tpot_ms"]), "Time per output token: one decode step"),
        ("Per user (tokens/s)", num(r["tokens_per_s"]), "1 ÷ TPOT"),
        ("Aggregate (tokens/s)", num(r["aggregate_tokens_per_s"]), "batch ÷ TPOT"),
        ("TTFT (ms)", num(r["ttft_ms"]), f"Prefill of the {int(r['prompt']):,}-token prompt"),
        ("Decode bottleneck", str(r["decode_bottleneck"]), f"{ai['decode']} FLOP/byte; {ridge}"),
        ("Prefill bottleneck", str(r["prefill_bottleneck"]), f"{ai['prefill']} FLOP/byte; {ridge}"),
        ("Decode intensity (FLOP/byte)", ai["decode"], ridge),
        ("Memory used / capacity (GB)", memory, f"{memory_split(r)}; GB = 10⁹ bytes"),
        ("Max batch at this context (sequences)", f"{int(r['max_batch_at_context']):,}", most),
        ("Max context at this batch (tokens)", f"{int(r['max_context_at_batch']):,}", most),
    ]
