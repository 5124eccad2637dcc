"""Plotly figure builders: the roofline with its fixed-overhead gap (the latency split lives in
ui/charts/latency_split.py and is re-exported here).

Pure functions (DataFrame in, Figure out), tested without a browser. The roofline follows
Williams et al. 2009: log-log, memory roof = bandwidth × intensity, compute roofs at peak and
at peak × efficiency. Each accelerator has one colour for its roofs and its points; the memory
roof is solid, the peak compute roof dashed, the effective one dotted. Each scenario shows its
attainable point on the roof (open circle), its achieved point below it (filled) and the gap
between the two (the fixed overhead). Numbers on the chart come from ui.words.format; log axes carry
decade ticks (1, 10, 100, 1k). Colours read on light and dark themes alike (no black/white).
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts.latency_split import latency_breakdown_figure as latency_breakdown_figure
from ui.charts.theme import (
    COLORS,
    GAP_COLOR,
    TITLE_COLUMNS,
    WEBGL_POINTS,
    legend_below,
    log_axis,
    wrap_lines,
    wrap_title,
)
from ui.words.format import fmt, fmt_all, pct
from ui.words.i18n import _
from ui.words.text import FLOP_NOTE, bound

MAX_GAP_LABELS = 3  # labels on one accelerator's chart; the rest of the gaps are on hover
TFLOPS, MS = 1e12, 1e-3  # the figure columns' units in SI (TFLOP/s, ms)


def roof_table(rows: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """One roof per hardware from solve/sweep rows: peak, effective peak and bandwidth."""
    first = rows.drop_duplicates("hardware")
    return pd.DataFrame(
        {
            "hardware": first["hardware"].astype(str).to_numpy(),
            "name": [names.get(str(h), str(h)) for h in first["hardware"]],
            "peak_tflops": first["peak_tflops"].to_numpy(),
            "effective_peak_tflops": first["effective_peak_tflops"].to_numpy(),
            "bandwidth_tb_per_s": (first["memory_bandwidth_bytes_per_s"] / 1e12).to_numpy(),
        }
    )


POINT_COLUMNS = ("label", "bottleneck", "arithmetic_intensity_flop_per_byte", "attainable_tflops")
POINT_COLUMNS += ("achieved_tflops", "latency_ms", "t_overhead_ms", "overhead_share")


def _plain(frame: pd.DataFrame, columns) -> pd.DataFrame:
    """Only the columns a figure needs, as plain numpy/object columns (fast to iterate)."""
    kinds = {c: None if frame[c].dtype.kind in "fiub" else object for c in columns}
    return pd.DataFrame({c: frame[c].to_numpy(dtype=kind) for c, kind in kinds.items()})


def _x_range(points: pd.DataFrame, roofs: pd.DataFrame) -> tuple[float, float]:
    ridges = roofs["peak_tflops"] / roofs["bandwidth_tb_per_s"]
    xs = np.concatenate([points["arithmetic_intensity_flop_per_byte"].to_numpy(), ridges])
    return float(xs.min()) / 8, float(xs.max()) * 8


def _line(
    x, y, name: str, color: str, hover: str, dash: str = "solid", group="", wider: float = 0.0
) -> dict:
    line = {"color": color, "width": (2.5 if dash == "solid" else 2) + wider, "dash": dash}
    style = {"mode": "lines", "line": line, "hovertemplate": hover + "<extra></extra>"}
    return {"type": "scatter", "x": x, "y": y, "name": name, "legendgroup": group, **style}


def _roof_traces(roofs: pd.DataFrame, x_lo: float, x_hi: float) -> list[dict]:
    """Per accelerator: memory roof (solid), compute roof at peak (dashed) and at peak ×
    efficiency (dotted), and the two ridge points (diamonds, on hover).

    Roofs that run along one another (two precisions of one chip: one bandwidth, maybe one
    peak) are drawn under one another, each earlier one wider (`_widen`), so every roof in the
    legend shows beside the later ones drawn over it."""
    widen = _widen(roofs)
    return [
        trace
        for i, roof in enumerate(roofs.itertuples())
        for trace in _one_roof(
            roof=roof, color=COLORS[i % len(COLORS)], x_lo=x_lo, x_hi=x_hi, widen=widen[i]
        )
    ]


ROOF_COLUMNS = {"memory": "bandwidth_tb_per_s", "peak": "peak_tflops"}
ROOF_COLUMNS["effective"] = "effective_peak_tflops"
WIDER = 3.0  # px added per later roof along the same line: a 1.5 px edge shows on each side


def _widen(roofs: pd.DataFrame) -> list[dict[str, float]]:
    """Per roof, the px to add to each of its lines: WIDER for every later roof whose line lies
    along it (the same bandwidth, peak or effective peak, to 0.1 %)."""
    out = []
    for i in range(len(roofs)):
        row = {}
        for line, column in ROOF_COLUMNS.items():
            values = roofs[column].to_numpy(dtype=float)
            later = np.isclose(values[i + 1 :], values[i], rtol=1e-3)
            row[line] = WIDER * int(later.sum())
        out.append(row)
    return out


def _ridge_points(name: str, group: str, color: str, x: tuple, y: tuple) -> dict:
    """The peak and effective ridge points (diamonds, hover only; not in the legend)."""
    return {
        "type": "scatter",
        "x": list(x),
        "y": list(y),
        "mode": "markers",
        "marker": {"symbol": "diamond", "size": 9, "color": color},
        "name": _("Ridge points {name} ({peak} / {effective} FLOP/B)").format(
            name=name, peak=fmt(x[0]), effective=fmt(x[1])
        ),
        "legendgroup": group,
        "showlegend": False,
        "hovertext": [
            _("{name}<br>ridge {ridge}").format(name=name, ridge=fmt(r, "FLOP/B")) for r in x
        ],
        "hoverinfo": "text",
    }


def _one_roof(roof, color: str, x_lo: float, x_hi: float, widen: dict[str, float]) -> list[dict]:
    name, group = html.escape(roof.name), roof.hardware
    peak, eff_peak, bw = roof.peak_tflops, roof.effective_peak_tflops, roof.bandwidth_tb_per_s
    ridge, ridge_eff = peak / bw, eff_peak / bw
    peak_text, eff_text = fmt(peak * TFLOPS, "FLOP/s"), fmt(eff_peak * TFLOPS, "FLOP/s")
    bw_text = fmt(bw * TFLOPS, "B/s")
    return [
        _line(
            x=[x_lo, ridge],
            y=[bw * x_lo, peak],
            name=_("Memory roof {name} ({bandwidth})").format(name=name, bandwidth=bw_text),
            color=color,
            hover=_("{name}<br>memory roof: {bandwidth} × intensity").format(
                name=name, bandwidth=bw_text
            ),
            group=group,
            wider=widen["memory"],
        ),
        _line(
            x=[ridge, x_hi],
            y=[peak, peak],
            name=_("Compute roof {name} (peak {peak})").format(name=name, peak=peak_text),
            color=color,
            hover=_("{name}<br>peak compute roof: {peak}").format(name=name, peak=peak_text),
            dash="dash",
            group=group,
            wider=widen["peak"],
        ),
        _line(
            x=[ridge_eff, x_hi],
            y=[eff_peak, eff_peak],
            name=_("Effective compute roof {name} ({peak})").format(name=name, peak=eff_text),
            color=color,
            hover=_("{name}<br>peak × efficiency: {peak}").format(name=name, peak=eff_text),
            dash="dot",
            group=group,
            wider=widen["effective"],
        ),
        _ridge_points(
            name=name, group=group, color=color, x=(ridge, ridge_eff), y=(peak, eff_peak)
        ),
    ]


def _hover(points: pd.DataFrame, convention: str) -> list[str]:
    note = _(FLOP_NOTE[convention])
    col = points.__getitem__
    ai = fmt_all(col("arithmetic_intensity_flop_per_byte"), "FLOP/B")
    roof = fmt_all(col("attainable_tflops").to_numpy(float) * TFLOPS, "FLOP/s")
    got = fmt_all(col("achieved_tflops").to_numpy(float) * TFLOPS, "FLOP/s")
    latency = fmt_all(col("latency_ms").to_numpy(float) * MS, "s")
    overhead = fmt_all(col("t_overhead_ms").to_numpy(float) * MS, "s")
    share = fmt_all(col("overhead_share").to_numpy(float) * 100, "%", digits=2)
    rows = zip(
        col("label"), col("bottleneck"), ai, roof, got, latency, overhead, share, strict=True
    )
    text = _(
        "<b>{label}</b><br>{bound}<br>intensity {intensity}<br>roof {roof} · achieved "
        "{achieved}<br>latency {latency} (fixed overhead {overhead}, {share})<br><i>{note}</i>"
    )
    shown = {b: bound(b) for b in set(col("bottleneck"))}
    return [
        text.format(
            label=html.escape(str(label)),
            bound=shown[b],
            intensity=a,
            roof=r,
            achieved=g,
            latency=t,
            overhead=o,
            share=p,
            note=note,
        )
        for label, b, a, r, g, t, o, p in rows
    ]


def _point_colors(frame: pd.DataFrame, roofs: pd.DataFrame) -> dict:
    """Marker colours: each point in its accelerator's colour. Several accelerators: an index
    per point on a stepped colour scale (a numeric array; plotly checks a list of 2,000 colour
    names one by one, ~1 s per figure)."""
    if len(roofs) < 2 or "hardware" not in frame:
        return {"color": COLORS[0]}
    index = {h: i for i, h in enumerate(roofs["hardware"])}
    codes = np.array([index.get(h, 0) for h in frame["hardware"].astype(str)], dtype=float)
    top = len(roofs) - 1
    scale = [[i / top, COLORS[i % len(COLORS)]] for i in range(len(roofs))]
    return {"color": codes, "colorscale": scale, "cmin": 0, "cmax": top}


def gap_labels(
    points: pd.DataFrame, n_roofs: int, middle: float = np.inf, flat_from: float = np.inf
) -> list[dict]:
    """On-chart gap labels that never pile up: only on a one-accelerator chart, the largest
    gaps first, none within half a decade of intensity of another; every point of a chart of
    up to MAX_GAP_LABELS points, else one (the largest gap); the rest are on hover.

    A label sits where no roof runs (`_gap_place`): `middle` is the x axis' middle (log10
    intensity), `flat_from` the effective peak (TFLOP/s), from which a point is on a flat roof."""
    if n_roofs != 1:
        return []  # several accelerators share the intensities: the gaps are on hover
    limit = MAX_GAP_LABELS if len(points) <= MAX_GAP_LABELS else 1  # a sweep: the largest
    shown: list[float] = []
    labels = []
    for p in points.sort_values("overhead_share", ascending=False).itertuples():
        x = float(np.log10(p.arithmetic_intensity_flop_per_byte))
        if len(labels) == limit or any(abs(x - s) < 0.5 for s in shown):
            continue
        shown.append(x)
        flat = p.attainable_tflops >= flat_from * (1 - 1e-9)
        labels.append(
            {
                "x": x,
                "text": _("gap {time} ({share})").format(
                    time=fmt(p.t_overhead_ms * MS, "s"), share=pct(p.overhead_share, digits=2)
                ),
                "showarrow": False,
                "font": {"size": 12, "color": GAP_COLOR},
                **_gap_place(p, flat=flat, right_half=x >= middle),
            }
        )
    return labels


def _gap_place(p, flat: bool, right_half: bool) -> dict:
    """Where a gap label sits so that no roof runs through it (log-log: the sloped memory roof
    rises to the right through its points, the flat compute roofs lie above theirs):

    - on the sloped roof, left half: below and right of the achieved point (the roof is above
      and to the left); right half: above and left of the attainable point (the roof is below
      and to the right), so it never runs past the plot's right edge;
    - on a flat roof: under the achieved point, to its right in the left half, centred under
      it in the right half (the sloped roof ends left of the ridge, a half label away)."""
    achieved, attainable = np.log10(p.achieved_tflops), np.log10(p.attainable_tflops)
    if not flat and right_half:
        return {
            "y": float(attainable),
            "xanchor": "right",
            "yanchor": "bottom",
            "xshift": -8,
            "yshift": 4,
        }
    below = {"y": float(achieved), "yanchor": "top", "yshift": -8}
    if flat and right_half:
        return below | {"xanchor": "center"}
    return below | {"xanchor": "left", "xshift": 8}


def _point_traces(points: pd.DataFrame, colors: dict, hover) -> list[dict]:
    """The gap segments, attainable (open) and achieved (filled) points."""
    x = points["arithmetic_intensity_flop_per_byte"].to_numpy()
    top, low = points["attainable_tflops"].to_numpy(), points["achieved_tflops"].to_numpy()
    kind = "scattergl" if len(points) > WEBGL_POINTS else "scatter"
    gap_x = np.column_stack([x, x, np.full_like(x, np.nan)]).ravel()
    gap_y = np.column_stack([top, low, np.full_like(x, np.nan)]).ravel()
    return [
        {
            "type": kind,
            "x": gap_x,
            "y": gap_y,
            "mode": "lines",
            "name": _("Fixed-overhead gap"),
            "hoverinfo": "skip",
            "line": {"color": GAP_COLOR, "width": 3, "dash": "dot"},
        },
        {
            "type": kind,
            "x": x,
            "y": top,
            "mode": "markers",
            "name": _("Attainable (on the roof)"),
            "hovertext": hover,
            "hoverinfo": "text",
            "marker": {"symbol": "circle-open", "size": 11, "line": {"width": 2}} | colors,
        },
        {
            "type": kind,
            "x": x,
            "y": low,
            "mode": "markers",
            "name": _("Achieved (with overhead)"),
            "hovertext": hover,
            "hoverinfo": "text",
            "marker": {"size": 10} | colors,
        },
    ]


def roofline_figure(
    points: pd.DataFrame, roofs: pd.DataFrame, convention: str, title: str | None = None
) -> go.Figure:
    """The roofline chart.

    Args:
        points: one row per scenario with columns label, arithmetic_intensity_flop_per_byte,
            attainable_tflops, achieved_tflops, latency_ms, t_overhead_ms, overhead_share,
            bottleneck (and hardware, for the point colours, when there are several roofs).
        roofs: `roof_table` output (one row per accelerator).
        convention: "catalog" or "mac2" (shown on the intensity axis and in hovers).
        title: the chart's title (default "Roofline", translated).
    """
    title = _("Roofline") if title is None else title
    colors = _point_colors(points, roofs)
    points = _plain(points, POINT_COLUMNS)
    x_lo, x_hi = _x_range(points, roofs)
    hover = np.asarray(_hover(points, convention))  # an array validates faster than a list
    traces = [*_roof_traces(roofs, x_lo, x_hi), *_point_traces(points, colors, hover)]
    y_values = [*roofs["peak_tflops"], *points["achieved_tflops"], *roofs["bandwidth_tb_per_s"]]
    note = wrap_lines(_(FLOP_NOTE[convention]), TITLE_COLUMNS)  # a phone's width per line
    x_title = _("Arithmetic intensity (FLOP/byte)") + f"<br><sup>{note}</sup>"
    layout = {
        "title": wrap_title(html.escape(title)),
        "height": 560,
        "xaxis": log_axis(x_title, [x_lo, x_hi]) | {"range": np.log10([x_lo, x_hi]).tolist()},
        "yaxis": log_axis(
            _("Performance (TFLOP/s)"), y_values, [x_lo * min(roofs["bandwidth_tb_per_s"])]
        ),
        "legend": legend_below(len(roofs)),
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "annotations": gap_labels(
            points=points,
            n_roofs=len(roofs),
            middle=np.log10([x_lo, x_hi]).mean(),
            flat_from=float(roofs["effective_peak_tflops"].min()),
        ),
        "hovermode": "closest",
    }
    return go.Figure(data=traces, layout=layout)  # one validation pass: ~10x faster than add_*
