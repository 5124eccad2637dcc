"""Serving under load: an LLM deployment serving a stream of requests with continuous batching.

Latency (p50, p90, p99 TTFT and TPOT) and throughput and goodput against the request rate,
one run's timeline, the highest rate meeting the SLOs and the replicas and cost for a target
rate, each with the profile's measured error (docs/model.md, "Serving under load"); or one run
of an uploaded trace (ui/load/trace.py)."""

import streamlit as st

import engine
from ui.charts import bands
from ui.core import frame, profiles
from ui.links import state
from ui.links.assumptions import SERVING_OVERRIDES
from ui.load import fleet as lf
from ui.load import run as lr
from ui.load import show
from ui.load import trace as lt
from ui.load import view as lv
from ui.load.inputs import (
    deployment_inputs,
    plan_inputs,
    scheduler_inputs,
    slo_inputs,
    technique_inputs,
    workload_inputs,
)
from ui.load.link import PAGE, declare
from ui.widgets import overrides as overrides_ui
from ui.widgets import page_links, scenario
from ui.widgets import pickers as widgets
from ui.widgets import profile as pk
from ui.widgets.cards import cards
from ui.widgets.model_config import CONFIG_ID, select_llm
from ui.words.i18n import N_, _
from ui.words.text import plain

frame.setup_page(N_("Serving under load"))

# --- inputs -----------------------------------------------------------------
base = frame.catalog()
custom, profile_notes = pk.from_link(PAGE)
link = declare(base, custom)
profile_notes += pk.unused_values(link)
overrides_ui.start_blank(PAGE)
s = scenario.start(link, base)
cat = s.cat
with s.pickers:
    model_id, model, config_text = select_llm(link, cat)
    hw_id = widgets.select_entry(
        link=link, name="hardware", label=_("Accelerator"), entries=dict(cat.hardware)
    )
    dep = deployment_inputs(link, custom)
    profile = engine.get_profile(dep["profile"])
    edits = profiles.overridden(overrides_ui.inputs(link, profile), profile)
    chosen = scheduler_inputs(link, dep["profile"])
    st.markdown(_("**Workload**"))
    work = workload_inputs(link)
    upload = lt.trace_input(link, work)
    spec, prefix = technique_inputs(link, cat)
    st.markdown(_("**SLOs** (per request: goodput; percentiles: the max rate)"))
    slo = slo_inputs(link)
    st.markdown(_("**Plan**"))
    price, target = plan_inputs(link, cat.hardware[hw_id])
    chosen_fleet = lf.fleet_inputs(link, dep["tp"])
shared = ("model", "precision", "custom_hw", "custom_model")
profile_values = profiles.link_values(profile, skip=SERVING_OVERRIDES, keys=engine.PROFILE_KEYS)
query = state.publish(link, {"model_config": config_text or None} | profile_values, shared)
to_plan = profile_values | edits | {"model": model_id, "hardware": hw_id, "price": price}
to_plan |= {"input_tokens": work["input_tokens"], "output_tokens": work["output_tokens"]}
to_plan |= {"slo_ttft_ms_p90": slo.ttft_ms, "slo_tpot_ms_p99": slo.tpot_ms, "target_rate": target}
to_plan |= {k: query.get(k) for k in ("custom_hw", "custom_model")}

# --- engine -----------------------------------------------------------------
fallback = model is None  # config.json chosen, none valid yet
model = model or cat.models["Llama-3.1-8B"]
hw = lr.priced(cat.hardware[hw_id], price)
sched = engine.Scheduler(**chosen)
st.title(
    _("{model} on {hardware}: serving under load").format(
        model=plain(model.name), hardware=plain(hw.name)
    )
)
try:
    d = engine.Deployment(model, hw, **dep, **spec, overrides=edits)  # ep ∤ tp: refused here
    w = lr.workload(work, prefix)
except ValueError as exc:
    st.error(plain(exc), icon="🚫")
    frame.share_link(PAGE, query)
    st.stop()
st.caption(plain(lv.caption(d=d, w=w, mode=work["mode"], hw_name=hw.name, model_name=model.name)))
if fallback:
    st.warning(_("No valid config.json yet: showing Llama-3.1-8B."), icon="📄")
scenario.show_notes(s)
frame.show_param_warnings(profile_notes)
if s.custom_model:
    st.info(_("The custom-model editor's models have no shapes: paste a config.json instead."))
try:
    lr.check(d)
    stack = engine.load_scheduler(d.profile, **sched.as_dict())
    grid = None if work["mode"] == "trace" else lr.curve(d=d, sched=sched, w=w, slo=slo)
except ValueError as exc:
    st.error(
        _("The serving model refused this deployment: {error}").format(error=plain(exc)), icon="🚫"
    )
    frame.share_link(PAGE, query)
    st.stop()
band = bands.note(
    profile, arch=model.arch, hardware=hw_id, precision=d.precision, edited=bool(edits)
)
show.notes(d=d, sched=stack, band=band, arch=model.arch)
if work["mode"] == "trace":  # one run of the file's requests: no rate sweep
    lt.results(d=d, sched=sched, w=w, upload=upload, slo=slo, band=band, names=(model_id, hw_id, d))
    if model_id != CONFIG_ID:  # the planner takes the catalogue's models
        page_links.plan_link(to_plan)
    show.footer(page=PAGE, query=query, hw=hw, model=model)
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

# --- render: the fast path's curves first, then what the simulator adds ---------
head = st.container()  # the budget's refusal or the simulations' progress, then the cards
slots = show.chart_slots()
refused = lr.refusal_of(d=d, sched=sched, w=w, top=top)
marks = {"knee": None, "saturation": top, "chosen": w.rate_per_s}
show.charts(slots, grid=grid, pts=None, slo=slo, marks=marks, band=band, d=d, final=bool(refused))
r = pts = m = None
with head:
    if refused:
        st.error(refused, icon="⏱️")
    else:
        r, pts, m, error = lr.simulate_all(d=d, sched=sched, w=w, slo=slo, top=top, target=target)
        if error:
            st.error(
                _("The simulator refused this workload: {error}").format(error=plain(error)),
                icon="🚫",
            )
    if r is not None:
        show.fit_and_warnings(r)
    cards(lv.headline(m, r, band))
    if m is not None and m.max_rate_per_s <= 0:
        st.warning(lv.no_rate_words(m))
if not refused:
    served = r["requests_per_s"] if r is not None else None
    marks |= {"knee": m.max_rate_per_s if m is not None else None, "chosen": w.rate_per_s or served}
    show.charts(slots, grid=grid, pts=pts, slo=slo, marks=marks, band=band, d=d, final=True)
    show.timeline(r, lv.run_title(w), where=slots.timeline)
if d.speculation is not None:
    plain_grid = lr.without_speculation(d=d, sched=sched, w=w, slo=slo, rates=grid["rate_per_s"])
    show.speculation(grid, plain_grid, band=band, names=(model_id, hw_id, d))
# the tables wait for a click: a table in the first render loads the data grid's code before
# the first chart paints (bench/first_chart_results.json)
tables = frame.lazy_expander(_(show.TABLES_TITLE), frame.section_key(PAGE, "tables"))
if tables is not None:
    with tables:
        show.tables(grid=grid, pts=pts, r=r, m=m, band=band, names=(model_id, hw_id, d))
lf.section(d=d, w=w, slo=slo, how=(sched, chosen_fleet, band))
show.trace_download(r, run=(d, sched, w, slo), names=(model_id, hw_id, d))
if model_id != CONFIG_ID:  # the planner takes the catalogue's models
    page_links.plan_link(to_plan)
show.footer(page=PAGE, query=query, hw=hw, model=model)
