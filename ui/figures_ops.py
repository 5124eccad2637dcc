"""Per-operator figures of the serving model: the operator roofline and the step-time breakdown.

Pure functions over the operator table of a prefill and a decode step (ui.ops_view.step_table:
`engine.operators` rows with a `phase` column): no streamlit, no physics. Each operator sits at
its own arithmetic intensity and achieved FLOP/s (FLOPs ÷ its own time), so it lies on the roof
of its class; the whole step sits at the step's intensity, its open point at the operators'
time and its filled point at the step time, the dotted gap between them the fixed overhead and
communication (docs/model.md, "Serving model"). Styling follows ui.figures: one colour per
accelerator, solid memory roof, dashed peak compute roof, dotted effective roofs, decade ticks.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from engine import BYTES_PER_PARAM
from ui.format import fmt, pct
from ui.theme import COLORS, GAP_COLOR, legend_below, log_axis, wrap_title

TFLOPS = 1e12  # the y axis is in TFLOP/s, as on every roofline of the app
NOT_PLOTTED = ("communication", "overhead")  # no FLOPs: bars, not roofline points
SYMBOLS = {"prefill": "triangle-up", "decode": "circle"}
PHASE_LABELS = {"prefill": "prefill (TTFT)", "decode": "decode step (TPOT)"}
# bar segment: (label, the engine's op_class values in it, colour)
GROUPS = (
    ("attention", ("attention",), "#1f77b4"),
    ("GEMMs / FFN", ("gemm",), "#2ca02c"),
    ("experts", ("expert",), "#9467bd"),
    ("norms, embedding", ("other",), "#17becf"),
    ("communication", ("communication",), "#ff7f0e"),
    ("overhead", ("overhead",), GAP_COLOR),
)
CLASS_ROOFS = {"gemm": "GEMMs", "attention": "attention", "expert": "experts"}


def roof_values(hw, precision: str, assumptions: Mapping) -> dict:
    """One device's roofs with a result's assumptions (user names, as in `as_dict()`).

    Attention runs at the 16-bit peak when weights are narrower (docs/model.md)."""
    eff = float(assumptions["efficiency"])
    wide = precision if BYTES_PER_PARAM[precision] >= 2 else "fp16"
    eta = {"gemm": eff}
    for cls, key in (("attention", "attention_efficiency"), ("expert", "expert_efficiency")):
        value = assumptions.get(key)
        eta[cls] = eff if value is None else float(value)
    return {
        "name": str(hw.name),
        "peak": hw.peak_for(precision)[0],
        "attention_peak": hw.peak_for(wide)[0],
        "bandwidth": hw.memory_bandwidth_bytes_per_s * float(assumptions["bandwidth_efficiency"]),
        "eta": eta,
    }


def operator_points(ops: pd.DataFrame) -> pd.DataFrame:
    """The operators with FLOPs (one row each), with achieved FLOP/s and share of the step."""
    step_ms = ops.groupby("phase")["total_time_ms"].transform("sum")
    keep = (ops["flops"] > 0) & ~ops["op_class"].isin(NOT_PLOTTED)
    out = ops[keep].assign(share=(ops["total_time_ms"] / step_ms)[keep])
    return out.assign(achieved_flop_per_s=out["flops"] / (out["time_ms"] * 1e-3))


def step_points(ops: pd.DataFrame) -> pd.DataFrame:
    """Per phase: FLOPs, bytes, the operators' time, overhead + communication, the step time."""
    rows = []
    for phase, part in ops.groupby("phase", sort=False):
        compute = part[~part["op_class"].isin(NOT_PLOTTED)]
        count = compute["count"].to_numpy(dtype=float)
        flops = float((count * compute["flops"]).sum())
        nbytes = float((count * compute["bytes"]).sum())
        step_s = float(part["total_time_ms"].sum()) * 1e-3
        extra_s = float(part["total_time_ms"][part["op_class"].isin(NOT_PLOTTED)].sum()) * 1e-3
        rows.append(
            {"phase": phase, "flop": flops, "bytes": nbytes, "step_s": step_s,
             "gap_s": extra_s, "ops_s": step_s - extra_s}
        )  # fmt: skip
    return pd.DataFrame(rows)


def _roof_traces(roof: dict, x_lo: float, x_hi: float, classes: set[str]) -> list[dict]:
    """Memory roof (solid), peak compute (dashed), peak × η per operator class (dotted)."""
    color, name, bw = COLORS[0], html.escape(roof["name"]), roof["bandwidth"]
    peak = max(roof["peak"], roof["attention_peak"])
    ridge = peak / bw
    traces = [
        _line([x_lo, ridge], [bw * x_lo / TFLOPS, peak / TFLOPS], "solid", color,
              f"Memory roof {name} ({fmt(bw, 'B/s')} with η_mem)"),
        _line([ridge, x_hi], [peak / TFLOPS] * 2, "dash", color,
              f"Compute roof {name} (peak {fmt(peak, 'FLOP/s')})"),
    ]  # fmt: skip
    seen = set()
    for cls in ("gemm", "attention", "expert"):
        top = (roof["attention_peak"] if cls == "attention" else roof["peak"]) * roof["eta"][cls]
        if (cls not in classes and cls != "gemm") or round(top) in seen:
            continue  # one dotted roof per distinct level the operators use
        seen.add(round(top))
        label = f"{CLASS_ROOFS[cls]} peak × η {pct(roof['eta'][cls])}: {fmt(top, 'FLOP/s')}"
        traces.append(_line([top / bw, x_hi], [top / TFLOPS] * 2, "dot", color, label))
    return traces


def _line(x, y, dash: str, color: str, name: str) -> dict:
    line = {"color": color, "width": 2.5 if dash == "solid" else 2, "dash": dash}
    return {"type": "scatter", "x": x, "y": y, "mode": "lines", "name": name, "line": line,
            "hovertemplate": f"{name}<extra></extra>"}  # fmt: skip


def operator_hover(p, also: list[str]) -> str:
    """One operator's hover: name, layers, count, FLOPs, bytes, time, bound (escaped)."""
    text = (
        f"<b>{html.escape(str(p.name))}</b> ({PHASE_LABELS[p.phase]})<br>"
        f"layers {html.escape(str(p.layer))} · ×{p.count:,}<br>"
        f"{fmt(p.flops, 'FLOP')}, {fmt(p.bytes, 'B')} each · "
        f"intensity {fmt(p.arithmetic_intensity_flop_per_byte, 'FLOP/B')}<br>"
        f"time {fmt(p.time_ms * 1e-3, 's')} each, {fmt(p.total_time_ms * 1e-3, 's')} in all "
        f"({pct(p.share)} of the step)<br>{html.escape(str(p.bottleneck))}-bound · "
        f"achieved {fmt(p.achieved_flop_per_s, 'FLOP/s')}"
    )
    if also:
        text += "<br>same point as: " + ", ".join(html.escape(a) for a in also)
    return text


def _hovers(points: pd.DataFrame) -> list[str]:
    """Hover per point; coincident points (within 1 %) name each other, since only one shows."""
    x = np.round(np.log10(points["arithmetic_intensity_flop_per_byte"].to_numpy()), 2)
    y = np.round(np.log10(points["achieved_flop_per_s"].to_numpy()), 2)
    keys = list(zip(points["phase"], x, y, strict=True))
    names = points["name"].astype(str).tolist()
    return [
        operator_hover(p, [n for k, n in zip(keys, names, strict=True) if k == key and n != p.name])
        for p, key in zip(points.itertuples(), keys, strict=True)
    ]


def _operator_traces(points: pd.DataFrame) -> list[dict]:
    """One trace per phase; marker area ∝ the operator's share of its step time."""
    hover = np.asarray(_hovers(points), dtype=object)
    traces = []
    for phase in ("prefill", "decode"):
        at = (points["phase"] == phase).to_numpy()
        if not at.any():
            continue
        part = points[at]
        size = 7 + 18 * np.sqrt(part["share"].to_numpy(dtype=float))
        marker = {"symbol": SYMBOLS[phase], "size": size, "color": COLORS[0],
                  "opacity": 0.8, "line": {"width": 1, "color": GAP_COLOR}}  # fmt: skip
        traces.append(
            {"type": "scatter", "mode": "markers", "name": f"Operators: {PHASE_LABELS[phase]}",
             "x": part["arithmetic_intensity_flop_per_byte"].to_numpy(),
             "y": part["achieved_flop_per_s"].to_numpy() / TFLOPS, "marker": marker,
             "text": part["name"].astype(str).map(html.escape).to_numpy(dtype=object),
             "hovertext": hover[at], "hoverinfo": "text"}
        )  # fmt: skip
    return traces


def _step_traces(steps: pd.DataFrame) -> list[dict]:
    """The whole step per phase: open point at the operators' time, filled at the step time."""
    traces = []
    for s in steps.itertuples():
        x = s.flop / s.bytes
        top, low = s.flop / s.ops_s / TFLOPS, s.flop / s.step_s / TFLOPS
        hover = (
            f"<b>whole {PHASE_LABELS[s.phase]}</b><br>intensity {fmt(x, 'FLOP/B')}<br>"
            f"operators {fmt(s.ops_s, 's')} → {fmt(top * TFLOPS, 'FLOP/s')}<br>step "
            f"{fmt(s.step_s, 's')} → {fmt(low * TFLOPS, 'FLOP/s')} (gap: overhead + "
            f"communication {fmt(s.gap_s, 's')}, {pct(s.gap_s / s.step_s)})"
        )
        style = {"hovertext": [hover, hover], "hoverinfo": "text", "legendgroup": "step"}
        traces += [
            {"type": "scatter", "x": [x, x], "y": [top, low], "mode": "lines",
             "line": {"color": GAP_COLOR, "width": 3, "dash": "dot"}, "showlegend": False,
             "hoverinfo": "skip", "name": "gap"},
            {"type": "scatter", "x": [x, x], "y": [top, low], "mode": "markers+text",
             "name": f"Whole {PHASE_LABELS[s.phase]}", "text": [s.phase, ""],
             "textposition": "middle right",
             "marker": {"symbol": ["star-open", "star"], "size": 15, "color": "#e6a800"},
             **style},
        ]  # fmt: skip
    return traces


def operator_roofline(ops: pd.DataFrame, roof: dict, title: str) -> go.Figure:
    """The roofline of one device with every operator of a prefill and of a decode step.

    Args:
        ops: ui.ops_view.step_table output (engine.operators rows with a `phase` column).
        roof: roof_values(...) of the accelerator, precision and profile used.
        title: the chart title (escaped here).
    """
    points, steps = operator_points(ops), step_points(ops)
    intensities = [*points["arithmetic_intensity_flop_per_byte"], *(steps.flop / steps.bytes)]
    ridge = max(roof["peak"], roof["attention_peak"]) / roof["bandwidth"]
    x_lo, x_hi = min([*intensities, ridge]) / 8, max([*intensities, ridge]) * 8
    classes = set(points["op_class"])
    traces = [*_roof_traces(roof, x_lo, x_hi, classes), *_step_traces(steps)]
    traces += _operator_traces(points)
    ys = [float(v) for t in traces for v in t["y"]]
    layout = {
        "title": wrap_title(html.escape(title)),
        "height": 600,
        "xaxis": log_axis("Arithmetic intensity (FLOP/byte)", [x_lo, x_hi])
        | {"range": np.log10([x_lo, x_hi]).tolist()},
        "yaxis": log_axis("Performance per device (TFLOP/s)", ys),
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "hovermode": "closest",
    }
    return go.Figure(data=traces, layout=layout)


def class_times(ops: pd.DataFrame) -> pd.DataFrame:
    """Step time (ms) per phase and bar segment; each phase's row sums to its step time."""
    rows = []
    for phase, part in ops.groupby("phase", sort=False):
        row = {"phase": phase}
        for label, classes, _ in GROUPS:
            row[label] = float(part["total_time_ms"][part["op_class"].isin(classes)].sum())
        rows.append(row)
    return pd.DataFrame(rows)


def step_breakdown(ops: pd.DataFrame, title: str = "Step time by operator class") -> go.Figure:
    """A stacked bar per phase (own axis each: a prefill can be 100× a decode step)."""
    times = class_times(ops)
    traces, layout, shown = [], {}, set()
    n = len(times)
    for i, row in enumerate(times.itertuples(index=False)):
        axis = "" if i == 0 else str(i + 1)
        total = sum(row[1:])
        y_label = f"{PHASE_LABELS[row.phase]}: {fmt(total * 1e-3, 's')}"
        for (label, _, color), value in zip(GROUPS, row[1:], strict=True):
            if value <= 0:
                continue
            text = f"{label}: {fmt(value * 1e-3, 's')} ({pct(value / total)})"
            traces.append(
                {"type": "bar", "orientation": "h", "x": [value], "y": [y_label],
                 "name": label, "legendgroup": label, "showlegend": label not in shown,
                 "marker": {"color": color}, "text": [text], "textposition": "inside",
                 "hovertext": [text], "hoverinfo": "text", "xaxis": f"x{axis}",
                 "yaxis": f"y{axis}"}
            )  # fmt: skip
            shown.add(label)
        top, gap = 1 - i / n, 0.12 / n
        layout[f"yaxis{axis}"] = {"domain": [top - 1 / n + gap, top - gap], "automargin": True}
        layout[f"xaxis{axis}"] = {"anchor": f"y{axis}", "ticksuffix": " ms", "automargin": True}
    layout |= {
        "barmode": "stack",
        "height": 140 + 90 * n,
        "title": {"text": html.escape(title)},
        "uniformtext": {"minsize": 11, "mode": "hide"},
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    }
    return go.Figure(data=traces, layout=layout)
