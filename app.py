"""Roofline Explorer: the entry page (overview and links). Pages live in pages/ (file routing)."""

import streamlit as st

from ui.core.frame import PAGES, ROOT, catalog, setup_page, show_catalog_notes

setup_page("Overview")
cat = catalog()
st.title("Roofline Explorer")
st.markdown(
    "Predict where an ML model's performance is bounded on an accelerator — compute or memory "
    "bandwidth — and how far below the roof fixed software overhead keeps it, from first "
    "principles, in milliseconds, with no GPU. Every number comes from the first-order model "
    "of Williams et al. (2009) with the defaults of the MLSys·im *Hello, Roofline* tutorial; "
    "every assumption is on screen and editable, and every scenario is a shareable link."
)
show_catalog_notes(cat)
pages = [p for p in PAGES[1:] if (ROOT / p[0]).exists()]
cols = st.columns(len(pages))
blurbs = {
    "pages/solve.py": "One model × one accelerator: bound, latency split, roofline, MFU.",
    "pages/sweep.py": "Batch sizes from 1 to thousands: crossover, throughput, latency budget "
    "(LLMs: the serving model at your request shape).",
    "pages/compare.py": "2–8 accelerators side by side, rooflines overlaid, speedups "
    "(LLMs: the serving model, and multi-GPU deployments).",
    "pages/decode.py": "LLM serving: KV cache, prefill vs decode, TPOT, capacity.",
    "pages/plan.py": "Size a deployment: SLOs, Pareto fronts, USD per 1M output tokens.",
    "pages/load.py": "Traffic, not batches: continuous batching, rates, tail latency, GPUs.",
    "pages/train.py": "Train an LLM: 3D/4D parallelism, memory, step time, MFU, time and cost.",
    "pages/accuracy.py": "Measured vs predicted: profiles, MAPE, fit your own stack.",
    "pages/learn.py": "The MLSys·im tutorial chain as live lessons, in English and 中文.",
    "pages/catalogue.py": "Every accelerator and model with its figures and sources.",
}
for col, (path, label, icon) in zip(cols, pages, strict=True):
    with col:
        st.page_link(path, label=f"**{label}**", icon=icon)
        st.caption(blurbs[path])
st.caption(
    f"{len(cat.hardware)} accelerators and {len(cat.models)} models in the catalogue. "
    "Conventions: GB = 10⁹ bytes, GiB = 2³⁰ bytes, dense peak FLOP/s."
)
