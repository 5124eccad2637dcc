"""Batch sweep: one model × one accelerator over a list of batch sizes → crossover batch,
throughput/latency/intensity charts, roofline trajectory, latency budget, marginal-gain table.
Decoder LLMs use the serving model (a decode step or whole requests, one request shape) by
default and the tutorial's whole-model view as a labelled choice (ui.widgets.llm_view). A profile
(tutorial by default) seeds the assumptions, and is named beside the results and in the CSV."""

import streamlit as st

import engine
from ui.charts import serve_rows, tables
from ui.charts import sweep as fs
from ui.core import frame, profiles
from ui.core.downloads import download_csv
from ui.links import link_params as lp
from ui.links import state
from ui.sweep import view as sv
from ui.sweep.link import PAGE, declare
from ui.widgets import llm_view, scenario
from ui.widgets import pickers as widgets
from ui.widgets import profile as pk
from ui.widgets.cards import chart_row
from ui.words.i18n import N_, _
from ui.words.text import FLOP_NOTE, plain

frame.setup_page(N_("Batch sweep"))

# --- inputs -----------------------------------------------------------------
base = frame.catalog()
custom, profile_notes = pk.start(PAGE, profiles.LLM_VIEW)
link = declare(base, custom)
s = scenario.start(link, base, lp.legacy_tokens(state.raw_query()))
cat = s.cat
with s.pickers:
    model_id = widgets.select_entry(
        link=link, name="model", label=_("Model"), entries=dict(cat.models)
    )
    hw_id = widgets.select_entry(
        link=link, name="hardware", label=_("Accelerator"), entries=dict(cat.hardware)
    )
    model, hw = cat.models[model_id], cat.hardware[hw_id]
    view, tokens, extra = llm_view.view_inputs(link, model)
    batches = widgets.batch_list_input(link, generator=True)
    budget = widgets.number_input(
        link,
        "budget_ms",
        _("Latency budget (ms per batch, optional)"),
        value=None,
        step=0.5,
        format="%.3f",
        placeholder=_("no budget"),
    )
    precision = widgets.select_precision(link)
    profile = pk.picker(PAGE, custom, profiles.LLM_VIEW)
    overrides = widgets.assumption_inputs(link)

# --- engine -----------------------------------------------------------------
serving = view in serve_rows.VIEW_COLUMNS
if serving:
    opts = serve_rows.options(profile, overrides | extra, cat)
    raw, df = serve_rows.serve_frame(
        model=model,
        hardware=[hw],
        batches=batches,
        tokens=tokens,
        precision=precision,
        opts=opts,
        view=view,
    )
    df, exact = engine.marginal_gain(df), None
else:
    raw = df = engine.marginal_gain(
        engine.sweep(
            models=model, hardware=hw, batch_sizes=batches, precisions=[precision], **overrides
        )
    )
    exact = engine.compute_bound_batch(model, hw, precision=precision, **overrides)
first = tables.crossover_value(engine.crossover_batch(df)["crossover_batch"].iloc[0])
values = {"batches": batches, **llm_view.link_values(view, extra)}
values |= {n: tokens.get(n) for n in lp.TOKENS}  # None: not an LLM, not in the link
values |= profiles.link_values(profile, skip=profiles.LLM_VIEW)
query = state.publish(link, values, (*lp.SHARED_NAMES, "profile"))
changed = profiles.edits(profile, overrides | (extra if serving else {}))
raw = raw.assign(profile=profiles.label(profile, changed))

# --- render -----------------------------------------------------------------
note, names = FLOP_NOTE[overrides["flop_convention"]], {hw_id: hw.name}
note = _(note)
st.title(
    _("Batch sweep: {model} on {hardware}").format(model=plain(model.name), hardware=plain(hw.name))
)
st.caption(
    _("{count} batch sizes, {first} to {last} · {precision} · {note}").format(
        count=f"{len(df):,}",
        first=f"{batches[0]:,}",
        last=f"{batches[-1]:,}",
        precision=precision,
        note=note,
    )
)
llm_view.show_fit(df, names, serving)
st.caption(profiles.describe(profile, changed))
scenario.show_notes(s)
frame.show_param_warnings(profile_notes)
llm_view.show_caption(view, tokens, profiles.label(profile, changed))
llm_view.stop_without_decode_step(view=view, tokens=tokens, page="sweep", query=query)
frame.show_engine_warnings(w for said in df["warnings"].unique() for w in said)
sv.show_cards(df=df, first=first, exact=exact, serving=serving)
sv.show_budget(df, budget)

png = {"toImageButtonOptions": {"format": "png"}}
convention = overrides["flop_convention"]
title = _("Roofline trajectory: {hardware}, {precision}").format(
    hardware=hw.name, precision=precision
)
first_row = chart_row(3)  # the roofline, with its long legend, gets the whole width below
first_row[0].plotly_chart(fs.throughput_figure(df, names), key="sweep_throughput", config=png)
first_row[1].plotly_chart(fs.latency_figure(df, names, budget), key="sweep_latency", config=png)
intensity = fs.intensity_figure(df, first, convention)
first_row[2].plotly_chart(intensity, key="sweep_intensity", config=png)
roofline = fs.roofline_trajectories(df=df, names=names, convention=convention, title=title)
st.plotly_chart(roofline, key="sweep_roofline", config=png)

if serving:
    shown = serve_rows.table(df, names, view)
else:
    shown = tables.tutorial_table(df, names, sv.TUTORIAL_COLUMNS)
st.dataframe(shown, key="sweep_table", hide_index=True)
st.caption(
    _("Intensity and TFLOP/s: {note}. The CSV has every column and the assumptions.").format(
        note=note
    )
)
download_csv(raw, f"sweep_{model_id}_{hw_id}_{precision}.csv", "sweep_csv")
frame.share_link("sweep", query)
st.caption(
    _(
        "Sources: {model} · {hardware}. Model: docs/model.md (Williams et al. 2009 roofline; "
        "MLSys·im tutorial defaults; the serving model for decoder LLMs)."
    ).format(
        model=frame.source_md(model.name, model.source),
        hardware=frame.source_md(hw.name, hw.source),
    )
)
