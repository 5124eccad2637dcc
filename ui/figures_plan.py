"""The planner's chart: throughput per GPU against interactivity, one Pareto front per group.

x = tokens/s per user (1 / TPOT: what a user feels), y = output tokens/s per GPU (what the
deployment earns per device), the axes of SemiAnalysis InferenceMAX and NVIDIA aiconfigurator.
Each accelerator (and precision) gets one colour: its front as a line with markers, the
dominated configurations as faint dots (WebGL, so 50,000 points stay interactive), and the
SLO limits as dashed lines. A TPOT limit is drawn where it lands on x: 1000 / TPOT_ms.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui import plan_view as pv

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
MAX_FAINT_POINTS = 20_000  # dominated points drawn; beyond this a deterministic sample


def _num(value: float) -> str:
    return f"{value:,.4g}"


def _usd(value: float) -> str:
    return "no price" if np.isnan(value) else f"{value:,.3g} USD per 1M output tokens"


def hover_text(df: pd.DataFrame, names: dict[str, str]) -> list[str]:
    """The whole configuration of each row, for the hover box (names escaped: inert)."""
    if df.empty:
        return []
    parts = [
        df["devices"].astype(int).astype(str)
        + "× "
        + df["hardware"].map(lambda h: html.escape(names.get(h, h))),
        " TP" + df["tp"].astype(int).astype(str) + " PP" + df["pp"].astype(int).astype(str),
        ", batch " + df["batch_size"].astype(int).map("{:,}".format),
        ", " + df["precision"].astype(str),
        "<br>TTFT " + df["ttft_ms"].map(_num) + " ms, TPOT " + df["tpot_ms"].map(_num) + " ms",
        "<br>" + df[pv.Y].map(_num) + " tokens/s per GPU, " + df[pv.X].map(_num) + " per user",
    ]
    if "usd_per_1m_output_tokens" in df:
        cost = df["usd_per_1m_output_tokens"].map(_usd)
        parts.append("<br>" + cost)
    if "meets_slo" in df:
        verdict = np.where(df["meets_slo"], "meets the SLOs", "misses an SLO or does not fit")
        parts.append("<br>" + pd.Series(verdict, index=df.index))
    text = parts[0]
    for p in parts[1:]:
        text = text + p
    return list(text)


def pareto_figure(df: pd.DataFrame, names: dict[str, str], slo: pv.Slo, title: str) -> go.Figure:
    """Fronts per accelerator × precision, dominated points faint, SLO limits as lines.

    Args:
        df: `plan_view.ranked(...)` output (serve_sweep rows with cost and meets_slo).
        names: accelerator id -> display name.
        slo: the limits; TPOT and tokens/s per user become vertical lines.
        title: plain text (escaped here).
    """
    fig = go.Figure()
    shown = df[df["fits_in_memory"].to_numpy(dtype=bool)]
    groups = ["hardware", "precision"]
    front = pv.pareto_mask(shown, groups)
    for i, ((hw, precision), rows) in enumerate(shown.groupby(groups, sort=True)):
        color, label = PALETTE[i % len(PALETTE)], f"{html.escape(names.get(hw, hw))} {precision}"
        on = front[shown.index.get_indexer(rows.index)]
        best = rows[on].sort_values(pv.X)
        faint = rows[~on]
        if len(faint) > MAX_FAINT_POINTS:
            faint = faint.sample(MAX_FAINT_POINTS, random_state=0)
        common = {"legendgroup": label, "hoverinfo": "text"}
        fig.add_trace(
            go.Scattergl(
                x=faint[pv.X],
                y=faint[pv.Y],
                mode="markers",
                name=f"{label} (dominated)",
                marker={"color": color, "size": 5, "opacity": 0.18},
                hovertext=hover_text(faint, names),
                showlegend=False,
                **common,
            )
        )
        fig.add_trace(
            go.Scattergl(
                x=best[pv.X],
                y=best[pv.Y],
                mode="lines+markers",
                name=label,
                marker={
                    "color": color,
                    "size": 8,
                    "symbol": np.where(best["meets_slo"], "circle", "circle-open"),
                },
                line={"color": color, "width": 2},
                hovertext=hover_text(best, names),
                **common,
            )
        )
    for x, text in _slo_lines(slo):
        fig.add_vline(x=x, line={"dash": "dash", "color": "gray"}, annotation_text=text)
    fig.update_layout(
        title={"text": html.escape(title)},
        xaxis={"title": "Interactivity: tokens/s per user (= 1000 / TPOT in ms)", "type": "log"},
        yaxis={"title": "Throughput: output tokens/s per GPU", "type": "log"},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 70, "r": 20, "t": 60, "b": 40},
    )
    return fig


def _slo_lines(slo: pv.Slo) -> list[tuple[float, str]]:
    lines = []
    if slo.tpot_ms:
        lines.append((1000.0 / slo.tpot_ms, f"TPOT ≤ {slo.tpot_ms:,.4g} ms"))
    if slo.min_tokens_per_s_per_user:
        v = slo.min_tokens_per_s_per_user
        lines.append((v, f"≥ {v:,.4g} tokens/s per user"))
    return lines
