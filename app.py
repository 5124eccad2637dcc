"""Roofline Explorer: the entry page (overview and links). Pages live in pages/ (file routing)."""

import streamlit as st

from ui.core.frame import PAGES, ROOT, catalog, setup_page, show_catalog_notes
from ui.words.i18n import N_, _

setup_page("Overview")
cat = catalog()
st.title(_("Roofline Explorer"))
st.markdown(
    _(
        "Predict where an ML model's performance is bounded on an accelerator — compute or "
        "memory bandwidth — and how far below the roof fixed software overhead keeps it, from "
        "first principles, in milliseconds, with no GPU. Every number comes from the "
        "first-order model of Williams et al. (2009) with the defaults of the MLSys·im *Hello, "
        "Roofline* tutorial; every assumption is on screen and editable, and every scenario is "
        "a shareable link."
    )
)
show_catalog_notes(cat)
pages = [p for p in PAGES[1:] if (ROOT / p[0]).exists()]
CARD_PX = 260  # a page card's width (ten in one row cut "Hardware comparison" short)
blurbs = {
    "pages/solve.py": N_("One model × one accelerator: bound, latency split, roofline, MFU."),
    "pages/sweep.py": N_(
        "Batch sizes from 1 to thousands: crossover, throughput, latency budget "
        "(LLMs: the serving model at your request shape)."
    ),
    "pages/compare.py": N_(
        "2–8 accelerators side by side, rooflines overlaid, speedups "
        "(LLMs: the serving model, and multi-GPU deployments)."
    ),
    "pages/decode.py": N_("LLM serving: KV cache, prefill vs decode, TPOT, capacity."),
    "pages/plan.py": N_("Size a deployment: SLOs, Pareto fronts, USD per 1M output tokens."),
    "pages/load.py": N_("Traffic, not batches: continuous batching, rates, tail latency, GPUs."),
    "pages/train.py": N_("Train an LLM: 3D/4D parallelism, memory, step time, MFU, time and cost."),
    "pages/accuracy.py": N_("Measured vs predicted: profiles, MAPE, fit your own stack."),
    "pages/learn.py": N_("The MLSys·im tutorial chain as live lessons, in English and 中文."),
    "pages/catalogue.py": N_("Every accelerator and model with its figures and sources."),
}
with st.container(horizontal=True):  # cards of a fixed width that wrap: whole at any width
    for path, label, icon in pages:
        with st.container(width=CARD_PX):
            st.page_link(path, label=f"**{_(label)}**", icon=icon)
            st.caption(_(blurbs[path]))
st.caption(
    _(
        "{hardware} accelerators and {models} models in the catalogue. "
        "Conventions: GB = 10⁹ bytes, GiB = 2³⁰ bytes, dense peak FLOP/s."
    ).format(hardware=len(cat.hardware), models=len(cat.models))
)
