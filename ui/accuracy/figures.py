"""The accuracy page's charts: measured against predicted, one chart per metric.

A metric in ms and one in tokens/s never share axes. Each chart is log–log with the same decade
range on both axes and one unit of x as long as one of y (scaleanchor), so y = x, the 45° line,
is truly at 45°; ticks at decades only (1, 10, 100, 1k); the ±band lines are the profile's
measured out-of-sample error around y = x (the engine's Band.limits), drawn only when it was
measured. Colour by accelerator; predicted rows only (the table lists the others and why).
User and file text in hover and legends is HTML-escaped; words through ui.words.i18n.
docs/model.md, "Accuracy".
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import engine
from ui.charts.theme import COLORS, GAP_COLOR, legend_below, wrap_title
from ui.words.data_text import said
from ui.words.format import fmt, tick_label
from ui.words.i18n import N_, _

TITLES = {  # metric: chart title (translated when drawn)
    "output_tokens_per_s_per_gpu": N_("Output tokens/s per GPU"),
    "ttft_ms": N_("Time to first token (TTFT)"),
    "tpot_ms": N_("Time per output token (TPOT)"),
    "e2e_latency_ms": N_("End-to-end latency"),
}
BAND_COLOR = "#7f7f7f"
BAND_FILL = "rgba(127,127,127,0.12)"  # between the ±band lines


def decades(values: Sequence[float]) -> tuple[int, int]:
    """The decade exponents (lo, hi) that hold every positive value, at least one decade."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if not len(v):
        return 0, 1
    lo, hi = math.floor(math.log10(v.min())), math.ceil(math.log10(v.max()))
    return lo, max(hi, lo + 1)


def _axis(title: str, lo: int, hi: int) -> dict:
    ticks = [10.0**k for k in range(lo, hi + 1)]
    return {
        "type": "log",
        "title": {"text": title},
        "range": [lo, hi],
        "tickvals": ticks,
        "ticktext": [tick_label(t) for t in ticks],
        "constrain": "domain",
        "automargin": True,
    }


def _line(x: list[float], y: list[float], name: str, dash: str, legend: bool = True) -> dict:
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "lines",
        "name": name,
        "line": {"color": BAND_COLOR, "dash": dash, "width": 1.5},
        "hoverinfo": "skip",
        "legendgroup": name.split(":")[0],
        "showlegend": legend,
    }


def parity_figure(
    points: pd.DataFrame, unit: str, title: str, band: engine.Band | None = None
) -> go.Figure:
    """Measured (x) against predicted (y) on equal log axes.

    Args:
        points: columns `measured`, `predicted`, `group` (the colour: an accelerator) and
            `hover` (HTML, already escaped).
        unit: the metric's unit, in the axis titles ("ms", "tokens/s per GPU").
        title: plain text (escaped here).
        band: the profile's out-of-sample error; ±band lines around y = x when measured.
    """
    lo, hi = decades([*points["measured"], *points["predicted"]])
    edge = [10.0**lo, 10.0**hi]
    traces = [_line(x=edge, y=edge, name=_("predicted = measured"), dash="solid")]
    limits = band.limits(edge) if band is not None else None
    if limits is not None:
        name = _("±{band}: out-of-sample error").format(band=fmt(band.pct, "%"))
        traces.append(_line(x=edge, y=list(limits[1]), name=name, dash="dot"))
        lower = _line(x=edge, y=list(limits[0]), name=name, dash="dot", legend=False)
        traces.append(lower | {"fill": "tonexty", "fillcolor": BAND_FILL})
    for i, (group, part) in enumerate(points.groupby("group", sort=True)):
        traces.append(
            {
                "type": "scatter",
                "x": part["measured"].to_numpy(),
                "y": part["predicted"].to_numpy(),
                "mode": "markers",
                "name": html.escape(str(group)),
                "hovertext": list(part["hover"]),
                "hoverinfo": "text",
                "marker": {
                    "color": COLORS[i % len(COLORS)],
                    "size": 9,
                    "line": {"width": 1, "color": GAP_COLOR},
                },
            }
        )
    layout = {
        "title": wrap_title(html.escape(title)),
        "xaxis": _axis(_("measured ({unit})").format(unit=unit), lo, hi),
        "yaxis": _axis(_("predicted ({unit})").format(unit=unit), lo, hi)
        | {"scaleanchor": "x", "scaleratio": 1},
        "legend": legend_below(),
        "height": 460,
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
    }
    return go.Figure(data=traces, layout=layout)


def _hover(df: pd.DataFrame) -> list[str]:
    out = []
    where, shape = (
        _("<b>{model}</b> on {tp}× {hardware}"),
        _("{precision} (KV {kv}), {batch}, {input} in / {output} out tokens"),
    )
    values, error, row = (
        _("measured {measured} {unit}, predicted {predicted} {unit}"),
        _("error {error} · {engine}"),
        _("{file} row {row}"),
    )
    for r in df.itertuples(index=False):
        unit = said(engine.MEASUREMENT_METRICS[r.metric])
        if pd.isna(r.batch_size):
            batch = _("under load")
        else:
            batch = _("batch {batch}").format(batch=f"{int(r.batch_size):,}")
        lines = [
            where.format(
                model=html.escape(str(r.model)), tp=r.tp, hardware=html.escape(str(r.hardware))
            )
            + (f", PP {r.pp}" if r.pp > 1 else ""),
            shape.format(
                precision=html.escape(str(r.precision)),
                kv=html.escape(str(r.kv_precision)),
                batch=batch,
                input=f"{r.input_tokens:,}",
                output=f"{r.output_tokens:,}",
            ),
            values.format(measured=fmt(r.value), predicted=fmt(r.predicted), unit=unit),
            error.format(error=f"{r.error:+.1%}", engine=html.escape(str(r.engine))),
            row.format(file=html.escape(str(r.file)), row=r.row),
        ]
        out.append("<br>".join(lines))
    return out


def metric_figures(df: pd.DataFrame, profile: str, band: engine.Band) -> dict[str, go.Figure]:
    """One parity chart per metric the predicted rows hold (engine.validate's frame)."""
    ok = df[df["reason"] == ""]
    out = {}
    for metric in (m for m in TITLES if m in set(ok["metric"])):
        part = ok[ok["metric"] == metric]
        points = pd.DataFrame(
            {
                "measured": part["value"].to_numpy(),
                "predicted": part["predicted"].to_numpy(),
                "group": part["hardware"].astype(str).to_numpy(),
                "hover": _hover(part),
            }
        )
        unit = said(engine.MEASUREMENT_METRICS[metric])
        title = _("{metric}: profile {profile}").format(metric=_(TITLES[metric]), profile=profile)
        out[metric] = parity_figure(points=points, unit=unit, title=title, band=band)
    return out


def training_figure(df: pd.DataFrame, band: engine.Band, profile: str = "megatron") -> go.Figure:
    """The training runs (engine.training_fit_rows) measured against predicted."""
    text = _(
        "<b>{table}, {scheme}</b>: {layers}-layer h={hidden} on {gpus} {hardware}<br>tp {tp}, "
        "pp {pp}, v {vp}, b {micro}, B {global_batch}<br>measured {measured}, predicted "
        "{predicted} {unit} ({error}%)"
    )
    hover = [
        text.format(
            table=html.escape(str(r.table)),
            scheme=html.escape(str(r.scheme)),
            layers=r.layers,
            hidden=f"{r.hidden:,}",
            gpus=f"{r.gpus:,}",
            hardware=html.escape(str(r.hardware)),
            tp=r.tp,
            pp=r.pp,
            vp=r.vp,
            micro=r.micro_batch_size,
            global_batch=f"{r.global_batch_size:,}",
            measured=fmt(r.measured),
            predicted=fmt(r.predicted),
            unit=said(r.unit),
            error=f"{r.error_pct:+.1f}",
        )
        for r in df.itertuples(index=False)
    ]
    points = pd.DataFrame(
        {
            "measured": df["measured"].to_numpy(),
            "predicted": df["predicted"].to_numpy(),
            "group": (df["table"] + ", " + df["scheme"]).to_numpy(),
            "hover": hover,
        }
    )
    unit = said(df["unit"].iloc[0]) if len(df) else ""
    title = _("Training: {unit}, profile {name}").format(unit=unit, name=profile)
    return parity_figure(points=points, unit=unit, title=title, band=band)
