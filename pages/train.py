"""Training planner: every tp × pp × dp (× cp, vp, ep) split of an LLM on a number of GPUs,
ranked; the chosen configuration's step time and memory, its operators on the roofline, the
scaling curves, time and cost to a token budget, beside the training profile's measured error
(docs/model.md, "Training step")."""

import streamlit as st

import engine
from ui.core import frame, state
from ui.core.i18n import N_, _, engine_text
from ui.core.text import plain
from ui.train import inputs as ti
from ui.train import run as tr
from ui.train import show
from ui.train import view as tv
from ui.train.link import GPT_ID, PAGE, declare
from ui.widgets import pickers as widgets
from ui.widgets import scenario
from ui.widgets.cards import cards

frame.setup_page(N_("Training planner"))

# --- inputs -----------------------------------------------------------------
base = frame.catalog()
link = declare(base)
s = scenario.start(link, base)
cat = s.cat
with s.pickers:
    model_box, cluster_box = st.container(), st.container()  # the model drawn first
    with cluster_box:
        hw_id = widgets.select_entry(link, "hardware", _("Accelerator"), dict(cat.hardware))
        cluster = ti.cluster_inputs(link)
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
search = tr.Search(
    model,
    hw,
    **cluster,
    dims=tuple((k, tuple(v)) for k, v in dims.items()),
    rank_by=ranking["rank_by"],
    token_budget=ranking["token_budget"],
    price=ranking["price"],
)
st.title(
    _("Training {model} on {gpus} × {hardware}").format(
        model=plain(name), gpus=f"{search.gpus:,}", hardware=plain(hw.name)
    )
)
if fallback:
    st.warning(_("No valid config.json yet: showing Llama-3.1-70B."), icon="📄")
scenario.show_notes(s)
if s.custom_model:
    st.info(_("The custom-model editor's models have no shapes: paste a config.json instead."))
refused = tr.refusal(dims, ranking["curve"])
df = r = best = ops = None
if refused:
    st.error(refused, icon="⏱️")
else:
    try:
        with st.spinner(_("Searching the configurations…")):
            df = tr.search(search)
            row, fits = tr.pick(df, ranking["pick"])
            config = None if row is None else tuple(tr.config_of(row).items())
            r = None if config is None else tr.chosen(search, config).as_dict()
            ops = None if config is None else tr.operators(search, config)
            best = tr.scaling(search, tuple(ranking["curve"]))
    except ValueError as exc:
        st.error(
            _("The training model refused this search: {error}").format(error=plain(exc)),
            icon="🚫",
        )
if df is None:
    frame.share_link(PAGE, query)
    st.stop()

ranked = int((df["reason"] == "").sum())
st.caption(plain(tv.caption(search, name, hw.name, tr.configurations(dims, [])[:2], ranked)))
st.caption(plain(tv.error_text(profile)))
if r is None:
    st.error(
        _(
            "No configuration of the {searched} searched is valid on {gpus} GPUs: each breaks a "
            "rule (below). Change the values to try."
        ).format(searched=f"{len(df):,}", gpus=f"{search.gpus:,}"),
        icon="🚫",
    )
    st.dataframe(tr.reasons(df), key="train_reasons", hide_index=True)
else:
    show.verdict(r, fits, (min(ranking["pick"], ranked), ranked), search.gpus)
    frame.show_engine_warnings(w for w in r["warnings"] if not w.startswith(tr.NO_FIT))
    cards(tv.headline(r, profile) if fits else [])
    if fits:
        st.markdown(plain(show.budget_words(r)))
    show.breakdowns(r, fits, hw.memory_capacity_bytes)
    if fits:
        show.roofline(ops, r, hw.name)
    else:
        st.dataframe(tr.reasons(df), key="train_reasons", hide_index=True)
show.scaling(best, ranking["curve"], tv.band(profile))
show.tables(df, best, ops, profile, ranking["rejected"], (search, model_id, hw_id))
frame.share_link(PAGE, query)
sources = frame.source_md(hw.name, hw.source)
sources += f" · {frame.source_md(model.name, model.source)}" if getattr(model, "source", "") else ""
st.caption(
    _("Sources: {sources}. Model: docs/model.md, 'Training step'.").format(sources=sources)
    + f" {plain(engine_text(r['model_flops_definition']) if r else '')}"
)
if model_id == GPT_ID:
    st.caption(_("GPT shapes: engine.gpt_architecture (the Megatron-LM paper's Eq. 2 parameters)."))
