"""LLM serving: one deployment of a decoder LLM on TP × PP accelerators, per operator.

Does it fit, TTFT, TPOT, throughput, memory per device; every operator of a prefill and of a
decode step on the roofline; step time by operator class; curves against batch and input
tokens (docs/model.md, "Serving model"; older `context`/`prompt` links: ui/decode/view.py)."""

import streamlit as st

from ui.charts import bands
from ui.charts import operator_table as ov
from ui.charts import operators as fo
from ui.core import budget, frame, state
from ui.core import link_params as lp
from ui.core import model_config as serve_config
from ui.core.downloads import download_csv
from ui.core.i18n import N_, _
from ui.core.text import plain
from ui.decode import figures as fl
from ui.decode import inputs as sw
from ui.decode import view as sv
from ui.decode.link import KV_CHOICES, PAGE, declare
from ui.widgets import links, model_config, scenario
from ui.widgets import pickers as widgets
from ui.widgets.cards import chart_row

frame.setup_page(N_("LLM serving"))

# --- inputs -----------------------------------------------------------------
base = frame.catalog()
link = declare(base)
s = scenario.start(link, base, lp.legacy_tokens(state.raw_query()))
cat = s.cat
llms = sv.model_entries(cat)
with s.pickers:
    model_id = widgets.select_entry(link, "model", _("Model (decoder LLMs)"), llms)
    config_spec, config_text = (
        model_config.config_input(link) if model_id == serve_config.CONFIG_ID else (None, "")
    )
    hw_id = widgets.select_entry(link, "hardware", _("Accelerator"), dict(cat.hardware))
    tp, pp, devices_note = sw.devices_inputs(link)
    batch, input_tokens, output_tokens = sw.token_inputs(link)
    precision = widgets.select_precision(link)
    kv = st.selectbox(
        _("KV-cache precision"),
        KV_CHOICES,
        key=link.key("kv_precision"),
        format_func=lambda v: (
            _("same as weights ({precision})").format(precision=precision) if v == "same" else v
        ),
    )
    profile = sw.profile_input(link)
    contexts, batches = sw.curve_inputs(link)
    curve_batches, curve_inputs = sorted({*batches, batch}), sorted({*contexts, input_tokens})
    if too_much := sv.curve_refusal(curve_batches, curve_inputs):
        budget.refuse(too_much)  # beside the fields; none of the curves is computed
    overrides = sw.override_inputs(link)
    tutorial = sw.tutorial_input(link)

# --- engine -----------------------------------------------------------------
model = config_spec if model_id == serve_config.CONFIG_ID else cat.models[model_id]
fallback = model is None  # config.json chosen, none valid yet
model = model or cat.models["Llama-3.1-8B"]
hw = cat.hardware[hw_id]
opts = {"tp": tp, "pp": pp, "batch_size": batch, "input_tokens": input_tokens}
opts |= {"output_tokens": output_tokens, "precision": precision, "profile": profile}
opts |= {"kv_precision": None if kv == "same" else kv, **sv.overrides(overrides)}
r, placement_error = sv.run(model, hw, opts)
opts |= {"tp": r["tp"], "pp": r["pp"]}  # a refused placement: one device, in the link too
sw.show_fallback(devices_note, placement_error, r)
ops = ov.step_table(model, hw, **opts)
band = sv.band(r, model, hw_id, sv.overrides(overrides))  # the profile's measured error
values = {"model_config": config_text or None, "contexts": contexts, "batches": batches}
values |= {"tp": r["tp"], "pp": r["pp"]}  # what is shown, not a placement the engine refused
query = state.publish(link, values, lp.SHARED_NAMES)

# --- render -----------------------------------------------------------------
shown_name = _(model.name) if model.name == serve_config.CONFIG_NAME else model.name
st.title(
    _("{model} on {hardware}: LLM serving").format(model=plain(shown_name), hardware=plain(hw.name))
)
st.caption(plain(sv.caption(r, hw)))
if fallback:
    st.warning(_("No valid config.json yet: showing Llama-3.1-8B."), icon="📄")
if placement_error:
    st.error(plain(placement_error), icon="🚫")
scenario.show_notes(s)
if s.custom_model:
    st.info(_("The custom-model editor's models have no shapes: paste a config.json instead."))
frame.show_engine_warnings(r["warnings"])
sw.show_headline(r, hw)
st.caption(plain(sv.band_text(r, band)))
st.markdown(sv.bounds_text(r))
links.load_link(query | {"tp": r["tp"], "pp": r["pp"]}, _("Serve this deployment under load"))

png = {"toImageButtonOptions": {"format": "png"}}
roof = fo.roof_values(ops, hw.name)
title = _("Roofline per operator: {hardware}, {precision}, profile {profile}").format(
    hardware=hw.name, precision=precision, profile=profile
)
st.plotly_chart(fo.operator_roofline(ops, roof, title), key="ops_roofline", config=png)
st.markdown(ov.binding_text(ops))

# the rest waits for a click: drawn, and computed, only while open (the first chart sooner)
opened = frame.lazy_sections(PAGE, sv.SECTIONS)
if opened["step"] is not None:
    with opened["step"]:
        st.plotly_chart(fo.step_breakdown(ops), key="ops_breakdown", config=png)
        context = ov.decode_context(input_tokens, output_tokens) or "—"
        st.caption(_(ov.CAPTION).format(context=context))
if opened["table"] is not None:
    with opened["table"]:
        st.dataframe(ov.display_table(ops), key="ops_table", hide_index=True)
        name = sv.file_name("operators", r, hw_id)
        download_csv(ov.csv_table(ops, r), name, "ops_csv", _("Download operators CSV"), lazy=True)
if opened["curves"] is not None:
    with opened["curves"]:
        now = (batch, input_tokens)
        if too_much:
            budget.refuse(too_much)  # where the curves would be
        else:
            df = sv.curves(model, hw, curve_batches, curve_inputs, opts)
            for col, column in zip(chart_row(2), fl.SPEED_CHARTS, strict=True):
                fig = fl.speed_figure(df, column, now, "input")
                fig = bands.bars(bands.shade(fig, band), band, ["This"])
                col.plotly_chart(fig, key=f"decode_{column}", config=png)
            st.plotly_chart(fl.memory_figure(df, now, "input"), key="decode_memory", config=png)
            st.dataframe(sv.curve_table(df), key="decode_table", hide_index=True)
            name = sv.file_name("serve", r, hw_id)
            download_csv(sv.curve_csv(df, band), name, "decode_csv", lazy=True)
if tutorial:
    sw.tutorial_view(model, hw, r, sv.overrides(overrides))
frame.share_link(PAGE, query)
sources = frame.source_md(hw.name, hw.source)
sources += f" · {frame.source_md(model.name, model.source)}" if model.source else ""
st.caption(_("Sources: {sources}. Model: docs/model.md, 'Serving model'.").format(sources=sources))
