"""Planner: which accelerators, TP/PP, batch and precision serve an LLM within its SLOs, and at
what cost. One vectorised serve_sweep over the grid → Pareto fronts of output tokens/s per GPU
against tokens/s per user, the configurations that meet the SLOs ranked by USD per 1M output
tokens, the cheapest and the fastest in words (docs/model.md, "Serving model")."""

from functools import partial

import streamlit as st

import engine
from ui.charts import bands
from ui.core import frame, profiles
from ui.core.downloads import NO_RERUN
from ui.links import state
from ui.links.assumptions import SERVING_OVERRIDES
from ui.plan import cost_front, disaggregated
from ui.plan import figures as fp
from ui.plan import grid as pg
from ui.plan import inputs as pp
from ui.plan import under_load as pl
from ui.plan import view as pv
from ui.plan.link import NONE, PAGE, declare
from ui.widgets import footprint, page_links, scenario
from ui.widgets import overrides as overrides_ui
from ui.widgets import profile as pk
from ui.words.i18n import N_, _, message_text
from ui.words.text import plain

frame.setup_page("Planner")


# --- inputs -----------------------------------------------------------------
base = frame.catalog()
custom, profile_notes = pk.from_link(PAGE)
link = declare(base, custom)
profile_notes += pk.unused_values(link)
overrides_ui.start_blank(PAGE)
s = scenario.start(link, base)
cat = s.cat
llms = {i: m for i, m in cat.models.items() if getattr(m, "arch", None) is not None}
with s.pickers:
    model_id, tokens = pp.workload_inputs(link, llms)
    st.markdown(_("**SLOs**"))
    slo = pv.Slo(**pp.slo_inputs(link))
    target = pl.target_input(link)
    grid = pp.grid_inputs(link, cat)
    chosen = {h: cat.hardware[h] for h in grid["hardware"]}
    prices = pp.price_inputs(chosen)
    profile = pp.profile_input(custom)
    overrides = overrides_ui.inputs(link, profile)

# --- engine -----------------------------------------------------------------
model = cat.models[model_id]
groups, skipped = pg.plan(
    model_id=model_id,
    arch=model.arch,
    hardware=chosen,
    tps=grid["tp"],
    pps=grid["pp"],
    precisions=grid["precisions"],
    moe=(grid["ep"], grid["attention_dp"]),
)
rows = pg.row_count(groups, grid["batches"])
set_values = profiles.overridden(overrides, profile)
chosen_profile = profile.name if profile.origin == "built-in" else profile  # a custom one whole
opts = tuple({"profile": chosen_profile, **set_values}.items())
df, error = None, None
if 0 < rows <= pg.MAX_CONFIGURATIONS:
    key = (frame.catalog_key(), s.custom_hw)  # the catalogue in use, the custom accelerator
    args = (model_id, tuple(groups), tuple(grid["batches"]), tokens, opts)
    try:
        df = pp.sweep(cat, key, *args)
    except ValueError as exc:  # e.g. a request longer than the engine accepts
        error = str(exc)
table = pv.ranked(pg.screen(df), slo, prices) if df is not None else None
band = pg.Band(
    profile=profile,
    arch=model.arch,
    hardware=tuple(chosen),
    precisions=tuple(grid["precisions"]),
    edited=bool(set_values),
)
values = {"tp": grid["tp"], "pp": grid["pp"], "ep": grid["ep"], "batches": grid["batches"]}
values |= {"attention_dp": ["on" if on else "off" for on in grid["attention_dp"]]}
values |= {name: NONE if v is None else v for name, v in slo.fields().items()}
values |= profiles.link_values(profile, skip=SERVING_OVERRIDES, keys=engine.PROFILE_KEYS)
query = state.publish(link, values | {"prices": prices or None}, ("model",))

# --- render -----------------------------------------------------------------
names = {h: hw.name for h, hw in chosen.items()}
st.title(_("Planner: {model}").format(model=plain(model.name)))
st.caption(
    pv.scope(rows=rows, accelerators=len(chosen), grid=grid, tokens=tokens, profile=profile.name)
)
scenario.show_notes(s)
frame.show_param_warnings(profile_notes)
if s.custom_model:
    st.info(_("Custom models are not offered here: they have no attention shapes (heads, layers)."))
for note in skipped:
    st.caption(_("Left out: {note}").format(note=plain(note)))
if error or rows > pg.MAX_CONFIGURATIONS or df is None:
    if error:
        text = _("The serving model refused this grid: {reason}").format(reason=plain(error))
        st.error(text, icon="🚫")
    elif rows > pg.MAX_CONFIGURATIONS:
        st.error(pv.too_big(rows, pg.MAX_CONFIGURATIONS), icon="🚫")
    else:
        st.warning(_(pv.EMPTY_GRID))
    footprint.section(link, None, _("No plan yet: nothing to count."), key="plan")
    frame.share_link(PAGE, query)
    st.stop()

for warning, n in pg.warning_counts(df):  # per configuration: counted, not one box each
    line = _("⚠️ {n} of {rows} configurations: {warning}")
    st.caption(line.format(n=f"{n:,}", rows=f"{rows:,}", warning=plain(message_text(warning))))
reason = pv.infeasible_reason(table, slo)
if reason:
    st.warning(reason, icon="⛔")
for kind, words in pv.callouts(table, slo, names).items():
    st.markdown(
        _("**{callout}:** {words}").format(callout=_(pv.CALLOUTS[kind]), words=plain(words))
    )
st.caption(plain(bands.sentence(band.note(), _("Every figure here"))))
if max(grid["pp"]) > 1:
    st.caption(pv.pipeline_note(max(grid["pp"])))
if reason is None and table["usd_per_1m_output_tokens"].isna().all():
    st.info(_("No chosen accelerator has a price: set one under Prices to rank by cost."))

title = _("{model}: {input} input + {output} output tokens per request").format(
    model=model.name, input=f"{tokens[0]:,}", output=f"{tokens[1]:,}"
)
png = {"toImageButtonOptions": {"format": "png"}}
fig = bands.shade(fp.pareto_figure(df=table, names=names, slo=slo, title=title), band.note())
st.plotly_chart(fig, key="plan_pareto", config=png)
st.caption(pv.chart_note(slo))

meets = int(table["meets_slo"].sum())
st.caption(
    _(
        "{meets} of {total} configurations meet the SLOs (and fit in memory); the first {shown} "
        "are shown. The CSV has every configuration, ranked, with usd_per_1m_output_tokens (none "
        "for a configuration that does not fit), meets_slo, the verdict, the prices and SLOs "
        "used, the profile and assumptions."
    ).format(meets=f"{meets:,}", total=f"{len(table):,}", shown=f"{min(meets, pg.TABLE_ROWS):,}")
)
csv_name = f"plan_{model_id}_{len(chosen)}hw_{len(table)}configs.csv"
csv = partial(pg.csv_text, df, slo, prices, band)  # written when clicked; holds these, not the page
st.download_button(
    _("Download CSV"), csv, csv_name, "text/csv", key="plan_csv", icon="⬇️", on_click=NO_RERUN
)
if meets:  # the cheapest configuration meeting the SLOs, served under load
    best = {k: table[k].iloc[0] for k in ("hardware", "tp", "pp", "ep", "precision")}
    best["attention_dp"] = bool(table["attention_dp"].iloc[0])
    page_links.load_link(query | best, N_("Serve the cheapest configuration under load"))
# the tables wait for a click: drawn, and computed, only while open (the first chart sooner)
opened = frame.lazy_sections(PAGE, pv.SECTIONS)
if opened["table"] is not None:
    opened["table"].dataframe(pg.display_table(table, names), key="plan_table", hide_index=True)
if opened["cost_front"] is not None:
    front_title = _("Cost against TPOT: {model}").format(model=model.name)
    cost_front.section(opened["cost_front"], table, slo=slo, names=names, title=front_title)
best_load = under_load = None
if opened["load"] is not None:
    slos = pl.slos(slo.ttft_ms, slo.tpot_ms, slo.min_tokens_per_s_per_user)
    under_load = pl.ask(
        model_id=model_id,
        groups=groups,
        tokens=tokens,
        opts=opts,
        slo=slos,
        prices=prices,
        target=target,
    )
    with opened["load"]:
        best_load = pl.section(cat=cat, key=key, a=under_load, names=names, band=band, query=query)
        disaggregated.section(
            cat=cat, key=key, a=under_load, names=names, band=band, best_aggregated=best_load
        )
if opened["prices"] is not None:
    opened["prices"].dataframe(pg.price_table(chosen, prices), key="plan_prices", hide_index=True)
    opened["prices"].caption(_(pv.PRICES_NOTE))
rental = None if best_load is None else best_load["price_per_hour_usd"]  # the planner's price
rental = None if rental is None or rental != rental else float(rental)
footprint.section(link, *pl.footprint_usage(best_load, under_load), key="plan", rental=rental)
frame.share_link(PAGE, query)
sources = " · ".join(frame.source_md(h.name, h.source) for h in chosen.values())
st.caption(
    _("Sources: {model} · {hardware}.").format(
        model=frame.source_md(model.name, model.source), hardware=sources
    )
)
