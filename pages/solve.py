"""Single solve: one model × one accelerator × one batch → regime, latency split, roofline.
For decoder LLMs it keeps the tutorial's whole-model figure, labelled as its first-order view,
and shows the serving model's beside it, with a link to the serving page, and its operators;
for ResNet-50 and MobileNetV2 the layer table generated from the architecture. A profile
(tutorial by default) seeds the assumptions, and is named beside the results and in the CSV."""

import streamlit as st

import engine
from ui.charts import serve_rows
from ui.charts.roofline import latency_breakdown_figure, roof_table, roofline_figure
from ui.core import frame, profiles
from ui.core.downloads import download_csv
from ui.links import link_params as lp
from ui.links import state
from ui.solve import breakdown as sb
from ui.solve import view as sv
from ui.solve.link import PAGE, declare
from ui.solve.metrics import result_table, solve_metrics
from ui.widgets import pickers as widgets
from ui.widgets import profile as pk
from ui.widgets import scenario
from ui.words.i18n import N_, _
from ui.words.text import FLOP_NOTE, plain

frame.setup_page(N_("Single solve"))

# --- inputs -----------------------------------------------------------------
base = frame.catalog()
custom, profile_notes = pk.start(PAGE)
link = declare(base, custom)
s = scenario.start(link, base)
cat = s.cat
with s.pickers:
    model_id = widgets.select_entry(
        link=link, name="model", label=_("Model"), entries=dict(cat.models)
    )
    hw_id = widgets.select_entry(
        link=link, name="hardware", label=_("Accelerator"), entries=dict(cat.hardware)
    )
    batch = widgets.batch_input(link)
    precision = widgets.select_precision(link)
    profile = pk.picker(PAGE, custom)
    overrides = widgets.assumption_inputs(link)
    llm = sb.has_operators(cat.models[model_id])
    tokens = sb.token_inputs(link) if llm else {}

# --- engine -----------------------------------------------------------------
model, hw = cat.models[model_id], cat.hardware[hw_id]
result = engine.solve(model=model, hardware=hw, batch_size=batch, precision=precision, **overrides)
row = engine.sweep(
    models=model, hardware=hw, batch_sizes=[batch], precisions=[precision], **overrides
)
crossover = engine.compute_bound_batch(model, hw, precision=precision, **overrides)
values = {**profiles.link_values(profile), **{n: tokens.get(n) for n in lp.TOKENS}}
query = state.publish(link, values, shared=(*lp.SHARED_NAMES, "profile"))
changed = profiles.edits(profile, overrides)
label = profiles.label(profile, changed)

# --- render -----------------------------------------------------------------
st.title(_("{model} on {hardware}").format(model=plain(model.name), hardware=plain(hw.name)))
note = FLOP_NOTE[overrides["flop_convention"]]
note = _(note)
st.caption(
    _("Batch {batch} · {precision} · {note} · {profile}").format(
        batch=f"{batch:,}",
        precision=precision,
        note=note,
        profile=profiles.describe(profile, changed),
    )
)
sv.show_not_fit(result, hw)
scenario.show_notes(s)
frame.show_param_warnings(profile_notes)
frame.show_engine_warnings(result.warnings)
sv.show_headline(r=result, model=model, hw=hw, crossover=crossover)
solve_metrics(result)
sc = sb.Scenario(
    model_id=model_id,
    model=model,
    hw=hw,
    batch=batch,
    precision=precision,
    profile=profile,
    overrides=overrides,
    result=result,
    tokens=tokens,
    label=label,
)
sv.show_serving_note(
    sc=sc, opts=serve_rows.options(profile, overrides, cat), changed=changed, query=query
)

points = row.assign(label=_("{model}, batch {batch}").format(model=model.name, batch=batch))
st.plotly_chart(
    latency_breakdown_figure(
        result.t_compute_s * 1e3, result.t_memory_s * 1e3, result.t_overhead_s * 1e3
    ),
    key="solve_breakdown",
)
roofs = roof_table(row, {hw_id: hw.name})
title = _("Roofline: {hardware}, {precision}").format(hardware=hw.name, precision=precision)
figure = roofline_figure(points, roofs, overrides["flop_convention"], title=title)
st.plotly_chart(figure, key="solve_roofline")
csv_name = f"roofline_{model_id}_{hw_id}_b{batch}_{precision}.csv"
download_csv(row.assign(profile=label), csv_name, "solve_csv")
# the rest waits for a click: drawn, and computed, only while open (the first chart sooner)
table = frame.lazy_expander(_(sv.TABLE), frame.section_key(PAGE, "table"))
if table is not None:
    table.dataframe(result_table(result), key="solve_table", hide_index=True)
sb.show(sc)
frame.share_link("solve", query)
st.caption(
    _(
        "Sources: {model} · {hardware}. Model: docs/model.md (Williams et al. 2009 roofline; "
        "MLSys·im tutorial defaults)."
    ).format(
        model=frame.source_md(model.name, model.source),
        hardware=frame.source_md(hw.name, hw.source),
    )
)
