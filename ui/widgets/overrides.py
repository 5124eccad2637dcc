"""Overrides of a serving profile's assumptions, on the serving pages (/decode, /plan, /load):
one blank number field per assumption (blank: the profile's value, shown
greyed), bound to the link parameter of the same name (ui.links.assumptions.SERVING_OVERRIDES),
so a link between them with a profile edited opens the next page with the same edits.

A custom profile's link carries its own values under these names too: they fill the fields,
and `ui.core.profiles.overridden` keeps only the values that differ from the profile's.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

import engine
from ui.links import state
from ui.links.assumptions import SERVING_OVERRIDES
from ui.links.params import Link
from ui.widgets import pickers as widgets
from ui.words.format import fmt
from ui.words.i18n import N_, _

LABELS = {  # name: (label, step); blank = the profile's value; shown through _()
    "efficiency": (N_("Compute efficiency η (fraction of peak)"), 0.05),
    "bandwidth_efficiency": (N_("Bandwidth efficiency (fraction of peak)"), 0.05),
    "attention_efficiency": (N_("Attention compute efficiency (fraction)"), 0.05),
    "expert_efficiency": (N_("MoE expert compute efficiency (fraction)"), 0.05),
    "link_efficiency": (N_("Interconnect efficiency (fraction of peak)"), 0.05),
    "link_latency_us": (N_("Link latency (µs per hop)"), 1.0),
    "layer_overhead_us": (N_("Layer overhead τ (µs per layer per step)"), 1.0),
    "dispatch_overhead_ms": (N_("Dispatch overhead d (ms per step)"), 0.005),
    "memory_reserve": (N_("Memory reserve (fraction of capacity held back)"), 0.05),
    "dequant_overhead": (
        N_("Dequantisation overhead δ (w4a16 and emulated formats: extra GEMM time)"),
        0.05,
    ),
}


def start_blank(page: str, names: Sequence[str] = SERVING_OVERRIDES) -> None:
    """Before binding: an override the link does not set starts blank (the profile's value),
    not at another page's choice (the whole-model pages' values are edits of the tutorial's
    defaults, not of this page's profile)."""
    in_link = set(state.raw_query())
    for name in names:
        key = state.widget_key(page, name)
        if key not in st.session_state and name not in in_link:
            st.session_state[key] = None


def inputs(
    link: Link, profile: engine.Profile, names: Sequence[str] = SERVING_OVERRIDES
) -> dict[str, float | None]:
    """The override fields in an expander, each blank with the profile's value as its
    placeholder; returns name -> the value set (None: blank, the profile's)."""
    values = profile.values()
    out = {}
    title = _("Assumptions (profile {profile} unless set)").format(profile=profile.name)
    with st.expander(title, expanded=False):
        for name in names:
            label, step = LABELS[name]
            base = values.get(name)
            shown = _("the catalogue's figure") if base is None else fmt(base)
            out[name] = widgets.number_input(
                link,
                name,
                _(label),
                value=None,
                step=step,
                placeholder=_("profile: {value}").format(value=shown),
                format="%.3f",
            )
    return out
