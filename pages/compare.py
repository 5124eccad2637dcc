"""Hardware comparison: one model on 2–8 accelerators over a batch list → throughput, speedup
vs a baseline, each one's crossover batch and ridge points, all rooflines overlaid. Decoder
LLMs use the serving model (a decode step or whole requests, one request shape) by default and
the tutorial's whole-model view as a labelled choice (ui.widgets.llm_view); multi-device
deployments ("8xH100/tp8") run through the serving model at the same request shape
(ui.compare.deploy), first on the page. A profile (tutorial
by default) seeds the assumptions, and is named beside the results and in the CSVs."""

import streamlit as st

from ui.charts import serve_rows, tables
from ui.charts import sweep as fs
from ui.compare import deploy as dv
from ui.compare import view as cv
from ui.compare.link import PAGE, declare
from ui.core import budget, frame, profiles
from ui.core.downloads import download_csv
from ui.links import link_params as lp
from ui.links import state
from ui.widgets import llm_view, scenario
from ui.widgets import pickers as widgets
from ui.widgets import profile as pk
from ui.widgets.cards import chart_row
from ui.words.i18n import N_, _
from ui.words.text import FLOP_NOTE, plain

frame.setup_page(N_("Hardware comparison"))

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
    model = cat.models[model_id]
    hw_ids, dropped = widgets.select_hardware_list(
        link=link, label=_("Accelerators (2–8)"), hardware=cat.hardware, max_selections=8
    )
    wanted = st.session_state.get(link.key("baseline"))
    moved = wanted is not None and bool(hw_ids) and wanted not in hw_ids
    chosen = {h: cat.hardware[h] for h in hw_ids}
    baseline = (
        widgets.select_entry(
            link=link, name="baseline", label=_("Baseline"), entries=chosen, fallback=hw_ids[0]
        )
        if hw_ids
        else None
    )
    view, tokens, extra = llm_view.view_inputs(link, model)
    deps, refused = dv.inputs(link, cat, model) if view else ([], [])
    batches = widgets.batch_list_input(link)
    if too_much := cv.rows_refusal(len(hw_ids) + len(deps), len(batches)):
        budget.refuse(too_much)  # beside the fields; none of the rows is computed
    precision = widgets.select_precision(link)
    profile = pk.picker(PAGE, custom, profiles.LLM_VIEW)
    overrides = widgets.assumption_inputs(link)

# --- engine -----------------------------------------------------------------
names, serving = {h: cat.hardware[h].name for h in hw_ids}, view in serve_rows.VIEW_COLUMNS
opts = serve_rows.options(profile, overrides | extra, cat)
if len(hw_ids) >= 2 and not too_much:
    run = {"view": view, "tokens": tokens, "overrides": overrides, "opts": opts}
    raw, df, exact, cross = cv.rows(
        model=model, chosen=chosen, baseline=baseline, batches=batches, precision=precision, **run
    )
values = {"baseline": baseline, "batches": batches, **llm_view.link_values(view, extra)}
values |= {**profiles.link_values(profile, skip=profiles.LLM_VIEW)}
values |= {"deployments": deps or None, **{n: tokens.get(n) for n in lp.TOKENS}}
query = state.publish(link, values, (*lp.SHARED_NAMES, "profile"))
changed = profiles.edits(profile, overrides | extra)
label = profiles.label(profile, changed)

# --- render -----------------------------------------------------------------
convention = overrides["flop_convention"]
note = _(FLOP_NOTE[convention])
shown = {h: plain(name) for h, name in names.items()}  # inert in markdown
st.title(_("Hardware comparison: {model}").format(model=plain(model.name)))
scenario.show_notes(s)
frame.show_param_warnings(profile_notes)
if too_much:
    budget.refuse(too_much)  # where the results would be
    frame.share_link("compare", query)
    st.stop()
dv.show(
    model=model,
    deps=deps,
    refused=refused,
    cat=cat,
    csv_name=f"deployments_{model_id}_{precision}.csv",
    profile=profile,
    changed=changed,
    batches=batches,
    tokens=tokens,
    precision=precision,
    overrides=overrides | extra,
)
if dropped:
    st.warning(_("Dropped the custom accelerator from the list: it is switched off or invalid."))
if len(hw_ids) < 2:
    st.info(
        _(
            "Choose at least two accelerators in the sidebar to compare them (up to eight). "
            "Chosen now: {chosen}."
        ).format(chosen=", ".join(shown.values()) or _("none yet"))
    )
    frame.share_link("compare", query)
    st.stop()

st.caption(
    cv.scope(
        accelerators=len(hw_ids),
        batches=batches,
        precision=precision,
        baseline=shown[baseline],
        note=note,
    )
)
st.caption(profiles.describe(profile, changed))
llm_view.show_fit(df, names, serving)
llm_view.show_caption(view, tokens, label)
llm_view.stop_without_decode_step(view=view, tokens=tokens, page="compare", query=query)
if moved:
    st.warning(
        _("Baseline {wanted} is not one of the chosen accelerators; using {baseline}.").format(
            wanted=plain(wanted), baseline=shown[baseline]
        )
    )
for line in cv.warnings(df, names):  # the engine's, each headed by its accelerator
    st.warning(plain(line), icon="⚠️")

# one accelerator each: folded away when nothing fits on one device (the deployments above
# are then the answer, and every figure here is hypothetical)
nothing_fits = not df["fits_in_memory"].astype(bool).any()
where = _("One accelerator each: nothing fits on one device, every figure below is hypothetical")
section = st.expander(where, expanded=False) if nothing_fits else st.container()
with section:
    st.subheader(_("Per accelerator"))
    st.dataframe(
        cv.summary(df=df, cross=cross, names=names, exact=exact),
        key="compare_summary",
        hide_index=True,
    )
    st.caption(
        cv.ridge_caption(
            efficiency=overrides["efficiency"], precision=precision, note=note, serving=serving
        )
    )
    if tutorial_note := cv.crossover_note(cross, exact, shown):
        st.markdown(tutorial_note)  # names already inert (shown)
    png = {"toImageButtonOptions": {"format": "png"}}
    left, right = chart_row(2)
    left.plotly_chart(fs.throughput_figure(df, names), key="compare_throughput", config=png)
    speedup = fs.speedup_figure(df, names, baseline)
    right.plotly_chart(speedup, key="compare_speedup_chart", config=png)
    st.subheader(_("Speedup vs {baseline} (throughput ratio, ×)").format(baseline=shown[baseline]))
    st.dataframe(tables.speedup_table(df, names), key="compare_speedup", hide_index=True)
    title = _("Rooflines: {accelerators} accelerators, {precision}").format(
        accelerators=len(hw_ids), precision=precision
    )
    roofline = fs.roofline_trajectories(
        df=df, names=names, convention=overrides["flop_convention"], title=title
    )
    st.plotly_chart(roofline, key="compare_roofline", config=png)

    st.subheader(_("All scenarios"))
    if serving:
        table = serve_rows.table(df=df, names=names, view=view, columns=cv.SERVING_COLUMNS)
    else:
        table = tables.tutorial_table(df, names, cv.TUTORIAL_COLUMNS)
    st.dataframe(table, key="compare_table", hide_index=True)
    st.caption(
        _("Intensity and TFLOP/s: {note}. The CSV has every column and the assumptions.").format(
            note=note
        )
    )
    csv_name = f"compare_{model_id}_{len(hw_ids)}hw_{precision}.csv"
    download_csv(raw.assign(profile=label), csv_name, "compare_csv")
frame.share_link("compare", query)
sources = " · ".join(frame.source_md(h.name, h.source) for h in chosen.values())
st.caption(
    _(
        "Sources: {model} · {hardware}. Model: docs/model.md (Williams et al. 2009 roofline; "
        "MLSys·im tutorial defaults)."
    ).format(model=frame.source_md(model.name, model.source), hardware=sources)
)
