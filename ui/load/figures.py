"""Figures of the serving-under-load page: latency and throughput against the request rate, and
one run's timeline (docs/model.md, "Serving under load").

Pure builders over the engine's frames (no streamlit, no physics): `curve` is
`engine.load_grid`'s fast path over open-loop rates, `points` the simulator at a few rates
(ui/load/run.py `checks`), `series` a run's time series. What the deployment cannot sustain is
never drawn as if it could: the fast path's rows past saturation (`stable` false) are left out
and the region shaded, and a simulated rate whose queue grew through the run keeps its
throughput point but not its latencies (they depend on the run's length). The profile's
measured error is a shaded band around the p50 line (`band_pct`; none drawn when it was not
measured, and the subtitle says so). Numbers in hover text come from ui.words.format.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts.theme import COLORS, GAP_COLOR, legend_below, log_axis, wrap_title
from ui.words.format import fmt, fmt_all, pct
from ui.words.i18n import N_, _

SLO_COLOR = "#d62728"
KNEE_COLOR = "#2ca02c"
BAND_FILL = "rgba(31, 119, 180, 0.15)"
BEYOND_FILL = "rgba(127, 127, 127, 0.15)"
STATS = {  # percentile: (line dash, colour)
    "p50": ("solid", COLORS[0]),
    "p90": ("dot", COLORS[3]),
    "p99": ("dash", COLORS[4]),
}
LATENCY = {  # metric: (title, the percentiles drawn; the SLO's first)
    "ttft": (N_("Time to first token (TTFT)"), ("p90", "p50", "p99")),
    "tpot": (N_("Time per output token (TPOT)"), ("p99", "p50")),
}


def band_words(band_pct: float | None, profile: str) -> str:
    if band_pct is None:
        return _("profile {profile}: error not measured").format(profile=profile)
    return _("profile {profile}: ±{band} measured error").format(
        profile=profile, band=pct(band_pct / 100)
    )


def _stable(curve: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """`columns` of the curve's steady rates (stable, fitting in memory); only those columns
    are copied (the curve carries its text columns too)."""
    keep = (curve["stable"].astype(bool) & curve["fits_in_memory"].astype(bool)).to_numpy()
    return curve[columns][keep]


def _vline(x: float, color: str, dash: str, name: str, y: tuple) -> dict:
    return {
        "type": "scatter",
        "x": [x, x],
        "y": list(y),
        "mode": "lines",
        "name": name,
        "line": {"color": color, "width": 2, "dash": dash},
        "hovertemplate": f"{name}<extra></extra>",
    }


def _beyond(saturation: float, x_hi: float, y: tuple) -> dict | None:
    """The region past saturation, shaded: no steady state there."""
    if not np.isfinite(saturation) or x_hi <= saturation:
        return None
    name = _("beyond saturation: the queue grows without bound")
    return {
        "type": "scatter",
        "x": [saturation, x_hi, x_hi, saturation],
        "y": [y[0], y[0], y[1], y[1]],
        "fill": "toself",
        "fillcolor": BEYOND_FILL,
        "line": {"width": 0},
        "mode": "lines",
        "name": name,
        "showlegend": False,
        "hoverinfo": "text",
        "hoveron": "fills",
        "text": name,
    }


def _beyond_label(saturation: float, x_hi: float) -> list[dict]:
    """A short label at the top of the shaded region (its words are in the hover)."""
    if not np.isfinite(saturation) or x_hi <= saturation:
        return []
    return [
        {
            "x": (saturation + x_hi) / 2,
            "y": 1,
            "xref": "x",
            "yref": "paper",
            "text": _("no steady state"),
            "showarrow": False,
            "textangle": -90,
            "xanchor": "center",
            "yanchor": "top",
            "font": {"size": 10, "color": GAP_COLOR},
        }
    ]


def _marks(marks: dict, y: tuple) -> list[dict]:
    """The knee (the highest rate meeting the SLOs), saturation and the chosen rate."""
    styles = {
        "knee": (KNEE_COLOR, "dash", _("max rate {rate}/s")),
        "saturation": (GAP_COLOR, "dot", _("saturation {rate}/s")),
        "chosen": ("#e6a800", "solid", _("this run {rate}/s")),
    }
    out = []
    for key, (color, dash, label) in styles.items():
        x = marks.get(key)
        if x is not None and np.isfinite(x) and x > 0:
            out.append(_vline(x=x, color=color, dash=dash, name=label.format(rate=fmt(x)), y=y))
    return out


def latency_figure(
    curve: pd.DataFrame,
    points: pd.DataFrame | None,
    metric: str,
    slo_ms: float | None,
    marks: dict,
    band_pct: float | None,
    profile: str,
) -> go.Figure:
    """p50 / p90 / p99 of TTFT or TPOT (ms, log axis) against the open-loop rate: the fast path
    as lines, the simulator as markers, the SLO line, the knee and saturation marked."""
    title, stats = LATENCY[metric]
    ok = _stable(curve, ["rate_per_s", *dict.fromkeys(f"{metric}_ms_{s}" for s in ("p50", *stats))])
    x = ok["rate_per_s"].to_numpy(dtype=float)
    traces, ys = [], []
    if band_pct is not None and len(ok):
        mid = ok[f"{metric}_ms_p50"].to_numpy(dtype=float)
        lo, hi = mid * (1 - band_pct / 100), mid * (1 + band_pct / 100)
        traces.append(
            _band(
                x=x, lo=lo, hi=hi, name=_("p50 ± {band} (error)").format(band=pct(band_pct / 100))
            )
        )
        ys += [*lo, *hi]
    for stat in stats:
        dash, color = STATS[stat]
        y = ok[f"{metric}_ms_{stat}"].to_numpy(dtype=float)
        ys += list(y)
        hover = [
            _("{stat} {metric} {time} at {rate}").format(
                stat=stat, metric=metric.upper(), time=a, rate=b
            )
            for a, b in zip(fmt_all(y * 1e-3, "s"), fmt_all(x, "requests/s"), strict=True)
        ]
        traces.append(_curve_line(x=x, y=y, name=f"{stat}", dash=dash, color=color, hover=hover))
    good = _measured(points)
    for stat in stats:
        if good is None or not len(good):
            break
        y = good[f"{metric}_ms_{stat}"].to_numpy(dtype=float)
        ys += list(y)
        traces.append(_sim_points(rates=good["rate_per_s"], y=y, stat=stat, metric=metric))
    ys = [v for v in ys if np.isfinite(v) and v > 0] or [1.0]
    y_rng = (min(ys) / 1.5, max([*ys, slo_ms or 0]) * 1.5)
    x_hi = float(curve["rate_per_s"].max()) if len(curve) else 1.0
    if slo_ms is not None:
        name = _("SLO {stat} ≤ {limit}").format(stat=stats[0], limit=fmt(slo_ms * 1e-3, "s"))
        traces.append(_hline(slo_ms, x_hi, name))
    traces += _marks(marks, y_rng)
    beyond = _beyond(marks.get("saturation", float("nan")), x_hi, y_rng)
    if beyond:
        traces.append(beyond)
    layout = {
        "title": wrap_title(
            html.escape(
                _("{title}: {band}").format(title=_(title), band=band_words(band_pct, profile))
            )
        ),
        "height": 520,
        "xaxis": {
            "title": {"text": _("Request rate (requests/s, open loop)")},
            "rangemode": "tozero",
        },
        "yaxis": log_axis(
            _("{metric} (ms)").format(metric=metric.upper()), ys, extra=[slo_ms] if slo_ms else ()
        )
        | {"range": np.log10(y_rng).tolist()},
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "hovermode": "closest",
        "annotations": _beyond_label(marks.get("saturation", float("nan")), x_hi),
    }
    return go.Figure(data=traces, layout=layout, _validate=False)


def _measured(points: pd.DataFrame | None) -> pd.DataFrame | None:
    """The simulated rates whose queue stayed bounded (their latencies are steady-state)."""
    if points is None or not len(points):
        return None
    return points[~points["queue_grew"].astype(bool) & points["fits_in_memory"].astype(bool)]


def _band(x, lo, hi, name: str) -> dict:
    return {
        "type": "scatter",
        "x": np.concatenate([x, x[::-1]]),
        "y": np.concatenate([hi, lo[::-1]]),
        "fill": "toself",
        "fillcolor": BAND_FILL,
        "line": {"width": 0},
        "mode": "lines",
        "name": name,
        "hoverinfo": "skip",
    }


def _curve_line(x, y, name: str, dash: str, color: str, hover: list[str]) -> dict:
    return {
        "type": "scatter",
        "x": np.asarray(x, dtype=float),  # arrays go to the browser as typed arrays
        "y": np.asarray(y, dtype=float),
        "mode": "lines",
        "name": name,
        "line": {"color": color, "width": 2, "dash": dash},
        "hovertext": hover,
        "hoverinfo": "text",
    }


def _sim_points(rates, y, stat: str, metric: str) -> dict:
    """The simulator's percentile at the checked rates: open circles in the percentile's
    colour, with a legend entry of their own ('simulated p90'), one per colour drawn."""
    rates = np.asarray(rates, dtype=float)
    hover = [
        _("simulated {stat} {metric} {time} at {rate}").format(
            stat=stat, metric=metric.upper(), time=a, rate=b
        )
        for a, b in zip(fmt_all(y * 1e-3, "s"), fmt_all(rates, "requests/s"), strict=True)
    ]
    return {
        "type": "scatter",
        "x": list(rates),
        "y": list(y),
        "mode": "markers",
        "name": _("simulated {stat}").format(stat=stat),
        "marker": {
            "color": STATS[stat][1],
            "size": 9,
            "symbol": "circle-open",
            "line": {"width": 2},
        },
        "hovertext": hover,
        "hoverinfo": "text",
    }


def _hline(y: float, x_hi: float, name: str) -> dict:
    return {
        "type": "scatter",
        "x": [0, x_hi],
        "y": [y, y],
        "mode": "lines",
        "name": name,
        "line": {"color": SLO_COLOR, "width": 2, "dash": "dash"},
        "hovertemplate": f"{html.escape(name)}<extra></extra>",
    }


def throughput_figure(
    curve: pd.DataFrame, points: pd.DataFrame | None, marks: dict, band_pct, profile: str
) -> go.Figure:
    """Completed requests/s and goodput (requests/s meeting every SLO) against the offered
    open-loop rate: the fast path's throughput up to saturation, the simulator's throughput and
    goodput at each checked rate (past saturation too: a throughput that stops rising)."""
    ok = _stable(curve, ["rate_per_s", "requests_per_s", "output_tokens_per_s"])
    x = ok["rate_per_s"].to_numpy(dtype=float)
    y = ok["requests_per_s"].to_numpy(dtype=float)
    tokens = fmt_all(ok["output_tokens_per_s"].to_numpy(dtype=float), "tokens/s")
    hover = [
        _("{served} served ({tokens} of output)").format(served=a, tokens=t)
        for a, t in zip(fmt_all(y, "requests/s"), tokens, strict=True)
    ]
    traces = []
    traces.append(
        _curve_line(
            x=x, y=y, name=_("served (fast path)"), dash="solid", color=COLORS[0], hover=hover
        )
    )
    ys = [*y]
    if points is not None and len(points):
        r = points["rate_per_s"].to_numpy(dtype=float)
        for column, name, color in (
            ("requests_per_s", _("served (simulated)"), COLORS[0]),
            ("goodput_requests_per_s", _("goodput (simulated)"), KNEE_COLOR),
        ):
            v = points[column].to_numpy(dtype=float)
            ys += list(v)
            texts = fmt_all(v, "requests/s")
            traces.append(
                {
                    "type": "scatter",
                    "x": list(r),
                    "y": list(v),
                    "mode": "lines+markers",
                    "name": name,
                    "line": {"color": color, "width": 1.5, "dash": "dot"},
                    "marker": {"color": color, "size": 9},
                    "hovertext": [
                        _("{name}: {value} offered {rate}").format(name=name, value=t, rate=o)
                        for t, o in zip(texts, fmt_all(r, "requests/s"), strict=True)
                    ],
                    "hoverinfo": "text",
                }
            )
    finite = [v for v in ys if np.isfinite(v)] or [1.0]
    y_rng = (0.0, max(finite) * 1.15)
    x_hi = float(
        max(
            curve["rate_per_s"].max(),
            *(points["rate_per_s"] if points is not None and len(points) else [0]),
        )
    )
    top = marks.get("saturation", float("nan"))
    if band_pct is not None and np.isfinite(top):
        f = band_pct / 100
        name = _("saturation ± {band} (error)").format(band=pct(f))
        traces.append(_strip(x0=top * (1 - f), x1=top * (1 + f), y=y_rng, name=name))
    traces += _marks(marks, y_rng)
    beyond = _beyond(top, x_hi, y_rng)
    if beyond:
        traces.append(beyond)
    layout = {
        "annotations": _beyond_label(top, x_hi),
        "title": wrap_title(
            html.escape(
                _("Throughput and goodput: {band}").format(band=band_words(band_pct, profile))
            )
        ),
        "height": 500,
        "xaxis": {"title": {"text": _("Offered rate (requests/s)")}, "rangemode": "tozero"},
        "yaxis": {"title": {"text": _("Completed (requests/s)")}, "range": list(y_rng)},
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "hovermode": "closest",
    }
    return go.Figure(data=traces, layout=layout, _validate=False)


def _strip(x0: float, x1: float, y: tuple, name: str) -> dict:
    return {
        "type": "scatter",
        "x": [x0, x1, x1, x0],
        "y": [y[0], y[0], y[1], y[1]],
        "fill": "toself",
        "fillcolor": BAND_FILL,
        "line": {"width": 0},
        "mode": "lines",
        "name": name,
        "hoverinfo": "skip",
    }


def timeline_figure(series: dict, title: str) -> go.Figure:
    """One run: running and queued requests (top) and the KV pool in use (bottom, %)."""
    t = np.asarray(series["time_s"], dtype=float)
    traces = []
    for key, name, color in (
        ("running", _("running"), COLORS[0]),
        ("queued", _("queued"), COLORS[1]),
    ):
        v = np.asarray(series[key], dtype=float)
        traces.append(
            _step(t=t, v=v, name=name, color=color, axis="y", texts=fmt_all(v, "requests"))
        )
    kv = np.asarray(series["kv_in_use"], dtype=float) * 100
    traces.append(
        _step(
            t=t, v=kv, name=_("KV cache in use"), color=COLORS[2], axis="y2", texts=fmt_all(kv, "%")
        )
    )
    layout = {
        "title": wrap_title(html.escape(title)),
        "height": 480,
        "xaxis": {"title": {"text": _("Time (s)")}, "anchor": "y2"},
        "yaxis": {
            "title": {"text": _("Requests")},
            "domain": [0.42, 1.0],
            "rangemode": "tozero",
        },
        "yaxis2": {
            "title": {"text": _("KV in use (%)")},
            "domain": [0.0, 0.32],
            "range": [0, 105],
        },
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "hovermode": "x unified",
    }
    return go.Figure(data=traces, layout=layout, _validate=False)


def _step(t, v, name: str, color: str, axis: str, texts: list[str]) -> dict:
    kind = "scattergl" if len(t) > 500 else "scatter"
    template = _("{name}: {value}")  # translated once, not once per point
    return {
        "type": kind,
        # arrays, not lists: a run's thousands of steps are copied and written 3-4x faster
        "x": np.asarray(t, dtype=float),
        "y": np.asarray(v, dtype=float),
        "mode": "lines",
        "line": {"color": color, "width": 1.5, "shape": "hv"},
        "name": name,
        "yaxis": axis,
        "xaxis": "x",
        "hovertext": [template.format(name=name, value=x) for x in texts],
        "hoverinfo": "text",
    }


def speculation_figure(frame: pd.DataFrame) -> go.Figure:
    """Each user's output tokens/s against the rate, with and without speculative decoding."""
    fig = go.Figure()
    lines = (
        ("tokens_per_s_per_user_with", _("With speculative decoding"), COLORS[0], "solid"),
        ("tokens_per_s_per_user_without", _("Without"), COLORS[1], "dash"),
    )
    for column, name, color, dash in lines:
        fig.add_trace(
            go.Scatter(
                x=[float(v) for v in frame["rate_per_s"]],
                y=[float(v) for v in frame[column]],
                mode="lines",
                name=name,
                line={"color": color, "dash": dash},
                hovertext=[
                    f"{fmt(r, 'requests/s')}: {fmt(v, 'tokens/s')}"
                    for r, v in zip(frame["rate_per_s"], frame[column], strict=True)
                ],
                hoverinfo="text",
            )
        )
    fig.update_layout(
        title=wrap_title(html.escape(_("Tokens/s per user against the load (fast path)"))),
        xaxis={"title": {"text": _("Rate (requests/s)")}, "rangemode": "tozero"},
        yaxis={"title": {"text": _("Output tokens/s per user")}, "rangemode": "tozero"},
        height=380,
        legend=legend_below(),
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
    )
    return fig
