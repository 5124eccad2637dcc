"""The tornado chart of a sensitivity study: for each parameter, the change of one result when
that parameter is moved by −h and +h, as two horizontal bars, the largest on top.

Pure: the engine's elasticity rows (engine.Sensitivity.rows, one metric) in, a plotly Figure out.
Percentages come from ui.words.format; the parameters' names are translated by the caller.
"""

from __future__ import annotations

import plotly.graph_objects as go

from ui.charts.theme import legend_below, wrap_title
from ui.words.format import fmt, pct
from ui.words.i18n import _

LOW_COLOR, HIGH_COLOR = "#d62728", "#1f77b4"


def _bar(y: list, x: list, name: str, color: str) -> dict:
    return {
        "type": "bar",
        "orientation": "h",
        "y": y,
        "x": x,
        "name": name,
        "marker": {"color": color},
        "text": [("+" if v > 0 else "") + fmt(v, "%") if v else "" for v in x],
        "textposition": "auto",
        "textangle": 0,
        "hoverinfo": "name+text",
    }


def tornado_figure(rows: list[dict], labels: dict[str, str], title: str, step: float) -> go.Figure:
    """Two bars per parameter: the result's relative change at p·(1−step) and at p·(1+step)
    (a one-sided row has no +step bar), sorted by |elasticity| with the largest on top.
    `labels`: parameter name → its label on screen."""
    ranked = sorted(rows, key=lambda r: abs(r["elasticity"] or 0.0))  # plotly draws bottom-up
    names = [labels.get(r["parameter"], r["parameter"]) for r in ranked]
    low = [(r["change_at_minus_step"] or 0.0) * 100 for r in ranked]
    high = [(r["change_at_plus_step"] or 0.0) * 100 for r in ranked]
    share = pct(step)
    fig = go.Figure()
    minus, plus = _("parameter −{share}"), _("parameter +{share}")
    fig.add_trace(_bar(y=names, x=low, name=minus.format(share=share), color=LOW_COLOR))
    fig.add_trace(_bar(y=names, x=high, name=plus.format(share=share), color=HIGH_COLOR))
    fig.update_layout(
        barmode="overlay",
        height=120 + 36 * len(ranked),
        title=wrap_title(title),
        xaxis={"title": _("Change of the result (%)"), "ticksuffix": " %", "zeroline": True},
        yaxis={"automargin": True},
        uniformtext={"minsize": 11, "mode": "hide"},
        legend=legend_below(),
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
    )
    return fig
