"""Serving under load: an LLM deployment serving a stream of requests with continuous batching.

Latency (p50, p90, p99 TTFT and TPOT) and throughput and goodput against the request rate,
one run's timeline, the highest rate meeting the SLOs and the replicas and cost for a target
rate, each with the profile's measured error (docs/model.md, "Serving under load"); or one run
of an uploaded trace (ui/load/trace.py)."""

import streamlit as st

import engine
from ui.core import frame, state
from ui.core.i18n import N_, _
from ui.core.text import plain
from ui.load import run as lr
from ui.load import show
from ui.load import trace as lt
from ui.load import view as lv
from ui.load.inputs import (
    deployment_inputs,
    plan_inputs,
    scheduler_inputs,
    slo_inputs,
    workload_inputs,
)
from ui.load.link import PAGE, declare
from ui.widgets import pickers as widgets
from ui.widgets import scenario
from ui.widgets.cards import cards
from ui.widgets.model_config import select_llm

frame.setup_page(N_("Serving under load"))

# --- inputs -----------------------------------------------------------------
base = frame.catalog()
link = declare(base)
s = scenario.start(link, base)
cat = s.cat
with s.pickers:
    model_id, model, config_text = select_llm(link, cat)
    hw_id = widgets.select_entry(link, "hardware", _("Accelerator"), dict(cat.hardware))
    dep = deployment_inputs(link)
    chosen = scheduler_inputs(link, dep["profile"])
    st.markdown(_("**Workload**"))
    work = workload_inputs(link)
    upload = lt.trace_input(link, work)
    st.markdown(_("**SLOs** (per request: goodput; percentiles: the max rate)"))
    slo = slo_inputs(link)
    st.markdown(_("**Plan**"))
    price, target = plan_inputs(link, cat.hardware[hw_id])
shared = ("model", "precision", "custom_hw", "custom_model")
query = state.publish(link, {"model_config": config_text or None}, shared)

# --- engine -----------------------------------------------------------------
fallback = model is None  # config.json chosen, none valid yet
model = model or cat.models["Llama-3.1-8B"]
hw = lr.priced(cat.hardware[hw_id], price)
overrides = tuple((k, v) for k, v in chosen.items() if v is not None)
d = lr.Deploy(model, hw, scheduler=overrides, **dep)
w = lr.Workload(**work)
st.title(
    _("{model} on {hardware}: serving under load").format(
        model=plain(model.name), hardware=plain(hw.name)
    )
)
st.caption(plain(lv.caption(d, w, hw.name, model.name)))
if fallback:
    st.warning(_("No valid config.json yet: showing Llama-3.1-8B."), icon="📄")
scenario.show_notes(s)
if s.custom_model:
    st.info(_("The custom-model editor's models have no shapes: paste a config.json instead."))
try:
    lr.check(d)
    sched = engine.load_scheduler(d.profile, **dict(overrides))
    grid = None if w.mode == "trace" else lr.curve(d, w, slo)
except ValueError as exc:
    st.error(
        _("The serving model refused this deployment: {error}").format(error=plain(exc)), icon="🚫"
    )
    frame.share_link(PAGE, query)
    st.stop()
band = engine.error_band(engine.get_profile(d.profile))
show.notes(d, sched, band, model.arch)
if w.mode == "trace":  # one run of the file's requests: no rate sweep
    lt.results(d, upload, slo, band, (model_id, hw_id, d))
    show.footer(PAGE, query, hw, model)
    st.stop()
for note in grid.attrs.get("skipped", []):
    st.warning(plain(note), icon="⚠️")
top = lr.saturation(grid)
if not bool(grid["fits_in_memory"].iloc[0]):
    st.error(
        _(
            "Does not fit: the weights leave no room for a KV cache on each device. Use more "
            "devices (TP or PP), a smaller precision, or an accelerator with more memory."
        ),
        icon="🚫",
    )
    frame.share_link(PAGE, query)
    st.stop()

refused = lr.refusal(lr.events(d, w, top), w)
r = pts = m = None
if refused:
    st.error(refused, icon="⏱️")
else:
    r, pts, m, error = lr.simulate_all(d, w, slo, top, target)
    if error:
        st.error(
            _("The simulator refused this workload: {error}").format(error=plain(error)),
            icon="🚫",
        )
if r is not None:
    fit = [x for x in r.warnings if x.startswith(lr.NO_FIT)]
    if fit:
        st.error(f"{plain(fit[0]).capitalize()}.", icon="🚫")
    frame.show_engine_warnings(x for x in r.warnings if x not in fit)
cards(lv.headline(m, r, band))
if m is not None and m.max_rate_per_s <= 0:
    st.warning(_("Even a trickle of requests misses the SLOs: relax them, or serve faster."))

chosen_rate = w.rate if w.mode == "open" else (r["requests_per_s"] if r is not None else None)
knee = m.max_rate_per_s if m is not None else None
marks = {"knee": knee, "saturation": top, "chosen": chosen_rate}
show.charts(grid, pts, r, slo, marks, band, d, lv.run_title(w))
show.tables(grid, pts, r, m, band, (model_id, hw_id, d))
show.footer(PAGE, query, hw, model)
