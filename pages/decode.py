"""LLM decode: how fast a decoder LLM generates on one accelerator, and what limits it.

Prefill and the decode step on one roofline, TPOT and tokens/s against batch per context,
weights + KV cache against usable memory (docs/model.md; Pope et al., MLSys 2023)."""

import streamlit as st

import engine
from ui import common, scenario, state, widgets
from ui import decode_view as dv
from ui import figures_llm as fl
from ui.llm_view import reserve_input
from ui.params import MAX_VALUE_CHARS, write_list

PAGE = "decode"
DISPATCH_INPUT = dict(value=None, step=0.005, format="%.3f", placeholder="accelerator's figure")
common.setup_page("LLM decode")
k = lambda name: state.widget_key(PAGE, name)  # noqa: E731

# --- inputs -----------------------------------------------------------------
base = common.catalog()
params, contexts_p, batches_p = dv.params(base, widgets.hardware_param(base))
defaults = {"model": "Llama-3.1-8B", "hardware": "A100", "batch": 1, "context": 4096}
defaults |= {"prompt": 1024, "kv_precision": "same", "contexts": dv.DEFAULT_CONTEXTS}
defaults |= {"batches": dv.DEFAULT_BATCHES, "precision": "fp16"}
defaults |= {"memory_reserve": engine.DEFAULTS.memory_reserve}
defaults |= {name: widgets.ASSUMPTION_DEFAULTS[name] for name in dv.USED[:3]}
s = scenario.start(PAGE, base, params, defaults)
cat = s.cat
llms = {key: m for key, m in cat.models.items() if m.is_decoder_llm}
with s.pickers:
    model_id = widgets.select_entry(PAGE, "model", "Model (decoder LLMs)", llms, "Llama-3.1-8B")
    hw_id = widgets.select_entry(PAGE, "hardware", "Accelerator", dict(cat.hardware), "A100")
    precision = widgets.select_precision(PAGE)
    kv = st.selectbox(
        "KV-cache precision",
        dv.KV_CHOICES,
        key=k("kv_precision"),
        format_func=lambda v: f"same as weights ({precision})" if v == "same" else v,
    )
    batch = widgets.batch_input(PAGE, "Batch (concurrent sequences)")
    context = st.number_input(
        "Context (tokens per sequence)", 1, engine.MAX_CONTEXT, key=k("context")
    )
    prompt = st.number_input("Prompt (tokens, for TTFT)", 1, engine.MAX_CONTEXT, key=k("prompt"))
    text = st.text_input(
        "Contexts for the curves (tokens)", key=k("contexts"), max_chars=MAX_VALUE_CHARS
    )
    try:
        contexts = contexts_p.read(text)
    except ValueError as exc:
        contexts = dv.DEFAULT_CONTEXTS
        st.error(f"Context list not used: {exc}. Showing {write_list(contexts)}.", icon="🚫")
    batches = widgets.batch_list_input(PAGE, batches_p, dv.DEFAULT_BATCHES)
    with st.expander("Assumptions (those the LLM model uses)", expanded=True):
        eff = st.number_input(
            "Compute efficiency η (fraction of peak)",
            widgets.EFFICIENCY_MIN,
            1.0,
            step=0.05,
            key=k("efficiency"),
        )
        layer = st.number_input(
            "Layer overhead τ (µs per layer per step)", 0.0, 1e6, step=1.0, key=k(dv.USED[1])
        )
        dispatch = st.number_input(
            "Dispatch overhead d (ms per step)", 0.0, 1e4, key=k(dv.USED[2]), **DISPATCH_INPUT
        )
        reserve = reserve_input(PAGE)
        st.caption(
            "Bytes moved are the weights plus the KV cache (activations neglected); FLOPs come "
            "from the shapes at 2 per multiply-accumulate. The single solve's activation "
            "traffic α and FLOP convention do not apply here."
        )

# --- engine -----------------------------------------------------------------
model, hw = cat.models[model_id], cat.hardware[hw_id]
batch, context = int(batch), int(context)
prompt_used, prompt_error = dv.check_prompt(int(prompt), context)
overrides = dict(zip(dv.USED, (eff, layer, dispatch, reserve), strict=True))
opts = {"precision": precision, "kv_precision": None if kv == "same" else kv, **overrides}
r = engine.decode(model, hw, batch, context, prompt=prompt_used, **opts).as_dict()
curve_contexts, curve_batches = sorted({*contexts, context}), sorted({*batches, batch})
df, shorter = dv.sweep(model, hw, curve_batches, curve_contexts, prompt_used, opts)
values = {"model": model_id, "hardware": hw_id, "batch": batch, "context": context}
values |= {"prompt": int(prompt), "kv_precision": kv, "contexts": contexts, "batches": batches}
values |= {"precision": precision, **overrides, **s.custom}
query = state.publish(PAGE, params, values, widgets.SHARED_NAMES)

# --- render -----------------------------------------------------------------
hw_name = common.plain(hw.name)
st.title(f"{common.plain(model.name)} on {hw_name}: LLM decode")
st.caption(
    f"Batch {batch:,} · context {context:,} tokens · prompt {prompt_used:,} tokens · "
    f"weights {precision} · KV cache {r['kv_precision']} · LLM decode model"
)
fits = not dv.show_not_fit(r, hw, hw_name)
scenario.show_notes(s)
if prompt_error:
    st.error(prompt_error, icon="🚫")
if s.custom_model:
    st.info("Custom models are not offered here: they have no attention shapes (heads, KV heads).")
scenario.show_engine_warnings(r["warnings"])
for w in sorted({w for w in df["warnings"].unique() if w} - set(r["warnings"])):
    st.caption(f"⚠️ In the curves: {common.plain(w)}")

cards = iter(dv.hypothetical(fl.headline_metrics(r), fits))
for n in fl.METRIC_ROWS:
    for col, (label, shown, tip) in zip(st.columns(n), cards, strict=False):
        col.metric(label, shown, help=tip)
st.caption(dv.memory_caption(r, hw, fl.memory_split(r)))

for line in fl.explain_decode(r, df, hw_name):
    st.markdown(line)

png, now = {"toImageButtonOptions": {"format": "png"}}, (batch, context)
title = f"Roofline: {hw.name}, {precision} (prefill and decode of one request)"
st.plotly_chart(fl.decode_roofline(r, hw.name, title), key="decode_roofline", config=png)
for col, column in zip(st.columns(2), fl.SPEED_CHARTS, strict=True):
    col.plotly_chart(fl.speed_figure(df, column, now), key=f"decode_{column}", config=png)
st.plotly_chart(fl.memory_figure(df, now), key="decode_memory", config=png)

st.dataframe(fl.display_table(df), key="decode_table", hide_index=True)
st.caption(dv.table_note(shorter, prompt_used))
name = f"decode_{model_id}_{hw_id}_b{batch}_ctx{context}_{precision}.csv"
common.download_csv(df, name, "decode_csv", lazy=True)
common.share_link(PAGE, query)
st.caption(
    f"Sources: {common.source_md(model.name, model.source)} · "
    f"{common.source_md(hw.name, hw.source)}. Model: docs/model.md (KV cache with grouped-"
    "query attention; Pope et al. 2023, Efficiently Scaling Transformer Inference)."
)
