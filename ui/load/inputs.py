"""The serving-under-load page's sidebar: the deployment, the profile's scheduler (shown, each
value editable), the workload, the serving techniques (speculative decoding, a shared prefix),
the SLOs and the plan. Each widget is bound to its share-link
parameter (key `load:<name>`, ui/load/link.py); number fields take their ranges from it."""

from __future__ import annotations

import streamlit as st

import engine
from ui.core import profiles
from ui.links.params import Link
from ui.load.link import MODE_LABELS, MODES, ON_OFF, SPEC_CHOICES, SPEC_OFF
from ui.widgets import profile as pk
from ui.widgets.pickers import number_input, select_format, select_kv_format, split_inputs
from ui.words.data_text import said
from ui.words.format import fmt
from ui.words.i18n import N_, _
from ui.words.text import plain

SCHEDULER_LABELS = {  # name: (label, translated where shown; step)
    "max_num_seqs": (N_("max_num_seqs (sequences per step)"), 1),
    "max_batched_tokens": (N_("max_batched_tokens (new tokens per step)"), 256),
    "block_size": (N_("block_size (tokens per KV block)"), 16),
}
ON_OFF_LABELS = {"on": N_("on"), "off": N_("off")}


def deployment_inputs(link: Link, custom: engine.Profile | None = None) -> dict:
    """TP, PP, an MoE model's EP and attention DP, the weight and KV-cache formats and the
    profile (a built-in's name, or the custom profile a link carried: `custom`)."""
    left, right = st.columns(2)
    tp = number_input(link, "tp", _("TP (tensor-parallel devices)"), where=left)
    pp = number_input(link, "pp", _("PP (pipeline stages)"), where=right)
    ep, attention_dp = split_inputs(link)
    precision = select_format(link)
    kv = select_kv_format(link, precision)
    names = pk.options(custom)
    key = link.key("profile")
    if st.session_state.get(key) not in names:
        st.session_state[key] = link["profile"].default
    profile = st.selectbox(
        _("Profile (assumptions and the stack's scheduler)"),
        names,
        key=key,
        format_func=lambda n: profiles.picker_text(profiles.named(n, custom)),
        help=_("A serving stack's fitted assumptions and its scheduler defaults (docs/model.md)."),
    )
    return {
        "tp": int(tp),
        "pp": int(pp),
        "ep": ep,
        "attention_dp": attention_dp,
        "precision": precision,
        "kv_precision": kv,
        "profile": custom if custom is not None and profile == custom.name else profile,
    }


def scheduler_inputs(link: Link, profile: str | engine.Profile) -> dict:
    """The profile's scheduler, each value shown and editable (blank: the profile's)."""
    base = engine.load_scheduler(profile)
    out = {}
    title = _("Scheduler: {stack} defaults unless set").format(stack=base.stack)
    with st.expander(title, expanded=False):
        st.caption(
            _("Profile {profile}: {release}. Blank fields keep its value.").format(
                profile=engine.get_profile(profile).name, release=said(base.release)
            )
        )
        for name, (label, step) in SCHEDULER_LABELS.items():
            shown = _("profile: {value}").format(value=f"{getattr(base, name):,}")
            value = number_input(link, name, _(label), value=None, step=step, placeholder=shown)
            out[name] = None if value is None else int(value)
        default = ON_OFF_LABELS["on"] if base.chunked_prefill else ON_OFF_LABELS["off"]
        chunked = st.selectbox(
            _("Chunked prefill"),
            ON_OFF,
            index=None,
            key=link.key("chunked_prefill"),
            format_func=lambda v: _(ON_OFF_LABELS[v]),
            placeholder=_("profile: {value}").format(value=_(default)),
        )
        out["chunked_prefill"] = None if chunked is None else chunked == "on"
    return out


def workload_inputs(link: Link) -> dict:
    """How requests arrive, how long they are, how many, and the seed."""
    mode = st.radio(
        _("Workload"),
        MODES,
        key=link.key("mode"),
        format_func=lambda m: _(MODE_LABELS[m]),
        horizontal=False,
    )
    left, right = st.columns(2)
    arrivals = mode not in ("open", "trace")  # a trace's template is drawn at this rate
    rate = number_input(
        link, "rate", _("Rate (requests/s)"), where=left, step=0.5, disabled=arrivals
    )
    burst = number_input(
        link,
        "burstiness",
        _("Burstiness (1: Poisson)"),
        where=right,
        step=0.1,
        disabled=arrivals,
        help=_("Gamma-distributed gaps of this shape; below 1 burstier."),
    )
    clients = number_input(
        link, "concurrency", _("Clients (closed loop)"), step=1, disabled=mode != "closed"
    )
    left, right = st.columns(2)
    n_in = number_input(link, "input_tokens", _("Input tokens (mean)"), where=left, step=128)
    n_out = number_input(link, "output_tokens", _("Output tokens (mean)"), where=right, step=64)
    spread = number_input(
        link, "length_spread", _("Length spread (± fraction, uniform)"), step=0.1, format="%.2f"
    )
    left, right = st.columns(2)
    requests = number_input(
        link, "requests", _("Requests"), where=left, step=500, disabled=mode == "trace"
    )
    seed = number_input(link, "seed", _("Seed"), where=right, step=1)
    return {
        "mode": mode,
        "rate": float(rate),
        "burstiness": float(burst),
        "concurrency": int(clients),
        "input_tokens": int(n_in),
        "output_tokens": int(n_out),
        "length_spread": float(spread),
        "requests": int(requests),
        "seed": int(seed),
    }


def slo_inputs(link: Link) -> engine.SLO:
    """p90 TTFT and p99 TPOT limits (ms)."""
    left, right = st.columns(2)
    ttft = number_input(link, "slo_ttft_ms_p90", _("p90 TTFT ≤ (ms)"), where=left, step=100.0)
    tpot = number_input(link, "slo_tpot_ms_p99", _("p99 TPOT ≤ (ms)"), where=right, step=5.0)
    return engine.SLO(ttft_ms=float(ttft), tpot_ms=float(tpot))


def plan_inputs(link: Link, hw) -> tuple[float | None, float]:
    """The price per accelerator-hour (blank: the catalogue's) and the target rate."""
    listed = hw.price_per_hour_usd
    shown = (
        _("no list price")
        if listed is None
        else _("list: {price}").format(price=fmt(listed, "USD"))
    )
    price = number_input(
        link,
        "price",
        _("Price (USD per accelerator-hour)"),
        value=None,
        step=0.1,
        format="%.2f",
        placeholder=shown,
    )
    target = number_input(link, "target_rate", _("Target traffic (requests/s)"), step=1.0)
    return (None if price is None else float(price)), float(target)


SPEC_LABELS = {  # method: its label, translated where shown
    "off": N_("Off"),
    "draft": N_("Draft model"),
    "eagle": N_("EAGLE head"),
    "mtp": N_("Multi-token prediction (MTP)"),
    "ngram": N_("N-gram prompt lookup"),
}


def technique_inputs(link: Link, cat: engine.Catalog) -> tuple[dict, dict]:
    """Speculative decoding, a shared prompt prefix and multi-turn sessions: (the
    Deployment's fields, the Workload's), each checked by the engine; a refusal is said beside
    the fields and the setting left off."""
    spec, prefix = {}, {}
    with st.expander(_("Serving techniques: speculative decoding, prefix caching")):
        method = st.selectbox(
            _("Speculative decoding"),
            SPEC_CHOICES,
            key=link.key("spec_method"),
            format_func=lambda m: _(SPEC_LABELS[m]),
            help=_(
                "A drafter proposes K tokens; the model checks them in one pass of K + 1 "
                "positions and keeps those it agrees with (docs/model.md)."
            ),
        )
        on = method != SPEC_OFF
        k0, a0 = engine.SPEC_METHODS.get(method, (3, 0.7))
        left, right = st.columns(2)
        tokens = number_input(
            link,
            "spec_tokens",
            _("Drafted tokens K"),
            where=left,
            value=None,
            step=1,
            disabled=not on,
            placeholder=_("default: {value}").format(value=k0),
        )
        acceptance = number_input(
            link,
            "spec_acceptance",
            _("Acceptance (rate < 1, or tokens per pass)"),
            where=right,
            value=None,
            step=0.05,
            disabled=not on,
            placeholder=_("default: {value}").format(value=fmt(a0)),
            help=_(
                "Below 1: the chance each drafted token is accepted (α); from 1 to K + 1: the "
                "mean tokens a pass yields. Mean accepted tokens = (1 − α^(K+1)) / (1 − α)."
            ),
        )
        draft = select_llm_id(link, cat, disabled=method != "draft")
        left, right = st.columns(2)
        n = number_input(
            link,
            "prefix_tokens",
            _("Shared prefix (tokens; 0: none)"),
            where=left,
            step=256,
            help=_("A system prompt many requests begin with, counted in their input tokens."),
        )
        share = number_input(
            link,
            "prefix_share",
            _("Requests carrying it (fraction)"),
            where=right,
            step=0.1,
            format="%.2f",
            disabled=not n,
        )
        turns = number_input(
            link,
            "session_turns",
            _("Turns per session (1: none)"),
            step=1,
            help=_(
                "Multi-turn chats: each later turn's prompt holds the conversation so far, "
                "found in the prefix cache when the previous turn is done."
            ),
        )
        if turns > 1:
            prefix["session_turns"] = int(turns)
        try:
            if on:
                spec["speculation"] = engine.Speculation(
                    method=method,
                    tokens=None if tokens is None else int(tokens),
                    acceptance=None if acceptance is None else float(acceptance),
                    draft_model=draft if method == "draft" else None,
                )
            if n:
                prefix["prefix"] = engine.Prefix(tokens=int(n), share=float(share))
        except ValueError as exc:
            st.error(plain(exc), icon="🚫")
            spec = {}
            prefix = {k: v for k, v in prefix.items() if k != "prefix"}
    return spec, prefix


def select_llm_id(link: Link, cat: engine.Catalog, *, disabled: bool) -> str:
    """The draft model: a catalogue LLM with shapes."""
    options = sorted(k for k, m in cat.models.items() if getattr(m, "arch", None) is not None)
    key = link.key("draft_model")
    if st.session_state.get(key) not in options:
        st.session_state[key] = link["draft_model"].default
    return st.selectbox(
        _("Draft model"),
        options,
        key=key,
        format_func=lambda k: cat.models[k].name,
        disabled=disabled,
    )
