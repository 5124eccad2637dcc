"""The planner's sidebar inputs (Streamlit glue around its link, ui/plan/link.py): the model
and request, the SLOs, the grid's axes, prices, the profile and the assumption overrides. Every
number field takes its range from the link's declaration."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

import engine
from ui.core.profiles import DEFAULT, named
from ui.links import state
from ui.links.params import MAX_VALUE_CHARS, Link
from ui.plan import grid as pg
from ui.plan.link import MAX_HARDWARE, NONE, PAGE, PRICE, SWITCHES
from ui.runtime import memo
from ui.widgets import pickers as widgets
from ui.widgets import profile as pk
from ui.widgets.tokens import token_inputs
from ui.words.i18n import N_, _
from ui.words.text import plain

# the grids of every session: 4 of up to 24 MiB (pg.MAX_CONFIGURATIONS rows), dropped a minute
# after their last use (ui/runtime/memo.py says why not session state)
GRIDS = memo.Shared(entries=4, max_bytes=96 * 2**20, idle_s=60.0, pool=memo.HEAVY_BYTES)

SLOS = {  # link name: (widget label, help), shown through _()
    "ttft_ms": (N_("TTFT ≤ (ms)"), N_("Time to first token: the prefill of the whole batch.")),
    "tpot_ms": (N_("TPOT ≤ (ms)"), N_("Time per output token: one decode step.")),
    "min_tokens_per_s_per_user": (
        N_("Tokens/s per user ≥"),
        N_("Output tokens per second each user sees (= 1000 / TPOT in ms)."),
    ),
}


def k(name: str) -> str:
    """The planner's session key of a widget (`plan:<name>`)."""
    return state.widget_key(PAGE, name)


def workload_inputs(link: Link, llms: Mapping[str, engine.ModelSpec]) -> tuple[str, tuple]:
    """The model (decoder LLMs with shapes) and the request: input and output tokens."""
    model_id = widgets.select_entry(
        link=link, name="model", label=_("Model (decoder LLMs)"), entries=dict(llms)
    )
    tokens = token_inputs(link, steps=(128, 64))
    return model_id, (tokens["input_tokens"], tokens["output_tokens"])


def grid_inputs(link: Link, cat: engine.Catalog) -> dict:
    """Accelerators, TP and PP degrees, an MoE model's EP degrees and attention DP settings,
    precisions and batch sizes (the grid's axes)."""
    label = _("Accelerators (1–{n})").format(n=MAX_HARDWARE)
    hw_ids = widgets.select_hardware_list(
        link=link, label=label, hardware=cat.hardware, max_selections=MAX_HARDWARE
    )[0]
    tip = _("Comma-separated whole numbers; values the model cannot use are left out, with why.")
    tps = list_input(link=link, name="tp", label=_("Tensor-parallel degrees (TP)"), tip=tip)
    pps = list_input(link=link, name="pp", label=_("Pipeline-parallel degrees (PP)"), tip=tip)
    moe = _(
        "MoE models: each EP is tried with the TP degrees it divides (1: no expert parallelism)."
    )
    eps = list_input(link=link, name="ep", label=_("Expert-parallel degrees (EP)"), tip=moe)
    switches = st.multiselect(
        _("Attention DP"),
        SWITCHES,
        key=k("attention_dp"),
        format_func=lambda v: _("on") if v == "on" else _("off"),
        help=_("Attention data-parallel over the TP devices (on), split by TP (off), or both."),
    )
    state.show_link_notes(link, "attention_dp")
    precisions = st.multiselect(
        _("Number formats (weights and GEMMs; the KV cache: each format's own)"),
        list(engine.FORMATS),
        key=k("precisions"),
        help=_(
            "A chip without the format's tensor cores is not planned at it (said on the page): "
            "it would run emulated. int4 in older links is w4a16, fp4 is nvfp4."
        ),
    )
    state.show_link_notes(link, "precisions")
    batches = widgets.batch_list_input(link, generator=True)
    return {
        "hardware": hw_ids,
        "tp": tps,
        "pp": pps,
        "ep": eps,
        "attention_dp": [v == "on" for v in switches or ["off"]],
        "precisions": precisions,
        "batches": batches,
    }


def slo_inputs(link: Link) -> dict[str, float | None]:
    """The three limits; blank = no limit."""
    out = {}
    for name, (label, tip) in SLOS.items():
        if st.session_state.get(k(name)) == NONE:
            st.session_state[k(name)] = None  # the link's "none": the field starts blank
        out[name] = widgets.number_input(
            link,
            name,
            _(label),
            value=None,
            step=1.0,
            placeholder=_("no limit"),
            help=_(tip) + _(" Blank: no limit."),
        )
    return out


def list_input(link: Link, name: str, label: str, tip: str) -> list:
    """A comma-list text field; text that does not parse is named under it, default used."""
    param = link[name]
    text = st.text_input(label, key=k(name), max_chars=MAX_VALUE_CHARS, help=tip)
    state.show_link_notes(link, name)
    try:
        return param.read(text)
    except ValueError as exc:
        text = _("{label} not used: {reason}. Using {value}.")
        value = param.write(param.default)
        st.error(text.format(label=label, reason=plain(exc), value=value), icon="🚫")
        return param.default


def price_inputs(hardware: Mapping[str, engine.HardwareSpec]) -> dict[str, float | None]:
    """One price field per chosen accelerator, seeded from the link, else the catalogue."""
    linked = st.session_state.get(k("prices")) or {}
    out, changed = {}, state.link_notes(k("prices"))
    with st.expander(_("Prices (USD per accelerator-hour)"), expanded=bool(changed)):
        for text in changed:  # beside the fields, which stay open to show them
            st.warning(_("Link value changed: {change}.").format(change=plain(text)), icon="🔗")
        st.caption(
            _(
                "From the catalogue: public on-demand list prices, dated (table below the "
                "results). Blank: no price. In the link: `prices=H100:6.16,A100:none`."
            )
        )
        for hw_id, hw in hardware.items():
            key = k(f"price.{hw_id}")
            if key not in st.session_state:
                st.session_state[key] = linked.get(hw_id, hw.price_per_hour_usd)
            out[hw_id] = widgets.number_field(
                key, PRICE, hw.name, value=None, step=0.1, format="%.2f", placeholder=_("no price")
            )
    st.session_state[k("prices")] = {**linked, **out}  # an accelerator chosen again keeps it
    return out


def profile_input(custom: engine.Profile | None = None) -> engine.Profile:
    """The profile whose assumptions the sweep starts from: a built-in, or the custom one a
    link carried (`custom`)."""
    offered = pk.options(custom)
    if st.session_state.get(k("profile")) not in offered:
        st.session_state[k("profile")] = DEFAULT
    name = st.selectbox(
        _("Profile (serving assumptions)"),
        offered,
        key=k("profile"),
        help=_(
            "tutorial: the tutorial's defaults; trtllm: fitted on TensorRT-LLM measurements "
            "(docs/model.md, Accuracy). Fields under Assumptions override it."
        ),
    )
    return named(name, custom)


def sweep(cat, key: tuple, model_id, groups, batches, tokens, opts):
    """The serving model over the grid (read-only rows), kept for its SLO and price edits and
    for every session asking for the same grid (the default one above all)."""

    def run():
        hardware = {h: cat.hardware[h] for g in groups for h in g.hardware}
        return pg.sweep(
            groups=groups,
            model=cat.models[model_id],
            hardware=hardware,
            batches=batches,
            tokens=tokens,
            opts=dict(opts),
        )

    return GRIDS.get((key, model_id, groups, batches, tokens, opts), run)
