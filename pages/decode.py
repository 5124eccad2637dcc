"""LLM decode: how fast a decoder LLM generates on one accelerator, and what limits it.

Prefill and the decode step on one roofline, TPOT and tokens/s against batch per context,
weights + KV cache against capacity (SPEC.md §2; Pope et al., MLSys 2023)."""

import streamlit as st

import engine
from engine.api import MAX_BATCH
from engine.llm import MAX_CONTEXT
from engine.llm_sweep import IGNORED_ASSUMPTIONS, check_prompt, resolve_llm
from ui import common, custom, state, widgets
from ui import figures_llm as fl
from ui.params import MAX_VALUE_CHARS, Param, choice, listing, number, write_list, write_number

PAGE = "decode"
KV_CHOICES = ("same", "fp16", "bf16", "fp8", "int8", "int4")  # same: the weight precision
USED = ("efficiency", "layer_overhead_us", "dispatch_overhead_ms")  # the rest are §1-only
DISPATCH_INPUT = dict(value=None, step=0.005, format="%.3f", placeholder="accelerator's figure")
DEFAULT_CONTEXTS, DEFAULT_BATCHES = [1024, 4096, 16384, 65536], [2**k for k in range(9)]
common.setup_page("LLM decode")
k = lambda name: state.widget_key(PAGE, name)  # noqa: E731

# --- inputs -----------------------------------------------------------------
base = common.catalog()
tokens = number(1, MAX_CONTEXT, whole=True)
contexts_p = Param("contexts", lambda t: sorted(listing(tokens, max_items=8)(t)), write_list, True)
batches_p = widgets.batches_param(4096, ranges=True)
params = [Param("model", choice((), canon=lambda t: resolve_llm(t, base).id))]
params += [widgets.hardware_param(base), widgets.batch_param(), Param("context", tokens)]
params += [Param("prompt", tokens), Param("kv_precision", choice(KV_CHOICES)), contexts_p]
params += [batches_p, Param("efficiency", number(0.01, 1.0), write_number)]
skip = ("efficiency", *IGNORED_ASSUMPTIONS)  # efficiency: the widget's range, below
params += [p for p in widgets.assumption_params() if p.name not in skip]
defaults = {"model": "Llama-3.1-8B", "hardware": "A100", "batch": 1, "context": 4096}
defaults |= {"prompt": 1024, "kv_precision": "same", "contexts": DEFAULT_CONTEXTS}
defaults |= {"batches": DEFAULT_BATCHES, "precision": "fp16"}
defaults |= {name: widgets.ASSUMPTION_DEFAULTS[name] for name in USED}
warnings = state.bind(PAGE, params, defaults)
pickers, editors = st.sidebar.container(), st.sidebar.container()
with editors:
    custom_hw, custom_model = widgets.custom_editors(PAGE)
cat = custom.with_custom(base, custom_hw, custom_model)
llms = {key: m for key, m in cat.models.items() if m.is_decoder_llm}
with pickers:
    model_id = widgets.select_entry(PAGE, "model", "Model (decoder LLMs)", llms, "Llama-3.1-8B")
    hw_id = widgets.select_entry(PAGE, "hardware", "Accelerator", dict(cat.hardware), "A100")
    precision = widgets.select_precision(PAGE)
    kv = st.selectbox(
        "KV-cache precision",
        KV_CHOICES,
        key=k("kv_precision"),
        format_func=lambda v: f"same as weights ({precision})" if v == "same" else v,
    )
    batch = st.number_input("Batch (concurrent sequences)", 1, MAX_BATCH, step=1, key=k("batch"))
    context = st.number_input("Context (tokens per sequence)", 1, MAX_CONTEXT, key=k("context"))
    prompt = st.number_input("Prompt (tokens, for TTFT)", 1, MAX_CONTEXT, key=k("prompt"))
    text = st.text_input(
        "Contexts for the curves (tokens)", key=k("contexts"), max_chars=MAX_VALUE_CHARS
    )
    try:
        contexts = contexts_p.read(text)
    except ValueError as exc:
        contexts = DEFAULT_CONTEXTS
        st.error(f"Context list not used: {exc}. Showing {write_list(contexts)}.", icon="🚫")
    batches = widgets.batch_list_input(PAGE, batches_p, DEFAULT_BATCHES)
    with st.expander("Assumptions (those the LLM model uses)", expanded=True):
        eff = st.number_input(
            "Compute efficiency η (fraction of peak)", 0.01, 1.0, step=0.05, key=k("efficiency")
        )
        layer = st.number_input(
            "Layer overhead τ (µs per layer per step)", 0.0, 1e6, step=1.0, key=k(USED[1])
        )
        dispatch = st.number_input(
            "Dispatch overhead d (ms per step)", 0.0, 1e4, key=k(USED[2]), **DISPATCH_INPUT
        )
        st.caption(
            "Bytes moved are the weights plus the KV cache (activations neglected); FLOPs come "
            "from the shapes at 2 per multiply-accumulate. The single solve's activation "
            "traffic α and FLOP convention do not apply here."
        )

# --- engine -----------------------------------------------------------------
model, hw = cat.models[model_id], cat.hardware[hw_id]
batch, context = int(batch), int(context)
try:
    prompt_used, prompt_error = check_prompt(int(prompt), context), None
except ValueError as exc:
    prompt_used, prompt_error = context, f"{exc}. Showing a prompt of {context:,} tokens."
overrides = dict(zip(USED, (eff, layer, dispatch), strict=True))
opts = {"precision": precision, "kv_precision": None if kv == "same" else kv, **overrides}
r = engine.decode(model, hw, batch, context, prompt=prompt_used, **opts).as_dict()
curve_contexts, curve_batches = sorted({*contexts, context}), sorted({*batches, batch})
sweep_prompt = prompt_used if prompt_used <= curve_contexts[0] else None
df = engine.decode_sweep(model, hw, curve_batches, curve_contexts, prompt=sweep_prompt, **opts)
values = {"model": model_id, "hardware": hw_id, "batch": batch, "context": context}
values |= {"prompt": int(prompt), "kv_precision": kv, "contexts": contexts, "batches": batches}
values |= {"precision": precision, **overrides, "custom_hw": custom_hw}
query = state.publish(PAGE, params, values | {"custom_model": custom_model}, widgets.SHARED_NAMES)

# --- render -----------------------------------------------------------------
st.title(f"{common.plain(model.name)} on {common.plain(hw.name)}: LLM decode")
st.caption(
    f"Batch {batch:,} · context {context:,} tokens · prompt {prompt_used:,} tokens · "
    f"weights {precision} · KV cache {r['kv_precision']} · SPEC §2 serving model"
)
common.show_param_warnings(warnings)
common.show_catalog_notes(cat)
if prompt_error:
    st.error(prompt_error, icon="🚫")
if custom_model:
    st.info("Custom models are not offered here: they have no attention shapes (heads, KV heads).")
for w in r["warnings"]:
    st.warning(w, icon="⚠️")
for w in sorted({w for w in df["warnings"].unique() if w} - set(r["warnings"])):
    st.caption(f"⚠️ In the curves: {w}")

cards = iter(fl.headline_metrics(r))
for n in fl.METRIC_ROWS:
    for col, (label, shown, tip) in zip(st.columns(n), cards, strict=False):
        col.metric(label, shown, help=tip)
st.caption(f"Memory: {fl.memory_split(r)}.")

for line in fl.explain_decode(r, df, common.plain(hw.name)):
    st.markdown(line)

png, now = {"toImageButtonOptions": {"format": "png"}}, (batch, context)
title = f"Roofline: {hw.name}, {precision} (prefill and decode of one request)"
st.plotly_chart(fl.decode_roofline(r, hw.name, title), key="decode_roofline", config=png)
for col, column in zip(st.columns(2), fl.SPEED_CHARTS, strict=True):
    col.plotly_chart(fl.speed_figure(df, column, now), key=f"decode_{column}", config=png)
st.plotly_chart(fl.memory_figure(df, now), key="decode_memory", config=png)

st.dataframe(fl.display_table(df), key="decode_table", hide_index=True)
note = "" if sweep_prompt else " TTFT uses each row's context as its prompt (some are shorter)."
st.caption(f"The sweep adds this scenario's batch and context to the lists.{note}")
name = f"decode_{model_id}_{hw_id}_b{batch}_ctx{context}_{precision}.csv"
common.download_csv(df, name, "decode_csv", lazy=True)
common.share_link(PAGE, query)
st.caption(
    f"Sources: {common.source_md(model.name, model.source)} · "
    f"{common.source_md(hw.name, hw.source)}. Model: SPEC §2 (KV cache with grouped-query "
    "attention; Pope et al. 2023, Efficiently Scaling Transformer Inference)."
)
