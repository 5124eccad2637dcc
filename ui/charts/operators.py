"""Per-operator figures of the serving model: the operator roofline and the step-time breakdown
(also a training micro-batch's operators: `engine.training_operators`, phases forward/backward).

Pure functions over the operator table of a prefill and a decode step
(ui.charts.operator_table.step_table: `engine.operators` rows with a `phase` column): no
streamlit, no physics. Each operator sits at its own arithmetic intensity and achieved FLOP/s
(FLOPs ÷ its own time), so it lies on the roof of its class; the whole step sits at the step's
intensity, its open point at the operators' time and its filled point at the step time, the
dotted gap between them the fixed overhead and communication (docs/model.md, "Serving model").
The largest few operators of each phase and each whole step are named by labels in two columns
in the plot's empty corners (top left, bottom right), each with an arrow to its point.
Styling follows ui.charts.roofline: one colour per accelerator, solid memory roof, dashed peak
compute roof, dotted effective roofs, decade ticks.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts.theme import COLORS, GAP_COLOR, legend_below, log_axis, wrap_lines, wrap_title
from ui.words.format import fmt, pct
from ui.words.i18n import N_, _
from ui.words.text import bound

TFLOPS = 1e12  # the y axis is in TFLOP/s, as on every roofline of the app
NOT_PLOTTED = ("communication", "overhead")  # no FLOPs: bars, not roofline points
SYMBOLS = {"prefill": "triangle-up", "decode": "circle", "forward": "triangle-right"}
SYMBOLS["backward"] = "triangle-left"
PHASE_LABELS = {"prefill": N_("prefill (TTFT)"), "decode": N_("decode step (TPOT)")}
PHASE_LABELS |= {"forward": N_("forward pass"), "backward": N_("backward pass")}  # training
# a whole step's label on the chart, a line at most: 'whole decode step (TPOT)' ran 9 px past a
# phone's chart from a point at its left
STEP_LABEL_COLUMNS = 20
# bar segment: (label, the engine's op_class values in it, colour); labels shown through _()
GROUPS = (
    (N_("attention"), ("attention",), "#1f77b4"),
    (N_("GEMMs / FFN"), ("gemm",), "#2ca02c"),
    (N_("experts"), ("expert",), "#9467bd"),
    (N_("norms, embedding"), ("other",), "#17becf"),
    (N_("communication"), ("communication",), "#ff7f0e"),
    (N_("overhead"), ("overhead",), GAP_COLOR),
)
CLASS_ROOFS = {"gemm": N_("GEMMs"), "attention": N_("attention"), "expert": N_("experts")}
# the whole step's hover words a CNN's layer chart replaces (ui.solve.layers)
OPERATORS_WORD = N_("operators")
GAP_WORDS = N_("overhead + communication")


ONCE_PER_STEP = N_("once per step")  # the engine's layer range "step": not in a layer


def phase_label(phase: str) -> str:
    """A phase as shown: 'decode step (TPOT)', in the session's language."""
    return _(PHASE_LABELS[phase])


def layers_text(layers: object) -> str:
    """An operator's layer range as shown: '0–79', or 'once per step' for the operators
    outside the layers (the engine's "step": embedding, final norm, LM head)."""
    text = str(layers)
    return _(ONCE_PER_STEP) if text == "step" else text


def roof_values(table: pd.DataFrame, name: str) -> dict:
    """The roofs the engine's operator (or layer) table carries, read, never re-derived: per
    operator class each distinct (datasheet peak, achievable rate) its operators run on, with
    their names (a class may hold two: an fp8 run's 16-bit LM head, a sparse-attention
    indexer at the GEMMs' peak), and the achievable bandwidth."""
    rows = table[table["achievable_flop_per_s"].notna()]
    classes: dict[str, list] = {}
    for (cls, peak, rate), g in rows.groupby(
        ["op_class", "peak_flop_per_s", "achievable_flop_per_s"], sort=False
    ):
        names = tuple(dict.fromkeys(str(n) for n in g["name"]))
        classes.setdefault(str(cls), []).append((float(peak), float(rate), names))
    bandwidth = float(rows["achievable_bytes_per_s"].iloc[0])
    return {"name": str(name), "bandwidth": bandwidth, "classes": classes}


def _peak(roof: dict) -> float:
    return max(peak for levels in roof["classes"].values() for peak, _, _ in levels)


def _records(ops: pd.DataFrame) -> list[dict]:
    """The table as plain dicts (20-odd rows: plain Python beats pandas' string arrays)."""
    columns = {c: ops[c].tolist() for c in ops.columns}
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]


def operator_points(ops: pd.DataFrame) -> list[dict]:
    """The operators with FLOPs, one dict each, with achieved FLOP/s and share of the step."""
    rows = _records(ops)
    step_ms: dict[str, float] = {}
    for row in rows:
        step_ms[row["phase"]] = step_ms.get(row["phase"], 0.0) + row["total_time_ms"]
    return [
        row
        | {
            "share": row["total_time_ms"] / step_ms[row["phase"]],
            "achieved_flop_per_s": row["flops"] / (row["time_ms"] * 1e-3),
        }
        for row in rows
        if row["flops"] > 0 and row["op_class"] not in NOT_PLOTTED
    ]


def step_points(ops: pd.DataFrame) -> list[dict]:
    """Per phase, one dict each: FLOPs, bytes, the operators' time, overhead + communication, the
    step time."""
    out: dict[str, dict] = {}
    for row in _records(ops):
        step = out.setdefault(
            row["phase"],
            {"phase": row["phase"], "flop": 0.0, "bytes": 0.0, "step_s": 0.0, "gap_s": 0.0},
        )
        seconds = row["total_time_ms"] * 1e-3
        step["step_s"] += seconds
        if row["op_class"] in NOT_PLOTTED:
            step["gap_s"] += seconds
        else:
            step["flop"] += row["count"] * row["flops"]
            step["bytes"] += row["count"] * row["bytes"]
    return [step | {"ops_s": step["step_s"] - step["gap_s"]} for step in out.values()]


def _roof_traces(roof: dict, x_lo: float, x_hi: float, classes: set[str]) -> list[dict]:
    """Memory roof (solid), peak compute (dashed), peak × η per operator class (dotted)."""
    color, name, bw = COLORS[0], html.escape(roof["name"]), roof["bandwidth"]
    peak = _peak(roof)
    ridge = peak / bw
    traces = [
        _line(
            x=[x_lo, ridge],
            y=[bw * x_lo / TFLOPS, peak / TFLOPS],
            dash="solid",
            color=color,
            name=_("Memory roof {name} ({bandwidth} with η_mem)").format(
                name=name, bandwidth=fmt(bw, "B/s")
            ),
        ),
        _line(
            x=[ridge, x_hi],
            y=[peak / TFLOPS] * 2,
            dash="dash",
            color=color,
            name=_("Compute roof {name} (peak {peak})").format(name=name, peak=fmt(peak, "FLOP/s")),
        ),
    ]
    seen = set()
    for cls in ("gemm", "attention", "expert"):
        levels = roof["classes"].get(cls, [])
        for class_peak, top, names in levels:
            if (cls not in classes and cls != "gemm") or round(top) in seen:
                continue  # one dotted roof per distinct level the operators use
            seen.add(round(top))
            # a class on one level is named as the class; on several, by the operators on each
            operators = _(CLASS_ROOFS[cls]) if len(levels) == 1 else html.escape(", ".join(names))
            label = _("{operators} peak × η {share}: {rate}").format(
                operators=operators, share=pct(top / class_peak), rate=fmt(top, "FLOP/s")
            )
            traces.append(
                _line(x=[top / bw, x_hi], y=[top / TFLOPS] * 2, dash="dot", color=color, name=label)
            )
    return traces


def _line(x, y, dash: str, color: str, name: str) -> dict:
    line = {"color": color, "width": 2.5 if dash == "solid" else 2, "dash": dash}
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "lines",
        "name": name,
        "line": line,
        "hovertemplate": f"{name}<extra></extra>",
    }


def operator_hover(p: dict, also: list[str]) -> str:
    """One operator's hover: name, layers, count, FLOPs, bytes, time, bound (escaped)."""
    text = _(
        "<b>{name}</b> ({phase})<br>layers {layers} · ×{count}<br>{flops}, {bytes} each · "
        "intensity {intensity}<br>time {time} each, {total} in all ({share} of the step)<br>"
        "{bound} · achieved {achieved}"
    ).format(
        name=html.escape(str(p["name"])),
        phase=phase_label(p["phase"]),
        layers=html.escape(layers_text(p["layer"])),
        count=f"{p['count']:,}",
        flops=fmt(p["flops"], "FLOP"),
        bytes=fmt(p["bytes"], "B"),
        intensity=fmt(p["arithmetic_intensity_flop_per_byte"], "FLOP/B"),
        time=fmt(p["time_ms"] * 1e-3, "s"),
        total=fmt(p["total_time_ms"] * 1e-3, "s"),
        share=pct(p["share"]),
        bound=html.escape(bound(p["bottleneck"])),
        achieved=fmt(p["achieved_flop_per_s"], "FLOP/s"),
    )
    if also:
        text += _("<br>same point as: {names}").format(
            names=", ".join(html.escape(str(a)) for a in also)
        )
    return text


def _key(p: dict) -> tuple:
    """Where a point sits, to 1 % (coincident points name each other: only one hover shows)."""
    x, y = p["arithmetic_intensity_flop_per_byte"], p["achieved_flop_per_s"]
    return p["phase"], round(float(np.log10(x)), 2), round(float(np.log10(y)), 2)


def _operator_traces(points: list[dict]) -> list[dict]:
    """One trace per phase; marker area ∝ the operator's share of its step time."""
    keys = [_key(p) for p in points]
    traces = []
    for phase in PHASE_LABELS:
        part = [(p, key) for p, key in zip(points, keys, strict=True) if p["phase"] == phase]
        if not part:
            continue
        hover = [
            operator_hover(
                p, [q["name"] for q, k in zip(points, keys, strict=True) if k == key and q is not p]
            )
            for p, key in part
        ]
        marker = {
            "symbol": SYMBOLS[phase],
            "color": COLORS[0],
            "opacity": 0.8,
            "size": [7 + 18 * float(np.sqrt(p["share"])) for p, _ in part],
            "line": {"width": 1, "color": GAP_COLOR},
        }
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": _("Operators: {phase}").format(phase=phase_label(phase)),
                "x": [p["arithmetic_intensity_flop_per_byte"] for p, _ in part],
                "y": [p["achieved_flop_per_s"] / TFLOPS for p, _ in part],
                "marker": marker,
                "text": [html.escape(str(p["name"])) for p, _ in part],
                "hovertext": hover,
                "hoverinfo": "text",
            }
        )
    return traces


def _step_traces(steps: list[dict]) -> list[dict]:
    """The whole step per phase: open point at the operators' time, filled at the step time."""
    traces = []
    for s in steps:
        x, phase = s["flop"] / s["bytes"], s["phase"]
        top, low = s["flop"] / s["ops_s"] / TFLOPS, s["flop"] / s["step_s"] / TFLOPS
        hover = _(
            "<b>whole {phase}</b><br>intensity {intensity}<br>{operators} {ops_time} → "
            "{ops_rate}<br>step {step_time} → {step_rate} (gap: {gap_words} {gap}, {share})"
        ).format(
            phase=phase_label(phase),
            intensity=fmt(x, "FLOP/B"),
            operators=_(OPERATORS_WORD),
            ops_time=fmt(s["ops_s"], "s"),
            ops_rate=fmt(top * TFLOPS, "FLOP/s"),
            step_time=fmt(s["step_s"], "s"),
            step_rate=fmt(low * TFLOPS, "FLOP/s"),
            gap_words=_(GAP_WORDS),
            gap=fmt(s["gap_s"], "s"),
            share=pct(s["gap_s"] / s["step_s"]),
        )
        style = {"hovertext": [hover, hover], "hoverinfo": "text", "legendgroup": "step"}
        traces += [
            {
                "type": "scatter",
                "x": [x, x],
                "y": [top, low],
                "mode": "lines",
                "line": {"color": GAP_COLOR, "width": 3, "dash": "dot"},
                "showlegend": False,
                "hoverinfo": "skip",
                "name": _("gap"),
            },
            {
                "type": "scatter",
                "x": [x, x],
                "y": [top, low],
                "mode": "markers",  # named by an arrow from beside it (`_labels`), not on it
                "name": _("Whole {phase}").format(phase=phase_label(phase)),
                "marker": {"symbol": ["star-open", "star"], "size": 15, "color": "#e6a800"},
                **style,
            },
        ]
    return traces


LABELLED = 3  # operators named on the chart per phase: the largest shares of the step time
MIN_SHARE = 0.03  # ... each beyond the first with at least this share of it
MERGE_DEX = 0.15  # labelled operators this close (in log10 of x and of y) share one label
# The labels stand in two columns in the roofline's empty corners, each with an arrow to its
# point: points in the left half of the x range are named from the top-left corner (above the
# memory roof: nothing can sit there), the others from the bottom-right (under the compute roof,
# right of every memory-bound point). Labels placed beside their points lay over one another
# wherever points crowd (a 70B prefill's GEMMs beside its whole step, at every width), since
# their pixel distances change with the chart's width and its legend's height.
LINE_PX = 16  # the height of a label's line at font size 11, with a little to spare
GAP_PX = 6  # between two labels of a column
PAD_PX = 6  # between a column and the plot's edge
PLOT_PX = (250, 260)  # the least plot height and width this chart gets (a 390 px phone's)


def _log_xy(x: float, y: float) -> tuple[float, float]:
    return float(np.log10(x)), float(np.log10(y))


def _where(x: float, x_range: tuple[float, float]) -> float:
    """Where `x` sits along the log x range: 0 at its left end, 1 at its right."""
    lo, hi = np.log10(x_range)
    return (np.log10(x) - lo) / (hi - lo) if hi > lo else 0.5


def _label_groups(part: list[dict]) -> list[tuple[dict, list[str]]]:
    """The labelled operators of a phase as (the point a label's arrow goes to, the names it
    lists): operators that sit within MERGE_DEX of one another share one label (a prefill's
    mlp and projections have one intensity and one rate: three labels there were drawn on one
    another, their arrows to the same point)."""
    groups: list[tuple[dict, list[str]]] = []
    for p in part:
        at = _log_xy(p["arithmetic_intensity_flop_per_byte"], p["achieved_flop_per_s"])
        for anchor, names in groups:
            there = _log_xy(
                anchor["arithmetic_intensity_flop_per_byte"], anchor["achieved_flop_per_s"]
            )
            if abs(at[0] - there[0]) <= MERGE_DEX and abs(at[1] - there[1]) <= MERGE_DEX:
                names.append(str(p["name"]))
                break
        else:
            groups.append((p, [str(p["name"])]))
    return groups


def _named(points: list[dict], steps: list[dict]) -> list[tuple[float, float, str]]:
    """(FLOP/byte, TFLOP/s, label text) of what the chart names: the largest few operators of
    each phase (operators at one place in one label) and each whole step."""
    out = []
    for phase in ("prefill", "decode"):
        part = sorted((p for p in points if p["phase"] == phase), key=lambda p: -p["share"])
        # the largest, and the next ones that take a visible share of the step: a cluster of
        # 1-2 % operators (a communication-bound MoE step) crowded its labels over each other
        named = [p for k, p in enumerate(part[:LABELLED]) if k == 0 or p["share"] >= MIN_SHARE]
        for p, names in _label_groups(named):
            text = "<br>".join(html.escape(n) for n in names)  # shares: the hover and the words
            x, y = p["arithmetic_intensity_flop_per_byte"], p["achieved_flop_per_s"] / TFLOPS
            out.append((x, y, text))
    for s in steps:
        words = _("whole {phase}").format(phase=phase_label(s["phase"]))
        lines = wrap_lines(html.escape(words), STEP_LABEL_COLUMNS).split("<br>")
        text = "<br>".join(f"<b>{line}</b>" for line in lines)
        out.append((s["flop"] / s["bytes"], s["flop"] / s["step_s"] / TFLOPS, text))
    return out


def _labels(
    points: list[dict],
    steps: list[dict],
    x_range: tuple[float, float],
    y_range: tuple[float, float],
) -> list[dict]:
    """The named operators and steps, each label in a column in an empty corner of the plot
    (`x_range` and `y_range`: the axes' ranges, in FLOP/byte and TFLOP/s) with an arrow to its
    point. A column's labels are LINE_PX a line apart at the least plot height, so they never
    lie on one another, at any width; the topmost point's label is the top one (the left
    column) or the lowest point's the bottom one (the right), so arrows seldom cross."""
    (x_lo, x_hi), (y_lo, y_hi) = np.log10(x_range), np.log10(y_range)
    dex_y, dex_x = (y_hi - y_lo) / PLOT_PX[0], (x_hi - x_lo) / PLOT_PX[1]
    named = _named(points, steps)
    left = sorted((n for n in named if _where(n[0], x_range) < 0.5), key=lambda n: -n[1])
    right = sorted((n for n in named if _where(n[0], x_range) >= 0.5), key=lambda n: n[1])
    out, top, bottom = [], y_hi - PAD_PX * dex_y, y_lo + PAD_PX * dex_y
    for x, y, text in left:  # from the top down
        tail = (x_lo + PAD_PX * dex_x, top)
        out.append(_arrow(x=x, y_tflops=y, text=text, tail=tail, corner=("left", "top")))
        top -= ((text.count("<br>") + 1) * LINE_PX + GAP_PX) * dex_y
    for x, y, text in right:  # from the bottom up
        tail = (x_hi - PAD_PX * dex_x, bottom)
        out.append(_arrow(x=x, y_tflops=y, text=text, tail=tail, corner=("right", "bottom")))
        bottom += ((text.count("<br>") + 1) * LINE_PX + GAP_PX) * dex_y
    return out


def _arrow(
    x: float, y_tflops: float, text: str, tail: tuple[float, float], corner: tuple[str, str]
) -> dict:
    """A label whose `corner` (xanchor, yanchor) sits at `tail` (log10 of the axes' units),
    with a thin arrow from it to the point (x, y)."""
    return {
        "x": float(np.log10(x)),
        "y": float(np.log10(y_tflops)),
        "axref": "x",
        "ayref": "y",
        "ax": tail[0],
        "ay": tail[1],
        "xanchor": corner[0],
        "yanchor": corner[1],
        "align": corner[0],
        "text": text,
        "showarrow": True,
        "arrowhead": 0,
        "arrowwidth": 1,
        "arrowcolor": GAP_COLOR,
        "font": {"size": 11},
    }


def operator_roofline(ops: pd.DataFrame, roof: dict, title: str) -> go.Figure:
    """The roofline of one device with every operator of a prefill and of a decode step.

    Args:
        ops: ui.charts.operator_table.step_table output (engine.operators rows with a `phase`
            column).
        roof: roof_values(ops, name): the roofs the engine's table carries.
        title: the chart title (escaped here).
    """
    points, steps = operator_points(ops), step_points(ops)
    intensities = [p["arithmetic_intensity_flop_per_byte"] for p in points]
    intensities += [s["flop"] / s["bytes"] for s in steps]
    ridge = _peak(roof) / roof["bandwidth"]
    x_lo, x_hi = min([*intensities, ridge]) / 8, max([*intensities, ridge]) * 8
    classes = {p["op_class"] for p in points}
    traces = [*_roof_traces(roof=roof, x_lo=x_lo, x_hi=x_hi, classes=classes), *_step_traces(steps)]
    traces += _operator_traces(points)
    ys = [float(v) for t in traces for v in t["y"]]
    # a fixed y range (Plotly's autorange would take in the labels, at a range that changes
    # with the chart's width): the data, and a tenth of a decade either side
    y_range = (min(ys) / 10**0.1, max(ys) * 10**0.1)
    layout = {
        "title": wrap_title(html.escape(title)),
        "height": 600,
        "xaxis": log_axis(_("Arithmetic intensity (FLOP/byte)"), [x_lo, x_hi])
        | {"range": np.log10([x_lo, x_hi]).tolist()},
        "yaxis": log_axis(_("Performance per device (TFLOP/s)"), ys)
        | {"range": np.log10(y_range).tolist()},
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "hovermode": "closest",
        "annotations": _labels(points, steps, x_range=(x_lo, x_hi), y_range=y_range),
    }
    return go.Figure(data=traces, layout=layout, _validate=False)  # dicts; tests validate


def class_times(ops: pd.DataFrame) -> list[dict]:
    """Step time (ms) per phase (one dict each) and bar segment; each phase's segments sum to its
    step time."""
    out: dict[str, dict] = {}
    group = {cls: label for label, classes, _ in GROUPS for cls in classes}
    for row in _records(ops):
        times = out.setdefault(
            row["phase"],
            {"phase": row["phase"]} | dict.fromkeys((label for label, _, _ in GROUPS), 0.0),
        )
        times[group[row["op_class"]]] += row["total_time_ms"]
    return list(out.values())


def step_breakdown(ops: pd.DataFrame, title: str | None = None) -> go.Figure:
    """A stacked bar per phase (own axis each: a prefill can be 100× a decode step); the title
    defaults to "Step time by operator class", translated."""
    title = _("Step time by operator class") if title is None else title
    times = class_times(ops)
    traces, layout, shown, headings = [], {}, set(), []
    n = len(times)
    for i, row in enumerate(times):
        axis = "" if i == 0 else str(i + 1)
        total = sum(row[label] for label, _, _ in GROUPS)
        y_label = _("{phase}: {time}").format(
            phase=phase_label(row["phase"]), time=fmt(total * 1e-3, "s")
        )
        for label, _classes, color in GROUPS:
            value = row[label]
            if value <= 0:
                continue
            shown_label = _(label)
            text = _("{label}: {time} ({share})").format(
                label=shown_label, time=fmt(value * 1e-3, "s"), share=pct(value / total)
            )
            traces.append(
                {
                    "type": "bar",
                    "orientation": "h",
                    "x": [value],
                    "y": [y_label],
                    "name": shown_label,
                    "legendgroup": label,
                    "showlegend": label not in shown,
                    "marker": {"color": color},
                    "text": [text],
                    "textposition": "inside",
                    "hovertext": [text],
                    "hoverinfo": "text",
                    "xaxis": f"x{axis}",
                    "yaxis": f"y{axis}",
                }
            )
            shown.add(label)
        top, gap = 1 - i / n, 0.2 / n  # room for the ticks above and the heading below
        domain = [top - 1 / n + gap, top - gap]
        # the phase and its total above its bar, not as a tick label beside it: on a 390 px
        # phone the label took half the width and the bars' ticks ran into each other
        layout[f"yaxis{axis}"] = {"domain": domain, "showticklabels": False}
        layout[f"xaxis{axis}"] = {"anchor": f"y{axis}", "ticksuffix": " ms", "nticks": 5}
        layout[f"xaxis{axis}"] |= {"automargin": True}
        headings.append(
            {
                "text": f"<b>{html.escape(y_label)}</b>",
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": domain[1],
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
            }
        )
    layout |= {
        "barmode": "stack",
        "height": 160 + 110 * n,
        "title": {"text": html.escape(title)},
        "annotations": headings,
        "uniformtext": {"minsize": 11, "mode": "hide"},
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    }
    return go.Figure(data=traces, layout=layout, _validate=False)  # dicts; tests validate
