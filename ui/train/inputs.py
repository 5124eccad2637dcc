"""The training planner's sidebar: the model (catalogue, config.json or GPT shapes), the
cluster and the batch, the search's values per dimension, the ranking, the token budget and the
price, the scaling curve's GPU counts. Each widget is bound to its share-link parameter (key
`train:<name>`, ui/train/link.py); number fields take their ranges from it."""

from __future__ import annotations

import streamlit as st

import engine
from ui.core import profiles
from ui.links.params import MAX_VALUE_CHARS, Link
from ui.train.link import (
    ATTENTION,
    ATTENTION_WORDS,
    DIMENSIONS,
    GPT_ID,
    GPT_NAME,
    MODULE_WORDS,
    PRECISIONS,
    RANKS,
    RECIPE_WORDS,
    RECOMPUTE,
    ZERO,
)
from ui.widgets.model_config import select_llm
from ui.widgets.pickers import number_input
from ui.words.format import fmt
from ui.words.i18n import N_, _
from ui.words.text import plain

RECOMPUTE_LABELS = {"none": N_("none"), "selective": N_("selective"), "full": N_("full")}


def list_input(link: Link, name: str, label: str, tip: str) -> list:
    """A comma-list text field; text that does not parse is named under it, default used."""
    param = link[name]
    text = st.text_input(label, key=link.key(name), max_chars=MAX_VALUE_CHARS, help=tip)
    try:
        return param.read(text)
    except ValueError as exc:
        shown = param.write(param.default) or _("the default")  # blank: etp's, each tp
        st.error(
            _("{name} not used: {error}. Using {default}.").format(
                name=name, error=plain(exc), default=shown
            ),
            icon="🚫",
        )
        return param.default


def model_input(link: Link, cat, seq_len: int) -> tuple[str, object, dict]:
    """(the model's id, its ModelSpec or Architecture or None, link values it adds)."""
    model_id, spec, config = select_llm(link, cat, {GPT_ID: _(GPT_NAME)})
    if model_id != GPT_ID:
        return model_id, spec, {"model_config": config or None}
    param = link["gpt_shape"]
    text = st.text_input(
        _("GPT shapes: layers, hidden, heads[, vocabulary]"),
        key=link.key("gpt_shape"),
        max_chars=80,
        help=_(
            "A Megatron/GPT-3-style model (MHA, GELU MLP of 4h, learned positions): "
            "96,12288,96 is GPT-3 175B; the vocabulary defaults to 51,200."
        ),
    )
    try:
        shape = param.read(text)
    except ValueError as exc:
        shape = param.default
        st.error(
            _("GPT shapes not used: {error}. Using {default}.").format(
                error=plain(exc), default=param.write(shape)
            ),
            icon="🚫",
        )
    layers, hidden, heads, vocab = shape
    arch = engine.gpt_architecture(
        layers=layers, hidden=hidden, heads=heads, vocab=vocab, seq_len=seq_len
    )
    return model_id, arch, {"gpt_shape": shape}


def cluster_inputs(link: Link) -> dict:
    """GPUs, the global batch, the sequence length, precision, attention and the profile."""
    gpus = number_input(link, "gpus", _("GPUs"), step=8)
    left, right = st.columns(2)
    batch = number_input(
        link, "global_batch_size", _("Global batch (sequences)"), where=left, step=64
    )
    seq = number_input(link, "seq_len", _("Sequence length (tokens)"), where=right, step=1024)
    precision = st.selectbox(
        _("Precision"),
        PRECISIONS,
        key=link.key("precision"),
        help=_("fp8: GEMMs at the fp8 peak, except the LM head; everything else 16-bit."),
    )
    recipe = st.selectbox(
        _("FP8 scaling recipe"),
        engine.FP8_RECIPES,
        key=link.key("fp8_recipe"),
        format_func=lambda r: _(RECIPE_WORDS[r]),
        disabled=precision != "fp8",
        help=_(
            "How fp8 tensors are scaled; each cast is a memory-bound kernel before the GEMM "
            "(read with precision fp8 only)."
        ),
    )
    gather = st.checkbox(
        _("Weights in fp8, all-gathered in fp8"),
        key=link.key("fp8_param_gather"),
        disabled=precision != "fp8",
        help=_(
            "Megatron-LM's --fp8-param-gather, torchtitan's fp8 all-gather: 1 byte per weight "
            "held and gathered by data parallelism (read with precision fp8 only)."
        ),
    )
    attention = st.selectbox(
        _("Attention kernel"),
        ATTENTION,
        key=link.key("attention"),
        format_func=lambda a: _(ATTENTION_WORDS[a]),
        help=_(
            "FlashAttention, or unfused attention: the score matrices through memory "
            "(Megatron-LM 2021, the fitted runs)."
        ),
    )
    profile = st.selectbox(
        _("Training profile"),
        engine.training_profile_names(),
        key=link.key("profile"),
        format_func=lambda n: profiles.picker_text(engine.get_training_profile(n)),
    )
    return {
        "gpus": int(gpus),
        "global_batch_size": int(batch),
        "seq_len": int(seq),
        "precision": precision,
        "fp8_recipe": recipe if precision == "fp8" else None,
        "fp8_param_gather": gather and precision == "fp8",
        "attention": attention,
        "profile": profile,
    }


def override_inputs(link: Link) -> dict[str, float | str | None]:
    """The training profile's assumptions the user overrides (blank: the profile's figure; a
    word, such as the MoE dispatcher, from its options)."""
    by_name = {a.name: a for a in engine.ASSUMPTIONS}
    with st.expander(_("Override the training profile (blank: its figure)")):
        return {name: _override(link, by_name[name]) for name in engine.TRAINING_NAMES}


def _override(link: Link, a) -> float | str | None:
    """One assumption's field: a number, or a word's options after the profile's figure."""
    if not a.choices:
        return number_input(link, a.name, _(a.label), value=None, placeholder=_("profile's figure"))
    return st.selectbox(
        _(a.label),
        [None, *a.choices],
        key=link.key(a.name),
        format_func=lambda v: _("profile's figure") if v is None else v,
    )


def search_inputs(link: Link) -> dict:
    """The values the search tries per dimension."""
    dims = {}
    with st.expander(_("Search: the values to try"), expanded=False):
        tip = _("Comma-separated whole numbers or ranges (1..8, 8..64:8).")
        for name, (label, _default) in DIMENSIONS.items():
            dims[name] = list_input(link=link, name=name, label=_(label), tip=tip)
        dims["etp"] = list_input(
            link=link,
            name="etp",
            label=_("etp (the experts' tensor parallelism, MoE; blank: each layout's tp)"),
            tip=_(
                "Megatron-Core's `--expert-tensor-parallel-size`: an MoE layer splits the same "
                "GPUs etp × ep × the experts' data parallelism; etp must divide tp. 1 keeps every "
                "expert whole on a GPU. Comma-separated whole numbers or ranges."
            ),
        )
        zero = st.multiselect(_("ZeRO stages"), ZERO, key=link.key("zero"))
        schedules = st.multiselect(
            _("Pipeline schedules"),
            engine.PP_SCHEDULES,
            key=link.key("pp_schedule"),
            help=_(
                "`1f1b`: Megatron-LM's one-forward-one-backward schedule, interleaved when vp > 1 "
                "(none chosen: it alone). `dualpipe`: DeepSeek's bidirectional schedule: each GPU "
                "holds its stage and the mirror one (twice the weights, pp + 1 micro-batches of "
                "activations) for a bubble of (pp/2 − 1)·(F&B + B − 3W); it needs an even pp, vp 1 "
                "and an even number of micro-batches, at least 2·pp. `dualpipev`: its cut-in-half "
                "V (torch.distributed.pipelining's ScheduleDualPipeV): 2·pp stages, GPU i holding "
                "stages i and 2·pp − 1 − i (one copy of the weights, the first and last stage on "
                "GPU 0); it needs vp 1 and at least 2·pp micro-batches."
            ),
        )
        exchanges = st.multiselect(
            _("Context-parallel exchanges (cp > 1)"),
            engine.CP_COMM_TYPES,
            key=link.key("cp_comm_type"),
            help=_(
                "Megatron-Core's `--cp-comm-type`: how the cp ranks exchange keys and values. "
                "`p2p` (none chosen: it alone): the ring, each block passed on under the "
                "attention of the one before. `allgather`: Llama 3's, every block gathered "
                "before attention, not hidden. `a2a`: DeepSpeed-Ulysses, all-to-alls trade the "
                "sequence for heads around attention, not hidden; the heads and KV heads must "
                "divide by tp·cp."
            ),
        )
        modes = st.multiselect(
            _("Activation recomputation"),
            RECOMPUTE,
            key=link.key("recompute"),
            format_func=lambda m: _(RECOMPUTE_LABELS[m]),
        )
        each = "; ".join(f"`{m}`: {_(w)}" for m, w in MODULE_WORDS.items())
        modules = st.multiselect(
            _("Selective recomputation runs again"),
            engine.RECOMPUTE_MODULES,
            key=link.key("recompute_modules"),
            help=_(
                "Megatron-Core's `--recompute-modules`, for the selective layouts: each module's "
                "activations are rebuilt in the backward pass instead of kept (none chosen: "
                "`core_attn`, its default). A module the model lacks (`mla_up_proj` without "
                "MLA, `moe` without experts) refuses the selective layouts. {each}."
            ).format(each=each),
        )
    dims["zero"] = [int(z) for z in zero] or [0]
    dims["pp_schedule"] = tuple(schedules) or ("1f1b",)
    dims["cp_comm_type"] = tuple(exchanges) or ("p2p",)
    dims["recompute"] = list(modes) or ["none"]
    selective = "selective" in dims["recompute"]  # the modules apply to those layouts only
    dims["recompute_modules"] = (tuple(modules) if selective else ()) or ("core_attn",)
    return dims


def ranking_inputs(link: Link, hw) -> dict:
    """Rank by, the token budget, the price, the scaling curve's GPU counts, what to show."""
    rank = st.selectbox(
        _("Rank by"), list(RANKS), key=link.key("rank_by"), format_func=lambda k: _(RANKS[k])
    )
    budget = number_input(
        link, "token_budget", _("Token budget (tokens)"), step=1e11, format="%.3g"
    )
    listed = hw.price_per_hour_usd
    shown = (
        _("no list price")
        if listed is None
        else _("list: {price}").format(price=fmt(listed, "USD"))
    )
    price = number_input(
        link,
        "price_per_gpu_hour",
        _("Price (USD per GPU-hour)"),
        value=None,
        step=0.1,
        format="%.2f",
        placeholder=shown,
    )
    tip = _("The GPU counts of the scaling curves (at most 10), e.g. 8,16,32,64.")
    curve = list_input(link=link, name="gpus_curve", label=_("Scaling curve: GPU counts"), tip=tip)
    pick = number_input(link, "pick", _("Show in detail: configuration ranked"), step=1)
    pick_note = st.empty()  # said once the search knows how many fit (ui.train.link.pick_note)
    rejected = st.toggle(_("List the rejected configurations too"), key=link.key("rejected"))
    return {
        "rank_by": rank,
        "token_budget": float(budget),
        "price": None if price is None else float(price),
        "curve": curve,
        "pick": int(pick),
        "pick_note": pick_note,
        "rejected": bool(rejected),
    }
