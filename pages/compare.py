"""Hardware comparison: one model on 2–8 accelerators over a batch list → throughput, speedup
vs a baseline, each one's crossover batch and ridge points, all rooflines overlaid."""

import streamlit as st

import engine
from ui import common, custom, state, widgets
from ui import figures_sweep as fs

PAGE = "compare"
DEFAULT_BATCHES = [1, 8, 64, 256]
common.setup_page("Hardware comparison")

# --- inputs -----------------------------------------------------------------
base = common.catalog()
batches_p = widgets.batches_param(4096, ranges=True)
params = [widgets.model_param(base), widgets.hardware_list_param(base, max_items=8)]
params += [widgets.hardware_param(base, "baseline"), batches_p, *widgets.assumption_params()]
defaults = {"model": "ResNet-50", "hardware": ["A100", "H100"], "batches": DEFAULT_BATCHES}
defaults |= {"precision": "fp16", **widgets.ASSUMPTION_DEFAULTS}
warnings = state.bind(PAGE, params, defaults)
pickers, editors = st.sidebar.container(), st.sidebar.container()
with editors:
    custom_hw, custom_model = widgets.custom_editors(PAGE)
cat = custom.with_custom(base, custom_hw, custom_model)
hw_key, base_key = state.widget_key(PAGE, "hardware"), state.widget_key(PAGE, "baseline")
kept = [h for h in st.session_state.get(hw_key, []) if h in cat.hardware]
dropped = len(kept) < len(st.session_state.get(hw_key, []))  # the custom accelerator is off
if dropped:
    st.session_state[hw_key] = kept
with pickers:
    model_id = widgets.select_entry(PAGE, "model", "Model", dict(cat.models), "ResNet-50")
    hw_ids = st.multiselect(
        "Accelerators (2–8)",
        list(cat.hardware),
        key=hw_key,
        max_selections=8,
        format_func=lambda h: cat.hardware[h].name,
    )
    wanted = st.session_state.get(base_key)
    moved = wanted is not None and bool(hw_ids) and wanted not in hw_ids
    chosen = {h: cat.hardware[h] for h in hw_ids}
    baseline = (
        widgets.select_entry(PAGE, "baseline", "Baseline", chosen, hw_ids[0]) if hw_ids else None
    )
    batches = widgets.batch_list_input(PAGE, batches_p, DEFAULT_BATCHES)
    precision = widgets.select_precision(PAGE)
    overrides = widgets.assumption_inputs(PAGE)

# --- engine -----------------------------------------------------------------
model, names = cat.models[model_id], {h: cat.hardware[h].name for h in hw_ids}
if len(hw_ids) >= 2:
    df = engine.sweep(model, list(chosen.values()), batches, [precision], **overrides)
    df = fs.with_speedup(df, baseline)
    cross = engine.crossover_batch(df)
values = {"model": model_id, "hardware": hw_ids or None, "baseline": baseline}
values |= {"batches": batches, "precision": precision, **overrides, "custom_hw": custom_hw}
query = state.publish(PAGE, params, {**values, "custom_model": custom_model}, widgets.SHARED_NAMES)

# --- render -----------------------------------------------------------------
note = common.FLOP_NOTE[overrides["flop_convention"]]
shown = {h: common.plain(name) for h, name in names.items()}  # inert in markdown
st.title(f"Hardware comparison: {common.plain(model.name)}")
common.show_param_warnings(warnings)
common.show_catalog_notes(cat)
if dropped:
    st.warning("Dropped the custom accelerator from the list: it is switched off or invalid.")
if len(hw_ids) < 2:
    st.info(
        "Choose at least two accelerators in the sidebar to compare them (up to eight). "
        f"Chosen now: {', '.join(shown.values()) or 'none'}."
    )
    common.share_link("compare", query)
    st.stop()

st.caption(
    f"{len(hw_ids)} accelerators × {len(batches):,} batch sizes ({batches[0]:,} to "
    f"{batches[-1]:,}) · {precision} · baseline {shown[baseline]} · {note}"
)
if moved:
    st.warning(
        f"Baseline {common.plain(wanted)} is not one of the chosen accelerators; "
        f"using {shown[baseline]}."
    )
for w in [w for w in df["warnings"].unique() if w]:
    st.warning(common.plain(w), icon="⚠️")

st.subheader("Per accelerator")
st.dataframe(fs.hardware_summary(df, cross, names), key="compare_summary", hide_index=True)
st.caption(
    f"Ridge = peak ÷ bandwidth (theoretical) and peak × η ÷ bandwidth (effective, η = "
    f"{overrides['efficiency']:.2f}); crossover = the first batch in the list that is "
    f"compute-bound. Peaks for {precision}. {note}."
)
png = {"toImageButtonOptions": {"format": "png"}}
left, right = st.columns(2)
left.plotly_chart(fs.throughput_figure(df, names), key="compare_throughput", config=png)
speedup = fs.speedup_figure(df, names, baseline)
right.plotly_chart(speedup, key="compare_speedup_chart", config=png)
st.subheader(f"Speedup vs {shown[baseline]} (throughput ratio, ×)")
st.dataframe(fs.speedup_table(df, names), key="compare_speedup", hide_index=True)
title = f"Rooflines: {len(hw_ids)} accelerators, {precision}"
roofline = fs.roofline_trajectories(df, names, overrides["flop_convention"], title)
st.plotly_chart(roofline, key="compare_roofline", config=png)

st.subheader("All scenarios")
columns = ["hardware", "batch_size", "bottleneck", "latency_ms", "throughput_per_s"]
columns += ["speedup_vs_baseline_ratio", "arithmetic_intensity_flop_per_byte"]
columns += ["achieved_tflops", "attainable_tflops", "mfu", "t_overhead_ms", "energy_j"]
st.dataframe(fs.display_table(df, names, columns), key="compare_table", hide_index=True)
st.caption(f"Intensity and TFLOP/s: {note}. The CSV has every column and the assumptions.")
common.download_csv(
    df, f"compare_{model_id}_{len(hw_ids)}hw_{precision}.csv", "compare_csv", lazy=True
)
common.share_link("compare", query)
sources = " · ".join(common.source_md(h.name, h.source) for h in chosen.values())
st.caption(
    f"Sources: {common.source_md(model.name, model.source)} · {sources}. "
    "Model: SPEC §1 (Williams et al. 2009 roofline; MLSys·im tutorial defaults)."
)
