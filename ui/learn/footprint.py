"""The cost lessons' experiments: 7 "Geography is a systems variable" (engine.footprint and
engine.tco of one 256-H100 cluster in four grids) and 8 "The $9M question" (engine.serve's time
per chain-of-thought query, the replicas 100 queries/s need, engine.tco of a year of them)."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

import engine
from ui.charts.lines import Series, stacked_bars_figure
from ui.core.downloads import download_csv
from ui.learn.content import Outcome
from ui.links.params import Link
from ui.widgets.footprint import power_formula
from ui.widgets.pickers import number_input
from ui.words.data_text import said
from ui.words.format import fmt
from ui.words.i18n import _

GRIDS = ("Quebec", "Norway", "US_Avg", "Poland")  # the chapter's four
GPUS, DAYS = 256, 30  # 32 DGX H100 for 30 days


def _cluster(days: float) -> engine.Usage:
    return engine.Usage("H100", GPUS, days * 24.0)


def geography_rows(days: float, carbon_price: float) -> pd.DataFrame:
    """One row per grid: engine.footprint and engine.tco of the cluster (unit-bearing names)."""
    own = engine.Ownership(carbon_usd_per_tco2e=carbon_price)
    rows = []
    for g in GRIDS:
        fp, cost = engine.footprint(_cluster(days), g), engine.tco(_cluster(days), own, g)
        rows.append(
            {
                "grid": g,
                "carbon_g_per_kwh": fp["carbon_g_per_kwh"],
                "pue": fp["pue"],
                "energy_mwh": fp["energy_mwh"],
                "carbon_tco2e": fp["carbon_tco2e"],
                "water_m3": fp["water_m3"],
                "owned_usd": cost["total_usd"] - cost["carbon_usd"],
                "carbon_cost_usd": cost["carbon_usd"],
                "total_usd": cost["total_usd"],
                "rental_usd": cost["rental_usd"],
            }
        )
    return pd.DataFrame(rows)


def geography(link: Link, cat) -> Outcome:
    """Lesson 7: the cluster's energy, carbon, water and cost in four grids."""
    a, b = st.columns(2)
    with a:
        days = float(number_input(link, "days", _("Days the cluster runs"), step=5.0))
    with b:
        price = float(number_input(link, "carbon_price", _("Carbon price (USD/tCO2e)"), step=50.0))
    rows = geography_rows(days, price)
    figure = stacked_bars_figure(
        [said(engine.grids()[g].name) for g in GRIDS],
        [Series(_("Carbon"), rows["carbon_tco2e"], "tCO2e")],
        title=_("Carbon of {gpus} H100 for {days} days, by grid").format(gpus=GPUS, days=fmt(days)),
        y_title=_("Carbon (tCO2e)"),
    )
    st.plotly_chart(figure, key="l7")
    shown = pd.DataFrame(
        {
            _("Grid"): [said(engine.grids()[g].name) for g in GRIDS],
            _("Intensity"): [fmt(v, "g/kWh") for v in rows["carbon_g_per_kwh"]],
            _("PUE"): [fmt(v) for v in rows["pue"]],
            _("Energy"): [fmt(v, "MWh") for v in rows["energy_mwh"]],
            _("Carbon"): [fmt(v, "tCO2e") for v in rows["carbon_tco2e"]],
            _("Site water"): [fmt(v, "m³") for v in rows["water_m3"]],
            _("Owned cost"): [fmt(v, "USD") for v in rows["owned_usd"]],
            _("Carbon cost"): [fmt(v, "USD") for v in rows["carbon_cost_usd"]],
            _("Rented"): [fmt(v, "USD") for v in rows["rental_usd"]],
        }
    )
    st.dataframe(shown, hide_index=True, key="l7_table")
    download_csv(rows, "lesson_7_geography.csv", "learn:l7_csv")
    st.caption(
        _(
            "Power per GPU: {formula}, busy all the time (700 W). Energy counts the GPUs only "
            "(no host CPUs or network), times the grid's PUE. Site water = IT energy × WUE; the "
            "power plants' water is not included. Owned cost: engine.tco's defaults (see the "
            "training planner's footprint section)."
        ).format(formula=power_formula())
    )
    return _geography_outcome(rows, days, price)


def _geography_outcome(rows: pd.DataFrame, days: float, price: float) -> Outcome:
    base = geography_rows(DAYS, 50.0).set_index("grid")
    q, p = base.loc["Quebec"], base.loc["Poland"]
    ten = engine.footprint(_cluster(10), "Poland")["carbon_tco2e"]
    fifteen = engine.footprint(_cluster(15), "Poland")["carbon_tco2e"]
    ratio = p["carbon_tco2e"] / q["carbon_tco2e"]
    cheapest = base["total_usd"].idxmin()
    ours = {
        "ratio": fmt(ratio, "×"),
        "intensities": ", ".join(f"{fmt(base.loc[g, 'carbon_g_per_kwh'])}" for g in GRIDS),
        "duration": _("{poland} in 10 days in Poland against {quebec} in 30 in Quebec").format(
            poland=fmt(ten, "tCO2e"), quebec=fmt(q["carbon_tco2e"], "tCO2e")
        ),
        "selfcheck": fmt(fifteen / q["carbon_tco2e"], "×"),
        "price": _("{poland} in Poland, {quebec} in Quebec").format(
            poland=fmt(p["carbon_cost_usd"], "USD"), quebec=fmt(q["carbon_cost_usd"], "USD")
        ),
    }
    values = {
        "intensity_ratio": fmt(820 / 20, "×"),
        "cheapest": said(engine.grids()[cheapest].name),
        "share": fmt(100 * p["carbon_cost_usd"] / p["total_usd"], "%"),
    }
    answers = {
        "which": 1.0 if ten > q["carbon_tco2e"] else 0.0,
        "fifteen": fifteen,
        "pue_even": 2.0,  # facility energy = IT × PUE; the overhead (PUE − 1) equals IT at 2.0
    }
    query = {"grid": "Poland", "carbon_price": fmt(price).replace(",", "")}
    command = (
        f"python -m engine footprint --hardware H100 --gpus {GPUS} --days {days:g} "
        f"--grid Poland --carbon-usd-per-tco2e {price:g} --format table"
    )
    return Outcome(
        ours=ours,
        values=values,
        answers=answers,
        pages=[(_("Training planner"), "pages/train.py", query)],
        command=command,
    )


MODEL_BIG, MODEL_SMALL = "Llama-3.1-405B", "Llama-3.1-70B"
TUTORIAL = engine.TUTORIAL_PROFILE  # the lesson's numbers are the tutorial profile's
BIG = {"tp": 8, "precision": "fp8"}  # 405 GB of fp8 weights: one 8-GPU node per replica
SMALL = {"tp": 4, "precision": "fp16"}  # 140 GB of fp16 weights on 4 H100
STEPS = (1, 4, 8, 16)  # the chapter's K
TOKENS_PER_STEP, PROMPT = 50, 2048  # the chapter's self-check: 50 tokens a step; its context
HOURS_PER_YEAR = 8760.0


def query_s(model: str, layout: dict, k: int) -> float:
    """One query at batch 1: the prompt's prefill, then K steps of 50 tokens (engine.serve)."""
    r = engine.serve(
        model,
        "H100",
        batch_size=1,
        input_tokens=PROMPT,
        output_tokens=k * TOKENS_PER_STEP,
        profile=TUTORIAL,
        **layout,
    )
    return r["e2e_latency_ms"] / 1e3


def fleet(qps: float, seconds: float, tp: int) -> tuple[int, engine.Usage]:
    """Replicas for `qps` queries/s each `seconds` long at one query at a time, and a year of
    their GPUs, busy the share demand ÷ replicas."""
    replicas = max(math.ceil(qps * seconds), 1)
    busy = min(qps * seconds / replicas, 1.0)
    usage = engine.Usage("H100", replicas * tp, HOURS_PER_YEAR, utilisation=busy)
    return replicas, usage


def reasoning_rows(qps: float) -> pd.DataFrame:
    """One row per K: the query's time, the multiplier, replicas, GPUs and a year's cost."""
    rows = []
    for k in STEPS:
        t = query_s(MODEL_BIG, BIG, k)
        replicas, usage = fleet(qps, t, BIG["tp"])
        cost = engine.tco(usage, grid="US_Avg")
        rows.append(
            {
                "k": k,
                "query_s": t,
                "replicas": replicas,
                "gpus": usage.devices,
                "owned_usd_per_year": cost["total_usd"],
                "rental_usd_per_year": cost["rental_usd"],
                "owned_usd_per_query": cost["total_usd"] / (qps * HOURS_PER_YEAR * 3600.0),
            }
        )
    out = pd.DataFrame(rows)
    out.insert(2, "multiplier", out["query_s"] / out["query_s"].iloc[0])
    return out


def routed(qps: float, hard_share: float) -> dict:
    """The 70/30 split: easy queries to the small model at K = 1, hard ones to the big one at
    K = 8, each on a fleet of its own (replicas of 4 and of 8 GPUs)."""
    parts = []
    for model, layout, k, share in (
        (MODEL_SMALL, SMALL, 1, 1 - hard_share),
        (MODEL_BIG, BIG, 8, hard_share),
    ):
        if share <= 0:
            continue
        _, usage = fleet(qps * share, query_s(model, layout, k), layout["tp"])
        parts.append((usage.devices, engine.tco(usage, grid="US_Avg")["total_usd"]))
    return {"gpus": sum(p[0] for p in parts), "owned_usd_per_year": sum(p[1] for p in parts)}


def reasoning(link: Link, cat) -> Outcome:
    """Lesson 8: a year of serving chain-of-thought queries at K = 1 … 16, and routing."""
    a, b = st.columns(2)
    with a:
        qps = float(number_input(link, "qps", _("Queries per second"), step=10.0))
    with b:
        hard = float(number_input(link, "hard_share", _("Share routed to reasoning"), step=0.1))
    rows = reasoning_rows(qps)
    figure = stacked_bars_figure(
        [f"K = {k}" for k in rows["k"]],
        [Series(_("Owned cost per year"), rows["owned_usd_per_year"], "USD")],
        title=_("A year of {qps} queries/s: {model} on H100").format(qps=fmt(qps), model=MODEL_BIG),
        y_title=_("USD per year"),
    )
    st.plotly_chart(figure, key="l8")
    shown = pd.DataFrame(
        {
            _("Reasoning steps K"): [str(k) for k in rows["k"]],
            _("Time per query"): [fmt(v, "s") for v in rows["query_s"]],
            _("× K = 1"): [fmt(v, "×") for v in rows["multiplier"]],
            _("GPUs"): [fmt(v) for v in rows["gpus"]],
            _("Owned, per year"): [fmt(v, "USD") for v in rows["owned_usd_per_year"]],
            _("Rented, per year"): [fmt(v, "USD") for v in rows["rental_usd_per_year"]],
        }
    )
    st.dataframe(shown, hide_index=True, key="l8_table")
    download_csv(rows, "lesson_8_reasoning.csv", "learn:l8_csv")
    mix = routed(qps, hard)
    st.markdown(
        _(
            "**Routed:** {easy} of the queries to {small} at K = 1 (4 H100 a replica), {hard} "
            "to {big} at K = 8: {gpus} GPUs, {cost} a year."
        ).format(
            easy=fmt(100 * (1 - hard), "%"),
            hard=fmt(100 * hard, "%"),
            small=MODEL_SMALL,
            big=MODEL_BIG,
            gpus=fmt(mix["gpus"]),
            cost=fmt(mix["owned_usd_per_year"], "USD"),
        )
    )
    st.caption(
        _(
            "Each replica serves one query at a time (batch 1), as the chapter does: a query is "
            "the {prompt}-token prompt's prefill, then K steps of {step} tokens "
            "(engine.serve). Owned cost: engine.tco's defaults, US-average grid; rented: the "
            "catalogue's list price."
        ).format(prompt=fmt(PROMPT), step=TOKENS_PER_STEP)
    )
    return _reasoning_outcome(rows, qps, hard)


def _reasoning_outcome(rows: pd.DataFrame, qps: float, hard: float) -> Outcome:
    base = rows if qps == 100 else reasoning_rows(100.0)
    by_k = base.set_index("k")
    mix = routed(100.0, 0.3)
    k8 = by_k.loc[8]
    first = engine.serve(
        MODEL_BIG,
        "H100",
        batch_size=1,
        input_tokens=PROMPT,
        output_tokens=2,
        profile=TUTORIAL,
        **BIG,
    )
    tpot, ttft = first["tpot_ms"], first["ttft_ms"]
    ours = {
        "multiplier": fmt(k8["multiplier"], "×"),
        "annual": _("{k1} to {k8}").format(
            k1=fmt(by_k.loc[1, "owned_usd_per_year"], "USD"),
            k8=fmt(k8["owned_usd_per_year"], "USD"),
        ),
        "routing": _("{gpus} GPUs, {cost} a year ({saved} less than all at K = 8)").format(
            gpus=fmt(mix["gpus"]),
            cost=fmt(mix["owned_usd_per_year"], "USD"),
            saved=fmt(100 * (1 - mix["owned_usd_per_year"] / k8["owned_usd_per_year"]), "%"),
        ),
        "selfcheck": fmt(8 * TOKENS_PER_STEP * tpot / 1e3, "s"),
    }
    values = {
        "tpot": fmt(tpot / 1e3, "s"),
        "ttft_share": fmt(100 * ttft / 1e3 / by_k.loc[1, "query_s"], "%"),
        "gpus_k8": fmt(k8["gpus"]),
    }
    answers = {
        "k16": 0.0 if by_k.loc[16, "multiplier"] < 16 else 1.0,
        "gpus8": float(k8["gpus"]),
    }
    query = {"model": MODEL_BIG, "hardware": "H100", "tp": "8", "precisions": "fp8"}
    query |= {"input_tokens": str(PROMPT), "output_tokens": str(8 * TOKENS_PER_STEP)}
    query |= {"target_rate": f"{qps:g}", "profile": TUTORIAL}
    command = (
        f"python -m engine serve --model {MODEL_BIG} --hardware H100 --tp 8 --precision fp8 "
        f"--batch-size 1 --input-tokens {PROMPT} --output-tokens {8 * TOKENS_PER_STEP} "
        f"--profile {TUTORIAL} --format table"
    )
    return Outcome(
        ours=ours,
        values=values,
        answers=answers,
        pages=[(_("Serving planner"), "pages/plan.py", query)],
        command=command,
    )
