"""The serving-under-load page's sidebar: the deployment, the profile's scheduler (shown, each
value editable), the workload, the SLOs and the plan. Each widget is bound to its share-link
parameter (key `load:<name>`, ui/load/link.py); number fields take their ranges from it."""

from __future__ import annotations

import streamlit as st

import engine
from ui.core.format import fmt
from ui.core.i18n import N_, _
from ui.core.params import Link
from ui.load.link import KV_CHOICES, MODE_LABELS, MODES, ON_OFF
from ui.widgets.pickers import number_input, select_precision

SCHEDULER_LABELS = {  # name: (label, translated where shown; step)
    "max_num_seqs": (N_("max_num_seqs (sequences per step)"), 1),
    "max_batched_tokens": (N_("max_batched_tokens (new tokens per step)"), 256),
    "block_size": (N_("block_size (tokens per KV block)"), 16),
}
ON_OFF_LABELS = {"on": N_("on"), "off": N_("off")}


def deployment_inputs(link: Link) -> dict:
    """TP, PP, precision, KV precision and the profile."""
    left, right = st.columns(2)
    tp = number_input(link, "tp", _("TP (tensor-parallel devices)"), where=left)
    pp = number_input(link, "pp", _("PP (pipeline stages)"), where=right)
    precision = select_precision(link)
    kv = st.selectbox(
        _("KV-cache precision"),
        KV_CHOICES,
        key=link.key("kv_precision"),
        format_func=lambda v: (
            _("same as weights ({precision})").format(precision=precision) if v == "same" else v
        ),
    )
    names = engine.profile_names()
    key = link.key("profile")
    if st.session_state.get(key) not in names:
        st.session_state[key] = link["profile"].default
    profile = st.selectbox(
        _("Profile (assumptions and the stack's scheduler)"),
        names,
        key=key,
        format_func=lambda n: f"{n}: {engine.get_profile(n).description}"[:90],
        help=_("A serving stack's fitted assumptions and its scheduler defaults (docs/model.md)."),
    )
    return {
        "tp": int(tp),
        "pp": int(pp),
        "precision": precision,
        "kv_precision": None if kv == "same" else kv,
        "profile": profile,
    }


def scheduler_inputs(link: Link, profile: str) -> dict:
    """The profile's scheduler, each value shown and editable (blank: the profile's)."""
    base = engine.load_scheduler(profile)
    out = {}
    title = _("Scheduler: {stack} defaults unless set").format(stack=base.stack)
    with st.expander(title, expanded=False):
        st.caption(
            _("Profile {profile}: {release}. Blank fields keep its value.").format(
                profile=profile, release=base.release
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


def slo_inputs(link: Link) -> tuple[float, float]:
    """p90 TTFT and p99 TPOT limits (ms)."""
    left, right = st.columns(2)
    ttft = number_input(link, "slo_ttft_ms_p90", _("p90 TTFT ≤ (ms)"), where=left, step=100.0)
    tpot = number_input(link, "slo_tpot_ms_p99", _("p99 TPOT ≤ (ms)"), where=right, step=5.0)
    return float(ttft), float(tpot)


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
