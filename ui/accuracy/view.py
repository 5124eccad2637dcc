"""The Accuracy page's pure parts: the measured-vs-predicted figure and the tables.

Everything here is a function of data (no Streamlit), so it is tested without a browser. User
text (model names, sources from an uploaded file) reaches the figure only HTML-escaped.
The accuracy of the serving model and the profiles are described in docs/model.md ("Accuracy").
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go

from engine import ASSUMPTIONS, PROFILE_KEYS, Profile

SCENARIO_COLUMNS = (
    "model",
    "hardware",
    "tp",
    "pp",
    "precision",
    "kv_precision",
    "batch_size",
    "input_tokens",
    "output_tokens",
    "metric",
)
BAND = 0.20  # the ±20 % band drawn around y = x
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b")
SYMBOLS = {
    "output_tokens_per_s_per_gpu": "circle",
    "ttft_ms": "diamond",
    "tpot_ms": "square",
    "e2e_latency_ms": "triangle-up",
}
UNITS = {
    "output_tokens_per_s_per_gpu": "tokens/s per GPU",
    "ttft_ms": "ms",
    "tpot_ms": "ms",
    "e2e_latency_ms": "ms",
}


def pct(value: float) -> str:
    """A percentage for a metric tile ('12.8 %'; '—' when there is none)."""
    return "—" if not math.isfinite(value) else f"{value:.1f} %"


def _hover(df: pd.DataFrame) -> list[str]:
    rows = []
    for r in df.itertuples(index=False):
        unit = UNITS[r.metric]
        lines = [
            f"<b>{html.escape(str(r.model))}</b> on {r.tp}× {html.escape(str(r.hardware))}"
            + (f", PP {r.pp}" if r.pp > 1 else ""),
            f"{html.escape(str(r.precision))} (KV {html.escape(str(r.kv_precision))}), "
            f"batch {r.batch_size:,}, {r.input_tokens:,} in / {r.output_tokens:,} out tokens",
            f"{r.metric}: measured {r.value:,.4g} {unit}, predicted {r.predicted:,.4g} {unit}",
            f"error {r.error:+.1%} · {html.escape(str(r.engine))}",
            f"{html.escape(str(r.file))} row {r.row}",
        ]
        rows.append("<br>".join(lines))
    return rows


def accuracy_figure(df: pd.DataFrame, title: str) -> go.Figure:
    """Measured vs predicted on log–log axes: y = x, a ±20 % band, colour by accelerator,
    one symbol per metric; predicted rows only (the others are listed in the table)."""
    ok = df[df["reason"] == ""]
    fig = go.Figure()
    values = pd.concat([ok["value"], ok["predicted"]]) if len(ok) else pd.Series([1.0, 10.0])
    lo, hi = float(values.min()) / 2, float(values.max()) * 2
    line = [lo, hi]
    fig.add_trace(
        go.Scatter(
            x=line,
            y=[v * (1 - BAND) for v in line],
            mode="lines",
            line={"width": 0},
            hoverinfo="skip",
            showlegend=False,
        )
    )
    fig.add_trace(
        go.Scatter(
            x=line,
            y=[v * (1 + BAND) for v in line],
            mode="lines",
            line={"width": 0},
            fill="tonexty",
            fillcolor="rgba(120,120,120,0.15)",
            hoverinfo="skip",
            name="±20 %",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=line,
            y=line,
            mode="lines",
            name="predicted = measured",
            line={"color": "gray", "dash": "dash"},
            hoverinfo="skip",
        )
    )
    for i, hw in enumerate(sorted(ok["hardware"].unique())):
        for metric, symbol in SYMBOLS.items():
            part = ok[(ok["hardware"] == hw) & (ok["metric"] == metric)]
            if part.empty:
                continue
            fig.add_trace(
                go.Scatter(
                    x=part["value"],
                    y=part["predicted"],
                    mode="markers",
                    name=f"{html.escape(str(hw))} · {metric}",
                    hovertext=_hover(part),
                    hoverinfo="text",
                    marker={
                        "color": COLORS[i % len(COLORS)],
                        "symbol": symbol,
                        "size": 9,
                        "line": {"width": 1, "color": "white"},
                    },
                )
            )
    axis = {"type": "log", "range": [math.log10(lo), math.log10(hi)]}
    fig.update_layout(
        title={"text": html.escape(title)},
        xaxis={**axis, "title": {"text": "measured (tokens/s per GPU, or ms)"}},
        yaxis={**axis, "title": {"text": "predicted (same unit)"}, "scaleanchor": "x"},
        legend={"title": {"text": "accelerator · metric"}},
        height=560,
        margin={"l": 60, "r": 20, "t": 60, "b": 60},
    )
    return fig


def mape_by(frames: Mapping[str, pd.DataFrame], key: str | None) -> pd.DataFrame:
    """MAPE (%) of each profile (columns) overall or per `key` (rows); predicted rows only."""
    columns = {}
    for name, df in frames.items():
        ok = df[df["reason"] == ""]
        if key is None:
            columns[name] = pd.Series({"all rows": ok["ape_pct"].mean()})
        else:
            columns[name] = ok.groupby(key)["ape_pct"].mean()
    table = pd.DataFrame(columns)
    table.index.name = key or "rows"
    return table.round(1).add_suffix(" MAPE %").reset_index()


# What an unset assumption stands for, from the engine's registry.
UNSET = {a.name: a.none_means or "unset" for a in ASSUMPTIONS}


def profile_table(profile: Profile) -> pd.DataFrame:
    """Every assumption a profile can set, by user name (with its unit), unset ones said so."""
    values = profile.values()
    return pd.DataFrame(
        {
            "assumption": list(PROFILE_KEYS),
            "value": [f"{values[k]:.6g}" if k in values else UNSET[k] for k in PROFILE_KEYS],
        }
    )


def results_table(df: pd.DataFrame) -> pd.DataFrame:
    """The rows with unit-bearing column names, as shown and downloaded."""
    out = df[list(SCENARIO_COLUMNS)].copy()
    out["unit"] = df["metric"].map(UNITS)
    out["measured_in_unit"] = df["value"]
    out["predicted_in_unit"] = df["predicted"]
    out["error_pct"] = df["error"] * 100.0
    out["profile"] = df["profile"]
    out["not_predicted_because"] = df["reason"]
    for column in ("engine", "source", "file", "row"):  # provenance last
        out[column] = df[column]
    return out
