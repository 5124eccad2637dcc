"""Training planner: every tp × pp × dp (× cp, vp, ep) split of an LLM on a number of GPUs,
ranked; the chosen configuration's step time and memory, its operators on the roofline, the
scaling curves, time and cost to a token budget, beside the training profile's measured error
(docs/model.md, "Training step")."""

import streamlit as st

import engine
from ui.core import frame
from ui.links import state
from ui.train import inputs as ti
from ui.train import pareto as tpareto
from ui.train import reliability as treliability
from ui.train import run as tr
from ui.train import show
from ui.train import view as tv
from ui.train.link import GPT_ID, PAGE, declare, pick_note
from ui.widgets import footprint, page_links, scenario
from ui.widgets import pickers as widgets
from ui.widgets.cards import cards
from ui.words.format import fmt
from ui.words.i18n import N_, _, message_text
from ui.words.text import plain

frame.setup_page(N_("Training planner"))

# --- inputs -----------------------------------------------------------------
base = frame.catalog()
link = declare(base)
s = scenario.start(link, base)
cat = s.cat
with s.pickers:
    model_box, cluster_box = st.container(), st.container()  # the model drawn first
    with cluster_box:
        hw_id = widgets.select_entry(
            link=link, name="hardware", label=_("Accelerator"), entries=dict(cat.hardware)
        )
        cluster = ti.cluster_inputs(link)
        overrides = ti.override_inputs(link)
    with model_box:
        model_id, model, extra = ti.model_input(link, cat, cluster["seq_len"])
    dims = ti.search_inputs(link)
    ranking = ti.ranking_inputs(link, cat.hardware[hw_id])
shared = ("model", "precision", "custom_hw", "custom_model")
texts = {k: v for k, v in dims.items() if k in link and link[k].text_widget}
query = state.publish(link, extra | texts | {"gpus_curve": ranking["curve"]}, shared)

# --- engine -----------------------------------------------------------------
fallback = model is None  # config.json chosen, none valid yet
model = model or cat.models["Llama-3.1-70B"]
hw = cat.hardware[hw_id]
name = model.name if hasattr(model, "name") else f"GPT (L {model.layers}, h {model.hidden:,})"
profile = engine.get_training_profile(cluster["profile"])
run = engine.TrainRun(
    model,
    hw,
    **cluster,
    overrides=overrides,
    token_budget=ranking["token_budget"],
    price_per_gpu_hour=ranking["price"],
)
space = engine.LayoutSpace(**dims)
rank_by = ranking["rank_by"]
st.title(
    _("Training {model} on {gpus} × {hardware}").format(
        model=plain(name), gpus=f"{run.gpus:,}", hardware=plain(hw.name)
    )
)
if fallback:
    st.warning(_("No valid config.json yet: showing Llama-3.1-70B."), icon="📄")
scenario.show_notes(s)
if s.custom_model:
    st.info(_("The custom-model editor's models have no shapes: paste a config.json instead."))
refused = tr.refusal(dims, ranking["curve"])
df = r = result = best = ops = None
if refused:
    st.error(refused, icon="⏱️")
else:
    try:
        with st.spinner(_("Searching the configurations…")):
            df = tr.search(run, space, rank_by)
            row, fits = tr.pick(df, ranking["pick"])
            layout = None if row is None else tr.layout_of(row)
            result = None if layout is None else tr.chosen(run, layout)
            r = None if result is None else result.as_dict()
            ops = None if layout is None else tr.operators(run, layout)
            best = tr.scaling(run, space, rank_by=rank_by, curve=tuple(ranking["curve"]))
    except ValueError as exc:
        st.error(
            _("The training model refused this search: {error}").format(error=plain(exc)),
            icon="🚫",
        )
if df is None:
    footprint.section(link, None, _("No search ran: nothing to count yet."), key="train")
    frame.share_link(PAGE, query)
    st.stop()

ranked = int(df["reason"].isna().sum())
st.caption(
    plain(
        tv.caption(
            run=run,
            rank_by=rank_by,
            model_name=name,
            hw_name=hw.name,
            counts=tr.configurations(dims, [])[:2],
            fits=ranked,
        )
    )
)
band, off_ground = engine.training_band(run)
st.caption(plain(tv.error_text(profile, band, off_ground)))
if r is None:
    st.error(
        _(
            "No configuration of the {searched} searched is valid on {gpus} GPUs: each breaks a "
            "rule (below). Change the values to try."
        ).format(searched=f"{len(df):,}", gpus=f"{run.gpus:,}"),
        icon="🚫",
    )
    st.dataframe(tr.reasons(df), key="train_reasons", hide_index=True)
else:
    note = pick_note(ranking["pick"], ranked)
    if note:
        ranking["pick_note"].warning(note, icon="🔢")
    show.verdict(
        r=r,
        warnings=result.warnings,
        fits=fits,
        rank=(min(ranking["pick"], ranked), ranked),
        gpus=run.gpus,
    )
    frame.show_engine_warnings(w for w in result.warnings if w.code not in tr.SHORTFALL)
    cards(tv.headline(r, band) if fits else [])
    if fits:
        st.markdown(plain(show.budget_words(r)))
    show.breakdowns(r, fits, hw.memory_capacity_bytes)
    if fits:
        show.roofline(ops, r, hw.name)
    else:
        st.dataframe(tr.reasons(df), key="train_reasons", hide_index=True)
show.scaling(best, ranking["curve"], band.pct)
show.tables(
    df=df,
    best=best,
    ops=ops,
    profile=profile,
    show_rejected=ranking["rejected"],
    names=(run, model_id, hw_id),
)
tpareto.section(
    link,
    df,
    title=_("Pareto front: {model} on {gpus} × {hardware}").format(
        model=name, gpus=f"{run.gpus:,}", hardware=hw.name
    ),
    file_name=tv.file_name(kind="pareto", s=run, model_id=model_id, hw_id=hw_id),
)
# the cluster's failures: its GPUs and hosts, whether or not a layout fits on them
treliability.section(
    link, gpus=run.gpus, per_host=hw.devices_per_node, name=model_id, fits=r is not None and fits
)
if r is not None and fits:
    what = _(
        "The planned run: {gpus} GPUs busy for its time to train {tokens} tokens ({days} days)."
    ).format(gpus=f"{run.gpus:,}", tokens=fmt(r["token_budget"]), days=fmt(r["time_to_train_days"]))
    footprint.section(link, engine.train_usage(result), what, key="train")
else:
    footprint.section(link, None, _("No configuration fits: nothing to count yet."), key="train")
if model_id != GPT_ID and not fallback:  # /load serves catalogue LLMs and config.json shapes
    to_load = {"model": model_id, "hardware": hw_id, "precision": cluster["precision"]}
    to_load |= {"model_config": extra.get("model_config"), "custom_hw": query.get("custom_hw")}
    page_links.load_link(to_load, N_("Serve this model under load"))
page_links.accuracy_link("training")
frame.share_link(PAGE, query)
sources = frame.source_md(hw.name, hw.source)
sources += f" · {frame.source_md(model.name, model.source)}" if getattr(model, "source", "") else ""
st.caption(
    _("Sources: {sources}. Model: docs/model.md, 'Training step'.").format(sources=sources)
    + f" {plain(message_text(result['model_flops_definition']) if r else '')}"
)
if model_id == GPT_ID:
    st.caption(_("GPT shapes: engine.gpt_architecture (the Megatron-LM paper's Eq. 2 parameters)."))
