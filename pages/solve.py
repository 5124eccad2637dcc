"""Single solve: one model × one accelerator × one batch → bound, latency split, roofline."""

import streamlit as st

import engine
from ui import custom, state
from ui.common import (
    FLOP_NOTE,
    catalog,
    download_csv,
    plain,
    setup_page,
    share_link,
    show_catalog_notes,
    show_param_warnings,
    source_md,
)
from ui.explain import explain
from ui.figures import latency_breakdown_figure, roof_table, roofline_figure
from ui.metrics import result_table, solve_metrics
from ui.widgets import (
    ASSUMPTION_DEFAULTS,
    SHARED_NAMES,
    assumption_inputs,
    assumption_params,
    batch_param,
    custom_editors,
    hardware_param,
    model_param,
    select_entry,
    select_precision,
)

PAGE = "solve"
setup_page("Single solve")

# --- inputs -----------------------------------------------------------------
base = catalog()
params = [model_param(base), hardware_param(base), batch_param(), *assumption_params()]
defaults = {
    "model": "ResNet-50",
    "hardware": "A100",
    "batch": 1,
    "precision": "fp16",
    **ASSUMPTION_DEFAULTS,
}
warnings = state.bind(PAGE, params, defaults)
pickers, editors = st.sidebar.container(), st.sidebar.container()
with editors:
    custom_hw, custom_model = custom_editors(PAGE)
cat = custom.with_custom(base, custom_hw, custom_model)
with pickers:
    model_id = select_entry(PAGE, "model", "Model", dict(cat.models), "ResNet-50")
    hw_id = select_entry(PAGE, "hardware", "Accelerator", dict(cat.hardware), "A100")
    batch = st.number_input(
        "Batch size (samples)", 1, engine.api.MAX_BATCH, step=1, key=state.widget_key(PAGE, "batch")
    )
    precision = select_precision(PAGE)
    overrides = assumption_inputs(PAGE)

# --- engine -----------------------------------------------------------------
model, hw = cat.models[model_id], cat.hardware[hw_id]
result = engine.solve(model, hw, int(batch), precision, **overrides)
row = engine.sweep(model, hw, [int(batch)], [precision], **overrides)
values = {
    "model": model_id,
    "hardware": hw_id,
    "batch": int(batch),
    "precision": precision,
    **overrides,
    "custom_hw": custom_hw,
    "custom_model": custom_model,
}
query = state.publish(PAGE, params, values, shared=SHARED_NAMES)

# --- render -----------------------------------------------------------------
st.title(f"{plain(model.name)} on {plain(hw.name)}")
st.caption(f"Batch {int(batch)} · {precision} · {FLOP_NOTE[overrides['flop_convention']]}")
show_param_warnings(warnings)
show_catalog_notes(cat)
for w in result.warnings:
    st.warning(w, icon="⚠️")

solve_metrics(result)

for line in explain(result, plain(model.name), plain(hw.name)):
    st.markdown(line)

points = row.assign(label=f"{model.name}, batch {int(batch)}")
st.plotly_chart(
    latency_breakdown_figure(
        result.t_compute_s * 1e3, result.t_memory_s * 1e3, result.t_overhead_s * 1e3
    ),
    key="solve_breakdown",
)
roofs = roof_table(row, {hw_id: hw.name})
title = f"Roofline: {hw.name}, {precision}"
figure = roofline_figure(points, roofs, overrides["flop_convention"], title=title)
st.plotly_chart(figure, key="solve_roofline")
st.dataframe(result_table(result), key="solve_table", hide_index=True)
csv_name = f"roofline_{model_id}_{hw_id}_b{int(batch)}_{precision}.csv"
download_csv(row, csv_name, "solve_csv", lazy=True)
share_link("solve", query)
st.caption(
    f"Sources: {source_md(model.name, model.source)} · {source_md(hw.name, hw.source)}. "
    "Model: SPEC §1 (Williams et al. 2009 roofline; MLSys·im tutorial defaults)."
)
