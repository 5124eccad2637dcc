"""Multi-device LLM deployments on the comparison page ("8× H100 TP8" vs "4× MI300X TP4").

Each deployment (ui.compare.deployments) runs through the serving model, engine.serve_sweep,
over the page's batch sizes at one request shape (input and output tokens): tokens/s per GPU and
in all, TTFT, TPOT, memory per device, the communication share of a decode step, and the cost
per million output tokens where the accelerator has a catalogued price (ui.charts.cost, the
planner's rule).
docs/model.md, "Serving model". Table, CSV and chart builders are pure; `show` draws them.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import engine
from ui.charts import bands, serve_rows
from ui.charts.cost import usd_per_1m_output_tokens
from ui.charts.theme import COLORS, legend_below, log_axis
from ui.compare.deployments import (
    Deployment,
    check_deployment,
    notes,
    write_deployments,
)
from ui.core import profiles as pk
from ui.core.downloads import download_csv
from ui.links import state
from ui.links.params import MAX_VALUE_CHARS, Link
from ui.widgets.pickers import split_inputs
from ui.words.format import fmt_all, pct
from ui.words.i18n import N_, _, message_text
from ui.words.text import plain

# column: (on-screen header, ui.words.format unit or None (as is), factor to that unit);
# headers shown through _()
DISPLAY = {
    "deployment_label": (N_("Deployment"), None, 1.0),
    "batch_size": (N_("Batch (sequences)"), "", 1.0),
    "output_tokens_per_s_per_gpu": (N_("Output tokens/s per GPU"), "tokens/s", 1.0),
    "output_tokens_per_s": (N_("Output tokens/s in all"), "tokens/s", 1.0),
    "tokens_per_s_per_user": (N_("Tokens/s per user"), "tokens/s", 1.0),
    "ttft_ms": ("TTFT", "s", 1e-3),
    "tpot_ms": ("TPOT", "s", 1e-3),
    "memory_per_device_bytes": (N_("Memory per device"), "B", 1.0),
    "usable_memory_bytes": (N_("Usable per device"), "B", 1.0),
    "decode_comm_share": (N_("Communication (% of a decode step)"), "%", 100.0),
    "usd_per_hour": (N_("Price (USD per hour, all devices)"), "USD/h", 1.0),
    "usd_per_1m_output_tokens": (N_("USD per 1M output tokens"), "USD", 1.0),
    "decode_bottleneck": (N_("Decode bound"), None, 1.0),
}


def frame(
    model,
    deps: Sequence[Deployment],
    cat: engine.Catalog,
    *,
    batches: Sequence[int],
    tokens: Mapping[str, int],
    precision: str,
    profile: engine.Profile,
    overrides: Mapping[str, object],
) -> pd.DataFrame:
    """serve_sweep rows of every deployment over `batches`, with its text and label, the
    hourly price of all its devices and the cost per million output tokens (NaN: no price).

    Args:
        overrides: assumptions by user name over the profile's (serve_rows.options).
    """
    opts = serve_rows.options(profile, dict(overrides), cat)
    requests = engine.BatchGrid(batch_sizes=tuple(batches), **tokens)
    parts = []
    for d in deps:
        hw = cat.hardware[d.hardware]
        grid = engine.Deployments.of(
            models=(model,),
            hardware=(hw,),
            tp=d.tp,
            pp=d.pp,
            ep=d.ep,
            attention_dp=d.attention_dp,
            precisions=(precision,),
            **opts,
        )
        rows = engine.serve_sweep(grid, batches=requests)
        rows.insert(0, "deployment_label", d.label(hw.name))
        rows.insert(0, "deployment", d.text())
        parts.append(rows)
    df = pd.concat(parts, ignore_index=True)
    prices = {d.hardware: cat.hardware[d.hardware].price_per_hour_usd for d in deps}
    price = df["hardware"].map(lambda h: prices.get(h)).astype(float)
    df.insert(df.columns.get_loc("fits_in_memory") + 1, "usd_per_hour", price * df["devices"])
    cost = usd_per_1m_output_tokens(df, prices)
    df.insert(df.columns.get_loc("usd_per_hour") + 1, "usd_per_1m_output_tokens", cost)
    return df


def _key(model, deps, cat, profile) -> str:
    """What a deployment table depends on beyond the plain arguments: the specs themselves
    (frozen dataclasses; a custom or team entry under a known id changes the key)."""
    specs = [(d.label(), cat.hardware[d.hardware]) for d in deps]
    return repr((model, specs, profile.name, profile.assumptions))


@st.cache_data(max_entries=64, show_spinner=False)
def _frame_cached(key: str, _model, _deps, _cat, _profile, **run) -> pd.DataFrame:
    """`frame`, cached on `key` and the batches, tokens, precision and overrides (a rerun that
    changes none of them, e.g. a chart hover or another section's widget, costs nothing)."""
    return frame(_model, _deps, _cat, profile=_profile, **run)


def display_table(df: pd.DataFrame) -> pd.DataFrame:
    """The rows under readable headers, numbers as ui.words.format text with units."""
    out = {}
    for column, (header, unit, factor) in DISPLAY.items():
        values = df[column].to_numpy()
        out[_(header)] = values if unit is None else fmt_all(values * factor, unit)
    out[_("Fits in memory")] = np.where(df["fits_in_memory"], _("yes"), _("no"))
    return pd.DataFrame(out)


def csv_table(df: pd.DataFrame, profile_label: str) -> pd.DataFrame:
    """The CSV: every serve_sweep column (snake_case, unit-suffixed), the deployment first,
    the profile as used ('trtllm, edited' when the page's assumptions differ from it)."""
    out = df.drop(columns=["deployment_label"]).copy()
    out["profile"] = profile_label
    return out


def band_of(model, df: pd.DataFrame, profile: engine.Profile, edited: bool):
    """The deployments' error band (the profile's measured out-of-sample error) and, per row,
    why it leaves the profile's calibrated ground (its accelerator or precision, the model's
    family): ui.charts.bands."""
    arch = getattr(model, "arch", None)
    hardware, precision = df["hardware"].astype(str), df["precision"].astype(str)
    note = bands.note(
        profile=profile,
        arch=arch,
        hardware=list(dict.fromkeys(hardware)),
        precision=list(dict.fromkeys(precision)),
        edited=edited,
    )
    return note, bands.ground_column(
        profile=profile, arch=arch, hardware=hardware, precision=precision
    )


def with_band(
    table: pd.DataFrame, note: bands.Note, off: Sequence[tuple[engine.Message, ...]]
) -> pd.DataFrame:
    """The on-screen table with the band and each row's off-ground reasons ('—': on it)."""
    off_ground = [bands.reasons_text(o) for o in off]
    return table.assign(**{_("Error band"): note.short(), _("Off calibrated ground"): off_ground})


def tradeoff_figure(df: pd.DataFrame, title: str) -> go.Figure:
    """Tokens/s per GPU against tokens/s per user, one line per deployment, a point per batch
    (the serving trade-off: bigger batches raise the first and lower the second)."""
    traces = []
    for i, (label, part) in enumerate(df.groupby("deployment_label", sort=False)):
        ok = part[np.isfinite(part["tokens_per_s_per_user"].to_numpy(dtype=float))]
        columns = (
            ok["batch_size"],
            fmt_all(ok["output_tokens_per_s_per_gpu"], "tokens/s"),
            fmt_all(ok["tokens_per_s_per_user"], "tokens/s"),
            fmt_all(ok["ttft_ms"] * 1e-3, "s"),
            fmt_all(ok["tpot_ms"] * 1e-3, "s"),
            ok["fits_in_memory"],
        )
        text = _(
            "<b>{deployment}</b>, batch {batch}<br>{gpu} per GPU · {user} per user<br>"
            "TTFT {ttft} · TPOT {tpot}"
        )
        no_fit = _("<br>does not fit")
        hover = [
            text.format(
                deployment=html.escape(label), batch=f"{b:,}", gpu=g, user=u, ttft=t, tpot=p
            )
            + ("" if fit else no_fit)
            for b, g, u, t, p, fit in zip(*columns, strict=True)
        ]
        color = COLORS[i % len(COLORS)]
        symbols = np.where(ok["fits_in_memory"], "circle", "x-open").tolist()
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": html.escape(label),
                "x": ok["tokens_per_s_per_user"].to_numpy(),
                "y": ok["output_tokens_per_s_per_gpu"].to_numpy(),
                "line": {"color": color},
                "marker": {"color": color, "size": 9, "symbol": symbols},
                "hovertext": hover,
                "hoverinfo": "text",
            }
        )
    ys = [v for t in traces for v in t["y"]]
    layout = {
        "title": {"text": html.escape(title)},
        # linear: a few deployments span well under a decade of tokens/s per user
        "xaxis": {
            "title": {"text": _("Tokens/s per user (interactivity)")},
            "automargin": True,
            "rangemode": "tozero",
        },
        "yaxis": log_axis(_("Output tokens/s per GPU (throughput)"), ys),
        "legend": legend_below(),
        "height": 480,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
    }
    return go.Figure(data=traces, layout=layout)


def caption(df: pd.DataFrame, tokens: Mapping[str, int], profile_text: str) -> str:
    """What the section shows (plain text)."""
    unpriced = sorted(set(df.loc[df["usd_per_hour"].isna(), "hardware"].astype(str)))
    priced = (
        ""
        if not unpriced
        else _(" No catalogued price: {hardware}.").format(hardware=", ".join(unpriced))
    )
    return _(
        "Serving model (docs/model.md): requests of {input} input and {output} output tokens, "
        "the batch's prompts prefilled together (TTFT), then one decode step per output token "
        "(TPOT). {profile} Communication: share of a decode step in all-reduces and pipeline "
        "transfers (largest {largest}). Cost: catalogued list price per accelerator-hour × "
        "devices ÷ output tokens per hour.{priced}"
    ).format(
        input=f"{tokens['input_tokens']:,}",
        output=f"{tokens['output_tokens']:,}",
        profile=profile_text,
        largest=pct(float(df["decode_comm_share"].max())),
        priced=priced,
    )


def show(model, deps, refused, cat, *, csv_name: str, profile, changed, **run) -> None:
    """The section: refusals, notes, the trade-off chart, the table and its CSV download.

    Args:
        model: the decoder LLM; deps: the deployments to run; refused: why others were left
            out (plain text); cat: the catalogue in use.
        csv_name: the download's file name; profile, changed: the profile and the page's
            edits of it (ui.core.profiles); **run: `frame`'s batches, tokens, precision,
            overrides.
    """
    for why in refused:
        st.warning(_("Deployment left out: {why}").format(why=plain(why)), icon="⚠️")
    if not deps:
        return
    df = _frame_cached(
        key=_key(model=model, deps=deps, cat=cat, profile=profile),
        _model=model,
        _deps=deps,
        _cat=cat,
        _profile=profile,
        **run,
    )
    st.subheader(_("Multi-device deployments (serving model)"))
    for d in deps:
        for note in notes(d, cat):
            st.caption(plain(note))
    said = dict.fromkeys(zip(df["deployment_label"], df["warnings"], strict=True))
    for label, warnings in (pair for pair in said if pair[1]):
        words = "; ".join(map(message_text, warnings))
        st.warning(plain(f"{label}: {words}"), icon="⚠️")
    title = _("Throughput vs interactivity: {count} deployments, {precision}").format(
        count=len(deps), precision=df["precision"].iloc[0]
    )
    note, off = band_of(model=model, df=df, profile=profile, edited=bool(changed))
    st.plotly_chart(bands.shade(tradeoff_figure(df, title), note), key="compare_deploy_chart")
    table = with_band(display_table(df), note, off)
    st.dataframe(table, key="compare_deploy_table", hide_index=True)
    st.caption(caption(df, run["tokens"], pk.describe(profile, changed)))
    st.caption(plain(bands.sentence(note, _("Every deployment's figures"))))
    csv = bands.with_columns(csv_table(df, pk.label(profile, changed)), note, off)
    download_csv(csv, csv_name, "compare_deploy_csv")
    st.subheader(_("One accelerator each"))


def inputs(link: Link, cat: engine.Catalog, model) -> tuple[list, list[str]]:
    """The deployments field and the MoE layout all of them take (sidebar, decoder LLMs with
    shapes; the request shape is the LLM view's, ui.widgets.llm_view).

    Text that does not parse shows an error under the field and the last valid list is used;
    a deployment the model cannot use (tp not dividing its heads, ...) is left out, with why.

    Returns:
        (the deployments to run, the refusals as plain text).
    """
    param = link["deployments"]
    valid_key = link.key("deployments.valid")
    text = st.text_input(
        _("Multi-device deployments (n × accelerator / TP / PP)"),
        key=link.key("deployments"),
        max_chars=MAX_VALUE_CHARS,
        help=_(
            "Comma-separated, e.g. 8xH100/tp8,4xMI300X/tp4,2xH100/tp1/pp2: n = tp·pp devices "
            "(8xH100 alone is TP8). Up to 8, run through the serving model (docs/model.md)."
        ),
    )
    state.show_link_notes(link, "deployments")
    try:
        deps = param.read(text)
        st.session_state[valid_key] = deps
    except ValueError as exc:
        deps = st.session_state.get(valid_key) or param.default
        shown = write_deployments(deps)
        st.error(
            _("Deployments not used: {why}. Showing {shown}.").format(why=plain(exc), shown=shown),
            icon="🚫",
        )
    ep, attention_dp = split_inputs(link)
    kept, refused = [], []
    for d in deps:
        laid = dataclasses.replace(d, ep=ep, attention_dp=attention_dp)
        try:
            check_deployment(laid, cat, model)
            kept.append(laid)
            continue
        except ValueError as exc:  # the MoE layout does not fit it: shown without
            why = _("{why} (shown without EP and attention DP)").format(why=exc)
        try:
            check_deployment(d, cat, model)
            kept.append(d)
            refused.append(why)
        except ValueError as exc:
            refused.append(str(exc))
    return kept, refused
