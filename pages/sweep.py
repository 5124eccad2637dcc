"""Batch sweep: one model × one accelerator over a list of batch sizes → crossover batch,
throughput/latency/intensity charts, roofline trajectory, latency budget, marginal-gain table."""

import streamlit as st

import engine
from ui import common, custom, state, widgets
from ui import figures_sweep as fs
from ui.explain import crossover_batch_estimate
from ui.params import Param, number, write_number

PAGE = "sweep"
DEFAULT_BATCHES = [2**k for k in range(9)]  # 1, 2, 4, ..., 256
common.setup_page("Batch sweep")

# --- inputs -----------------------------------------------------------------
base = common.catalog()
batches_p = widgets.batches_param(4096, ranges=True)
params = [widgets.model_param(base), widgets.hardware_param(base), batches_p]
params += [Param("budget_ms", number(0.001, 1e6), write_number), *widgets.assumption_params()]
defaults = {"model": "ResNet-50", "hardware": "A100", "batches": DEFAULT_BATCHES}
defaults |= {"precision": "fp16", **widgets.ASSUMPTION_DEFAULTS}
warnings = state.bind(PAGE, params, defaults)
pickers, editors = st.sidebar.container(), st.sidebar.container()
with editors:
    custom_hw, custom_model = widgets.custom_editors(PAGE)
cat = custom.with_custom(base, custom_hw, custom_model)
with pickers:
    model_id = widgets.select_entry(PAGE, "model", "Model", dict(cat.models), "ResNet-50")
    hw_id = widgets.select_entry(PAGE, "hardware", "Accelerator", dict(cat.hardware), "A100")
    batches = widgets.batch_list_input(PAGE, batches_p, DEFAULT_BATCHES, generator=True)
    budget = st.number_input(
        "Latency budget (ms per batch, optional)",
        0.001,
        1e6,
        value=None,
        step=0.5,
        format="%.3f",
        placeholder="none",
        key=state.widget_key(PAGE, "budget_ms"),
    )
    precision = widgets.select_precision(PAGE)
    overrides = widgets.assumption_inputs(PAGE)

# --- engine -----------------------------------------------------------------
model, hw = cat.models[model_id], cat.hardware[hw_id]
df = engine.marginal_gain(engine.sweep(model, hw, batches, [precision], **overrides))
cross = fs.crossover_value(engine.crossover_batch(df)["crossover_batch"].iloc[0])
top = engine.solve(model, hw, batches[-1], precision, **overrides)  # the largest batch
within = fs.budget_rows(df, budget) if budget is not None else None
values = {"model": model_id, "hardware": hw_id, "batches": batches, "budget_ms": budget}
values |= {"precision": precision, **overrides, "custom_hw": custom_hw}
query = state.publish(PAGE, params, {**values, "custom_model": custom_model}, widgets.SHARED_NAMES)

# --- render -----------------------------------------------------------------
note, names = common.FLOP_NOTE[overrides["flop_convention"]], {hw_id: hw.name}
unit = fs.sample_unit(df)
st.title(f"Batch sweep: {common.plain(model.name)} on {common.plain(hw.name)}")
st.caption(f"{len(df):,} batch sizes, {batches[0]:,} to {batches[-1]:,} · {precision} · {note}")
common.show_param_warnings(warnings)
common.show_catalog_notes(cat)
for w in [w for w in df["warnings"].unique() if w]:
    st.warning(common.plain(w), icon="⚠️")

c = st.columns(4)
c[0].metric(
    "Crossover batch (first compute-bound)",
    fs.crossover_text(cross),
    help="The smallest batch in the list whose compute time exceeds its memory time.",
)
best = df.loc[df["throughput_per_s"].idxmax()]
c[1].metric(f"Best throughput ({unit})", common.num(best["throughput_per_s"]))
c[1].caption(f"at batch {best['batch_size']:,} ({best['latency_ms']:.4g} ms)")
lo, hi = df["latency_ms"].iloc[0], df["latency_ms"].iloc[-1]
c[2].metric(f"Latency (ms), batch {batches[0]:,} → {batches[-1]:,}", f"{lo:.3g} → {hi:.3g}")
c[3].metric("Effective ridge (FLOP/byte)", f"{top.effective_ridge_flop_per_byte:.4g}", help=note)
c[3].caption(f"theoretical {top.ridge_flop_per_byte:.4g} FLOP/byte (peak ÷ bandwidth)")
if cross is None:
    estimate = crossover_batch_estimate(top)
    st.info(
        f"**Never compute-bound within this sweep.** Every batch up to {batches[-1]:,} stays "
        f"below the effective ridge of {top.effective_ridge_flop_per_byte:.4g} FLOP/byte; "
        + (
            f"batch ≥ {estimate:,} would cross it (extend the list)."
            if estimate
            else "more batch never crosses it: activation traffic (α) grows as fast as the "
            "work, so intensity levels off below the ridge."
        )
    )
if budget is not None and within is None:
    st.warning(
        f"No batch meets {budget:.4g} ms: the fastest is {df['latency_ms'].min():.4g} ms "
        f"(batch {batches[0]:,}), of which fixed overhead is {df['t_overhead_ms'].iloc[0]:.4g} ms."
    )
elif budget is not None:
    largest, fastest = within
    b = st.columns(2)
    b[0].metric(f"Largest batch within {budget:.4g} ms", f"{largest['batch_size']:,}")
    b[0].caption(f"latency {largest['latency_ms']:.4g} ms")
    best_within = common.num(fastest["throughput_per_s"])
    b[1].metric(f"Best throughput within {budget:.4g} ms ({unit})", best_within)
    b[1].caption(f"at batch {fastest['batch_size']:,} ({fastest['latency_ms']:.4g} ms)")

png = {"toImageButtonOptions": {"format": "png"}}
convention, title = overrides["flop_convention"], f"Roofline trajectory: {hw.name}, {precision}"
left, right = st.columns(2)
left.plotly_chart(fs.throughput_figure(df, names), key="sweep_throughput", config=png)
right.plotly_chart(fs.latency_figure(df, names, budget), key="sweep_latency", config=png)
left, right = st.columns([2, 3])
left.plotly_chart(fs.intensity_figure(df, cross, convention), key="sweep_intensity", config=png)
roofline = fs.roofline_trajectories(df, names, convention, title)
right.plotly_chart(roofline, key="sweep_roofline", config=png)

columns = ["batch_size", "bottleneck", "latency_ms", "throughput_per_s"]
columns += ["marginal_throughput_gain_pct", "arithmetic_intensity_flop_per_byte"]
columns += ["achieved_tflops", "attainable_tflops", "mfu", "t_overhead_ms", "energy_j"]
st.dataframe(fs.display_table(df, names, columns), key="sweep_table", hide_index=True)
st.caption(f"Intensity and TFLOP/s: {note}. The CSV has every column and the assumptions.")
common.download_csv(df, f"sweep_{model_id}_{hw_id}_{precision}.csv", "sweep_csv", lazy=True)
common.share_link("sweep", query)
st.caption(
    f"Sources: {common.source_md(model.name, model.source)} · "
    f"{common.source_md(hw.name, hw.source)}. "
    "Model: SPEC §1 (Williams et al. 2009 roofline; MLSys·im tutorial defaults)."
)
