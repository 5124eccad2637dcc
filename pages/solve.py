"""Single solve: one model × one accelerator × one batch → bound, latency split, roofline."""

import pandas as pd
import streamlit as st

import engine
from ui import custom, state
from ui.common import (
    FLOP_NOTE,
    catalog,
    download_csv,
    num,
    setup_page,
    share_link,
    show_catalog_notes,
    show_param_warnings,
    source_md,
)
from ui.explain import explain
from ui.figures import latency_breakdown_figure, roof_table, roofline_figure
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
st.title(f"{model.name} on {hw.name}")
st.caption(f"Batch {int(batch)} · {precision} · {FLOP_NOTE[overrides['flop_convention']]}")
show_param_warnings(warnings)
show_catalog_notes(cat)
for w in result.warnings:
    st.warning(w, icon="⚠️")

r = result
c = st.columns(4)
c[0].metric("Bottleneck", f"{r.bottleneck}-bound", help=f"{r.bottleneck}-bound")
c[1].metric(
    "Latency",
    f"{r.latency_s * 1e3:.4g} ms",
    help="max(compute, memory) + fixed overhead, per batch",
)
c[2].metric(f"Throughput ({r.sample}s/s)", f"{num(r.throughput_per_s)} /s")
c[3].metric("MFU", f"{r.mfu:.1%}", help="achieved FLOP/s ÷ full peak FLOP/s")
c = st.columns(4)
c[0].metric(
    "Arithmetic intensity",
    f"{r.arithmetic_intensity_flop_per_byte:.4g} FLOP/byte",
    help=FLOP_NOTE[overrides["flop_convention"]],
)
c[1].metric(
    "Ridge: effective / theoretical",
    f"{r.effective_ridge_flop_per_byte:.4g} / {r.ridge_flop_per_byte:.4g} FLOP/byte",
)
c[2].metric(
    "Achieved / roof",
    f"{r.achieved_flop_per_s / 1e12:.3g} / {r.attainable_flop_per_s / 1e12:.3g} TFLOP/s",
)
c[3].metric(
    "Energy per batch", f"{r.energy_j * 1e3:.4g} mJ", help="TDP × (0.3 + 0.7·MFU) × latency"
)
fit = "fits" if r.fits_in_memory else "does NOT fit"
st.progress(
    min(1.0, r.weight_bytes / r.memory_capacity_bytes),
    text=f"Weights {r.weight_bytes / 1e9:.3g} GB of {r.memory_capacity_bytes / 1e9:.3g} GB "
    f"({r.memory_capacity_bytes / 2**30:.3g} GiB) capacity — {fit}",
)

for line in explain(r, model.name, hw.name):
    st.markdown(line)

left, right = st.columns([3, 2])
points = row.assign(label=f"{model.name}, batch {int(batch)}")
with left:
    st.plotly_chart(
        roofline_figure(
            points,
            roof_table(row, {hw_id: hw.name}),
            overrides["flop_convention"],
            title=f"Roofline: {hw.name}, {precision}",
        ),
        key="solve_roofline",
        config={"toImageButtonOptions": {"format": "png"}},
    )
with right:
    st.plotly_chart(
        latency_breakdown_figure(r.t_compute_s * 1e3, r.t_memory_s * 1e3, r.t_overhead_s * 1e3),
        key="solve_breakdown",
    )

table = pd.DataFrame(
    [{k: v for k, v in r.as_dict().items() if k not in ("assumptions", "warnings")}]
)
st.dataframe(table.T.rename(columns={0: "value"}).astype(str), key="solve_table")
download_csv(row, f"roofline_{model_id}_{hw_id}_b{int(batch)}_{precision}.csv", "solve_csv")
share_link("solve", query)
st.caption(
    f"Sources: {source_md(model.name, model.source)} · {source_md(hw.name, hw.source)}. "
    "Model: SPEC §1 (Williams et al. 2009 roofline; MLSys·im tutorial defaults)."
)
