"""The planner's chart: throughput per GPU against interactivity, one Pareto front per group.

x = tokens/s per user (1 / TPOT: what a user feels), y = output tokens/s per GPU (what the
deployment earns per device), the axes of public serving benchmarks and NVIDIA aiconfigurator.
Each accelerator (and precision) gets one colour: its front as a line with markers (filled
where the configuration meets the SLOs, hollow where it misses one), the dominated
configurations as faint dots, and the SLO limits as dashed lines. A TPOT limit is drawn where
it lands on x: 1000 / TPOT_ms. The fronts are SVG, so their hollow markers show (WebGL draws an
open marker as nothing); the faint dots are SVG too while there are at most
ui.charts.theme.WEBGL_POINTS of them, WebGL (Scattergl) beyond (a WebGL context costs a fresh
browser about 0.2 s before its first chart, more than a few hundred SVG dots). Every number in
the hover text comes from ui.words.format. To keep a 50,000-configuration rerun fast, a front with
more than MAX_FRONT_POINTS points is drawn through that many of them (evenly spaced along it, both
ends kept), at most MAX_FAINT_POINTS dominated points are drawn (a fixed sample) and their hover
names the configuration only (whole numbers filled in by Plotly from `customdata`); the table
and the CSV keep every configuration and figure.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts.theme import WEBGL_POINTS, wrap_title
from ui.plan import view as pv
from ui.words.format import fmt, fmt_all, log_ticks
from ui.words.i18n import N_, _

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
MAX_FRONT_POINTS = 40  # per front drawn (evenly spaced along it)
MAX_FAINT_POINTS = 4_000  # dominated points drawn in all (a deterministic sample)
DOMINATED = N_("dominated: a point on this colour's front beats it on both axes")  # via _()


def _config_columns(df: pd.DataFrame, names: dict[str, str]) -> list[list]:
    """Devices, accelerator name (escaped: inert), TP, PP, batch and precision as lists."""
    label = {h: html.escape(names.get(h, h)) for h in map(str, pd.unique(df["hardware"]))}
    ints = [df[c].to_numpy(dtype=np.int64).tolist() for c in ("devices", "tp", "pp", "batch_size")]
    hardware = [label[str(h)] for h in df["hardware"].to_numpy()]
    return [ints[0], hardware, ints[1], ints[2], ints[3], list(map(str, df["precision"]))]


def hover_text(df: pd.DataFrame, names: dict[str, str], slo: pv.Slo | None = None) -> list[str]:
    """The whole configuration of each row, for the hover box (names escaped: inert); with
    `slo`, which limits the row misses."""
    if df.empty:
        return []
    cost = (
        fmt_all(df["usd_per_1m_output_tokens"].to_numpy(), _("USD per 1M output tokens"))
        if "usd_per_1m_output_tokens" in df
        else [""] * len(df)
    )
    if slo is not None:
        verdict = [html.escape(v) for v in pv.verdicts(df, slo, _)]
    elif "meets_slo" in df:
        meets, misses = _("meets the SLOs"), _("misses an SLO or does not fit")
        verdict = np.where(df["meets_slo"], meets, misses)
    else:
        verdict = [""] * len(df)
    columns = zip(
        *_config_columns(df, names),
        fmt_all(df["ttft_ms"].to_numpy() * 1e-3, "s"),
        fmt_all(df["tpot_ms"].to_numpy() * 1e-3, "s"),
        fmt_all(df[pv.Y].to_numpy(), _("output tokens/s per GPU")),
        fmt_all(df[pv.X].to_numpy(), _("tokens/s per user")),
        cost,
        verdict,
        strict=True,
    )
    line = _(
        "{n}× {hardware} TP{tp} PP{pp}, batch {batch}, {precision}<br>TTFT {ttft}, TPOT {tpot}"
    )
    return [
        line.format(
            n=n, hardware=h, tp=tp, pp=pp, batch=f"{b:,}", precision=p, ttft=ttft, tpot=tpot
        )
        + f"<br>{y}, {x}"
        + (f"<br>{c}" if c else "")
        + (f"<br>{v}" if v else "")
        for n, h, tp, pp, b, p, ttft, tpot, y, x, c, v in columns
    ]


CONFIG = ("devices", "tp", "pp", "batch_size")


def config_template(label: str, precision: str) -> str:
    """The hover of a dominated point: its configuration only (whole numbers from its
    `customdata` row, CONFIG order), cheap enough for thousands of points; its figures are
    its position, and the table and CSV have them all. `label` is already escaped."""
    text = _(
        "%{{customdata[0]:,}}× {hardware} TP%{{customdata[1]}} PP%{{customdata[2]}}, "
        "batch %{{customdata[3]:,}}, {precision}<br>{dominated}"
    ).format(hardware=label, precision=html.escape(precision), dominated=_(DOMINATED))
    return text + "<extra></extra>"


def thin_positions(positions: np.ndarray, most: int) -> np.ndarray:
    """At most `most` of `positions` (already in draw order), evenly spaced, both ends kept."""
    if len(positions) <= most:
        return positions
    return positions[np.unique(np.linspace(0, len(positions) - 1, most).round().astype(int))]


DRAWN = ["hardware", "precision", "devices", "tp", "pp", "batch_size", "ttft_ms", "tpot_ms"]
DRAWN += [pv.X, pv.Y, "usd_per_1m_output_tokens", "meets_slo", "fits_in_memory"]


def pareto_figure(df: pd.DataFrame, names: dict[str, str], slo: pv.Slo, title: str) -> go.Figure:
    """Fronts per accelerator × precision, dominated points faint, SLO limits as lines.

    Args:
        df: `ui.plan.view.ranked(...)` output (serve_sweep rows with cost and meets_slo).
        names: accelerator id -> display name.
        slo: the limits; TPOT and tokens/s per user become vertical lines.
        title: plain text (escaped here).

    Returns:
        The figure, built from plain dicts in one pass (no per-trace validation: a
        50,000-configuration rerun stays fast; the tests validate it).
    """
    shown = df.loc[df["fits_in_memory"].to_numpy(dtype=bool), DRAWN].reset_index(drop=True)
    traces, light = [], shown[[pv.X, pv.Y, *CONFIG]]  # what a faint point needs
    groups = _groups(shown)
    faint_kind = "scattergl" if sum(len(g[3]) for g in groups) > WEBGL_POINTS else "scatter"
    for i, (hw, precision, best, faint) in enumerate(groups):
        label = f"{html.escape(names.get(hw, hw))} {html.escape(precision)}"
        style = {"type": faint_kind, "legendgroup": label, "color": PALETTE[i % len(PALETTE)]}
        traces.append(
            _faint_trace(
                rows=light.iloc[faint],
                label=label,
                style=style,
                name=names.get(hw, hw),
                precision=precision,
            )
        )
        traces.append(
            _front_trace(rows=shown.iloc[best], label=label, style=style, names=names, slo=slo)
        )
    return go.Figure(data=traces, layout=_layout(shown, slo, title), _validate=False)


def _groups(shown: pd.DataFrame) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """Per (accelerator, precision), sorted: front rows by x (thinned) and faint rows (of one
    deterministic sample of all dominated rows), as positions in `shown`."""
    hw_codes, hws = pd.factorize(shown["hardware"])  # categorical: from its codes, no strings
    prec_codes, precs = pd.factorize(shown["precision"])
    group = hw_codes * max(len(precs), 1) + prec_codes
    front = pv.pareto_mask(shown, ["hardware", "precision"])
    faint = np.flatnonzero(~front)
    if len(faint) > MAX_FAINT_POINTS:
        faint = np.sort(np.random.default_rng(0).choice(faint, MAX_FAINT_POINTS, replace=False))
    x = shown[pv.X].to_numpy()
    out = []
    for code in np.unique(group):
        best = np.flatnonzero(front & (group == code))
        best = thin_positions(best[np.argsort(x[best], kind="stable")], MAX_FRONT_POINTS)
        hw, precision = hws[code // max(len(precs), 1)], precs[code % max(len(precs), 1)]
        out.append((str(hw), str(precision), best, faint[group[faint] == code]))
    return sorted(out, key=lambda g: (g[0], g[1]))


def _faint_trace(rows: pd.DataFrame, label: str, style: dict, name: str, precision: str):
    return {
        "type": style["type"],
        "legendgroup": style["legendgroup"],
        "x": rows[pv.X].to_numpy(),
        "y": rows[pv.Y].to_numpy(),
        "mode": "markers",
        "name": _("{label} (dominated)").format(label=label),
        "marker": {"color": style["color"], "size": 5, "opacity": 0.18},
        "customdata": rows[list(CONFIG)].to_numpy(dtype=np.int64),
        "hovertemplate": config_template(html.escape(name), precision),
        "showlegend": False,
    }


def _front_trace(rows: pd.DataFrame, label: str, style: dict, names: dict, slo: pv.Slo) -> dict:
    """A front: SVG, not WebGL (at most MAX_FRONT_POINTS points), because WebGL draws an open
    marker as its outline only, of width 0, i.e. nothing: the hollow "misses an SLO" markers
    must show. Every marker gets a 2 px ring in the front's colour (an open one: only that)."""
    symbols = np.where(rows["meets_slo"].to_numpy(dtype=bool), "circle", "circle-open")
    ring = {"color": style["color"], "width": 2}
    return {
        "type": "scatter",
        "legendgroup": style["legendgroup"],
        "x": rows[pv.X].to_numpy(),
        "y": rows[pv.Y].to_numpy(),
        "mode": "lines+markers",
        "name": label,
        "marker": {"color": style["color"], "size": 9, "symbol": symbols.tolist(), "line": ring},
        "line": {"color": style["color"], "width": 2},
        "hovertext": hover_text(rows, names, slo),
        "hoverinfo": "text",
    }


def _layout(shown: pd.DataFrame, slo: pv.Slo, title: str) -> dict:
    lines = _slo_lines(slo)
    return {
        "title": wrap_title(html.escape(title)),  # two lines: fits a phone
        "xaxis": {
            "title": {"text": _("Interactivity: tokens/s per user (= 1000 / TPOT in ms)")},
            "type": "log",
            **log_ticks(_span(shown[pv.X]), extra=[x for x, _ in lines]),
        },
        "yaxis": {
            "title": {"text": _("Throughput: output tokens/s per GPU")},
            "type": "log",
            **log_ticks(_span(shown[pv.Y])),
        },
        "shapes": [_vline(x) for x, _ in lines],
        "annotations": [_vlabel(x, text) for x, text in lines],
        "legend": {"orientation": "h", "y": -0.25},
        "margin": {"l": 70, "r": 20, "t": 60, "b": 40},
    }


def _vline(x: float) -> dict:
    line = {"dash": "dash", "color": "gray", "width": 1.5}
    return {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "line": line,
    }


def _vlabel(x: float, text: str) -> dict:
    """A label at the top of a vertical line; on a log axis Plotly places annotations at
    log10(x) (shapes take x itself)."""
    return {
        "x": math.log10(x),
        "xref": "x",
        "y": 1,
        "yref": "paper",
        "text": text,
        "showarrow": False,
        "xanchor": "left",
        "yanchor": "bottom",
    }


def _span(values: pd.Series) -> list[float]:
    """The smallest and largest positive finite value (all a log axis's ticks need)."""
    v = values.to_numpy(dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    return [float(v.min()), float(v.max())] if len(v) else []


def _slo_lines(slo: pv.Slo) -> list[tuple[float, str]]:
    lines = []
    if slo.tpot_ms:
        lines.append((1000.0 / slo.tpot_ms, f"TPOT ≤ {fmt(slo.tpot_ms * 1e-3, 's')}"))
    if slo.min_tokens_per_s_per_user:
        v = slo.min_tokens_per_s_per_user
        lines.append((v, f"≥ {fmt(v, _('tokens/s per user'))}"))
    return lines
