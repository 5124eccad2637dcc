"""LLM serving: one deployment of a decoder LLM on TP × PP accelerators (an MoE model's expert
parallelism and attention DP inside them), per operator.

Does it fit, TTFT, TPOT, throughput, memory per device; every operator of a prefill and of a
decode step on the roofline; step time by operator class; curves against batch and input
tokens (docs/model.md, "Serving model"; older `context`/`prompt` links: ui/decode/view.py)."""

import streamlit as st

import engine
from ui.charts import bands
from ui.charts import operator_table as ov
from ui.charts import operators as fo
from ui.core import budget, frame, profiles
from ui.core.downloads import download_csv
from ui.decode import figures as fl
from ui.decode import inputs as sw
from ui.decode import view as sv
from ui.decode.link import PAGE, declare
from ui.links import link_params as lp
from ui.links import state
from ui.widgets import model_config, page_links, scenario
from ui.widgets import overrides as overrides_ui
from ui.widgets import pickers as widgets
from ui.widgets import sensitivity as sens
from ui.widgets.cards import chart_row
from ui.words.i18n import N_, _
from ui.words.text import plain

frame.setup_page(N_("LLM serving"))

# --- inputs -----------------------------------------------------------------
base = frame.catalog()
link = declare(base)
s = scenario.start(link, base, lp.legacy_tokens(state.raw_query()))
cat = s.cat
with s.pickers:
    model_id, model, config_text = model_config.select_llm(link, cat)
    hw_id = widgets.select_entry(
        link=link, name="hardware", label=_("Accelerator"), entries=dict(cat.hardware)
    )
    layout, devices_note = sw.devices_inputs(link)
    batch, input_tokens, output_tokens = sw.token_inputs(link)
    precision = widgets.select_format(link)
    kv = widgets.select_kv_format(link, precision)
    profile = sw.profile_input(link)
    contexts, batches = sw.curve_inputs(link)
    curve_batches, curve_inputs = sorted({*batches, batch}), sorted({*contexts, input_tokens})
    if too_much := sv.curve_refusal(curve_batches, curve_inputs):
        budget.refuse(too_much)  # beside the fields; none of the curves is computed
    overrides = overrides_ui.inputs(link, engine.get_profile(profile))
    tutorial = sw.tutorial_input(link)
    sensitivity_inputs = sens.inputs(link)

# --- engine -----------------------------------------------------------------
fallback = model is None  # config.json chosen, none valid yet
model = model or cat.models["Llama-3.1-8B"]
hw = cat.hardware[hw_id]
dep, placement_error = sv.deployment(  # refused as built (ep, attention DP): one device
    model=model,
    hardware=hw,
    **layout,
    precision=precision,
    kv_precision=kv,
    profile=profile,
    overrides=sv.overrides(overrides),
)
request = engine.Batch(input_tokens=input_tokens, output_tokens=output_tokens, batch_size=batch)
result, refused, dep = sv.run(dep, request)  # refused by the model or chip: one device too
placement_error = placement_error or refused  # the link holds what is shown
r = result.as_dict()
sw.show_fallback(devices_note, placement_error, r)
ops = ov.step_table(dep, request)
band = sv.band(
    r=r, model=model, hw_id=hw_id, overrides=sv.overrides(overrides)
)  # the profile's measured error
values = {"model_config": config_text or None, "contexts": contexts, "batches": batches}
shown = {k: r[k] for k in ("tp", "pp", "ep", "attention_dp")}
values |= shown  # what is shown, not a placement the engine refused
query = state.publish(link, values, lp.SHARED_NAMES)

# --- render -----------------------------------------------------------------
shown_name = _(model.name) if model.name == model_config.CONFIG_NAME else model.name
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
# the headline's fit box says whether it fits, with the figures: the engine's "does not fit" once
frame.show_engine_warnings(w for w in result.warnings if w.code != "does_not_fit")
sw.show_headline(r, hw)
st.caption(plain(sv.band_text(r, band)))
if moved := profiles.transfer_text(r["hardware"], r["precision"], result.assumptions):
    st.caption(plain(moved))
st.markdown(sv.bounds_text(r))
if pipeline := sv.pipeline_text(r):
    st.caption(pipeline)
page_links.load_link(query | shown, N_("Serve this deployment under load"))

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
        download_csv(
            df=ov.csv_table(ops, r),
            filename=name,
            key="ops_csv",
            label=_("Download operators CSV"),
        )
if opened["curves"] is not None:
    with opened["curves"]:
        now = (batch, input_tokens)
        if too_much:
            budget.refuse(too_much)  # where the curves would be
        else:
            df = sv.curves(
                dep=dep,
                output_tokens=output_tokens,
                batches=curve_batches,
                contexts=curve_inputs,
            )
            for col, column in zip(chart_row(2), fl.SPEED_CHARTS, strict=True):
                fig = fl.speed_figure(df=df, column=column, current=now, word="input")
                fig = bands.bars(bands.shade(fig, band), band, ["This"])
                col.plotly_chart(fig, key=f"decode_{column}", config=png)
            st.plotly_chart(fl.memory_figure(df, now, "input"), key="decode_memory", config=png)
            st.dataframe(sv.curve_table(df), key="decode_table", hide_index=True)
            name = sv.file_name("serve", r, hw_id)
            download_csv(sv.curve_csv(df, band), name, "decode_csv")
if opened["sensitivity"] is not None:
    with opened["sensitivity"]:
        stem = sv.file_name("sensitivity", r, hw_id).removesuffix(".csv")
        sens.section(dep=dep, request=request, chosen=sensitivity_inputs, file_stem=stem)
if tutorial:
    sw.tutorial_view(model=model, hw=hw, r=r, overrides=sv.overrides(overrides))
frame.share_link(PAGE, query)
sources = frame.source_md(hw.name, hw.source)
sources += f" · {frame.source_md(model.name, model.source)}" if model.source else ""
st.caption(_("Sources: {sources}. Model: docs/model.md, 'Serving model'.").format(sources=sources))
