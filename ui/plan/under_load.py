"""The planner's "Under load" section: every deployment the planner considers, served with
continuous batching at the request's lengths, ranked by what a target traffic costs.

The engine's fast path (`engine.load_plan`: the analytic steady state, one vectorised pass)
gives each deployment its saturation rate, the highest rate one replica sustains with p90 TTFT
and p99 TPOT within the planner's SLOs (its TTFT SLO as the p90 one; its TPOT SLO, and a floor
of tokens/s per user as TPOT ≤ 1000 / floor ms, as the p99 one), the replicas ⌈target ÷ max
rate⌉, their GPUs and USD per 1M output tokens at the target. The best row can then be checked
by the simulator (`engine.max_rate`, bisection on simulated runs) behind a button, its work
bounded beforehand by the engine's estimate (`engine.max_rate_events`) as /load bounds its
own, and opened on /load, or on /load's side-by-side of it as two replicas against one prefill
and one decode worker (`fleet_link`). docs/model.md, "Serving under load".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import streamlit as st

import engine
from ui.charts import bands
from ui.core.budget import LOAD_EVENTS
from ui.core.downloads import NO_RERUN, download_csv
from ui.links.params import Link
from ui.widgets import fleets, page_links
from ui.widgets import pickers as widgets
from ui.widgets.pickers import split_words
from ui.words.format import fmt, fmt_all, missing
from ui.words.i18n import _, message_text, ngettext
from ui.words.text import plain

MAX_DEPLOYMENTS = 2_000  # deployments per fast-path pass on this page (~4 s at most)
BUDGET_EVENTS = LOAD_EVENTS  # simulated events for the check (/load's budget)
SIM_REQUESTS = 1000  # requests per simulated run of the check (the engine's search default)
MIN_REQUESTS = 100
TABLE_ROWS = 100
SIM_KEY = "plan:load_check"  # session key: the last simulator check (its scenario, result)


def target_input(link: Link) -> float:
    """The target traffic to plan replicas for (sidebar; the link's `target_rate`)."""
    value = widgets.number_input(
        link,
        "target_rate",
        _("Target traffic under load (requests/s)"),
        step=1.0,
        help=_(
            "Requests per second to serve with continuous batching: the section Under load "
            "gives the replicas of each deployment and their cost at this rate."
        ),
    )
    return float(link["target_rate"].default if value is None else value)


def slos(ttft_ms: float | None, tpot_ms: float | None, floor: float | None) -> engine.SLO:
    """The planner's SLOs as percentile SLOs: TTFT as p90, TPOT (and the floor of tokens/s
    per user, as TPOT ≤ 1000 / floor ms) as p99; None: not applied."""
    limits = [v for v in (tpot_ms, None if not floor else 1000.0 / floor) if v is not None]
    return engine.SLO(ttft_ms=ttft_ms, tpot_ms=min(limits) if limits else None)


@dataclasses.dataclass(frozen=True)
class Ask:
    """Everything the fast path depends on, hashable (it keys the cache): the grid (catalogue
    ids; the page's catalogue resolves them), the deployments the planner considers in it, the
    traffic and the SLOs."""

    grid: engine.Deployments
    allowed: frozenset  # (hardware, tp, pp, precision, ep, attention DP) the planner considers
    traffic: engine.Traffic
    slo: engine.SLO
    prices: tuple  # ((hardware id, USD per hour or None), ...)

    @property
    def deployments(self) -> int:
        return len(self.allowed)

    @property
    def model_id(self) -> str:
        return self.grid.models[0]

    @property
    def input_tokens(self) -> int:
        return self.traffic.input_tokens[0]

    @property
    def output_tokens(self) -> int:
        return self.traffic.output_tokens[0]

    @property
    def target(self) -> float:
        return self.traffic.target_rate


def ask(model_id: str, groups: Sequence, tokens, opts, slo: engine.SLO, prices, target) -> Ask:
    """The planner's groups (ui.plan.grid.Group) as one fast-path grid."""
    allowed = frozenset(
        (h, t, p, q, g.ep, g.attention_dp)
        for g in groups
        for h in g.hardware
        for t in g.tp
        for p in g.pp
        for q in g.precisions
    )
    hardware = tuple(dict.fromkeys(h for g in groups for h in g.hardware))
    axes = [tuple(sorted({v for g in groups for v in getattr(g, a)})) for a in ("tp", "pp")]
    precisions = tuple(dict.fromkeys(q for g in groups for q in g.precisions))
    grid = engine.Deployments.of(
        models=(model_id,),
        hardware=hardware,
        tp=axes[0],
        pp=axes[1],
        ep=tuple(sorted({g.ep for g in groups})),
        attention_dp=tuple(sorted({g.attention_dp for g in groups})),
        precisions=precisions,
        **dict(opts),
    )
    traffic = engine.Traffic(input_tokens=tokens[0], output_tokens=tokens[1], target_rate=target)
    priced = tuple((h, prices.get(h)) for h in hardware)
    return Ask(grid=grid, allowed=allowed, traffic=traffic, slo=slo, prices=priced)


def resolved(grid: engine.Deployments, cat) -> engine.Deployments:
    """The grid with its ids looked up in the page's catalogue (custom entries included)."""
    return dataclasses.replace(
        grid,
        models=tuple(cat.models[m] for m in grid.models),
        hardware=tuple(cat.hardware[h] for h in grid.hardware),
    )


# the caches key on the ask's exact text: a custom profile in it holds read-only mappings,
# which Streamlit's own hashing (a deep copy) cannot take
HASH = {Ask: repr}


@st.cache_resource(max_entries=4, show_spinner=False, hash_funcs=HASH)
def fast_path(_cat, _key: tuple, a: Ask) -> pd.DataFrame:
    """engine.load_plan over the planner's deployments (read-only rows, kept for reruns)."""
    df = engine.load_plan(
        resolved(a.grid, _cat), traffic=a.traffic, slo=a.slo, prices=dict(a.prices)
    )
    return ranked(df[allowed_rows(df, a, prefix="")])


def allowed_rows(df: pd.DataFrame, a: Ask, prefix: str) -> np.ndarray:
    """Which rows' layout (hardware, {prefix}tp, {prefix}pp, precision, {prefix}ep,
    {prefix}attention_dp) the planner considers (the grid spans more: its axes' product)."""
    columns = ["hardware", f"{prefix}tp", f"{prefix}pp", "precision", f"{prefix}ep"]
    columns.append(f"{prefix}attention_dp")
    keys = zip(*(df[c] for c in columns), strict=True)
    return np.fromiter(
        (
            (str(h), int(t), int(p), str(q), int(e), bool(d)) in a.allowed
            for h, t, p, q, e, d in keys
        ),
        dtype=bool,
        count=len(df),
    )


def computed(spinner: str, compute):
    """`compute()` behind a spinner; None, with the refusal shown, when the load model refuses
    the grid."""
    try:
        with st.spinner(spinner):
            return compute()
    except ValueError as exc:
        st.error(_("The load model refused this grid: {error}").format(error=plain(exc)))
        return None


def ranked(df: pd.DataFrame) -> pd.DataFrame:
    """Deployments that serve within the SLOs first, by USD per 1M output tokens at the
    target (unpriced last), then by GPUs, then the highest max rate per replica."""
    served = df["max_rate_per_s"].to_numpy() > 0
    return (
        df.assign(_served=served)
        .sort_values(
            ["_served", "cost_per_million_output_tokens_usd", "gpus", "max_rate_per_s"],
            ascending=[False, True, True, False],
            na_position="last",
            kind="stable",
        )
        .drop(columns="_served")
        .reset_index(drop=True)
    )


def table_columns() -> dict:
    """column: (on-screen header, ui.words.format unit or None (as is), factor to that unit)."""
    cost = _("Cost at the target (USD per 1M output tokens)")
    tokens = _("Output tokens/s per replica at max rate")
    return {
        "cost_per_million_output_tokens_usd": (cost, "", 1.0),
        "hardware": (_("Accelerator"), None, 1.0),
        "precision": (_("Precision"), None, 1.0),
        "tp": (_("TP"), None, 1.0),
        "pp": (_("PP"), None, 1.0),
        "ep": (_("EP"), None, 1.0),
        "replicas": (_("Replicas"), "", 1.0),
        "gpus": (_("GPUs"), "", 1.0),
        "max_rate_per_s": (_("Max rate per replica (requests/s)"), "", 1.0),
        "saturation_rate_per_s": (_("Saturation rate (requests/s)"), "", 1.0),
        "output_tokens_per_s_per_replica": (tokens, "", 1.0),
        "ttft_ms_p90": (_("p90 TTFT at max rate"), "s", 1e-3),
        "tpot_ms_p99": (_("p99 TPOT at max rate"), "s", 1e-3),
    }


def display_table(table: pd.DataFrame, names: Mapping[str, str], band, rows: int = TABLE_ROWS):
    """The first `rows` deployments, ranked, under readable headers, with the error band."""
    top = table.head(rows)
    out = {_("Rank"): np.arange(1, len(top) + 1)}
    for column, (header, unit, factor) in table_columns().items():
        values = top[column].to_numpy()
        if column == "hardware":
            values = [names.get(str(h), str(h)) for h in values]
        elif unit is not None:
            values = fmt_all(values.astype(float) * factor, unit)
        out[header] = values
    out[_("Typical error")] = [
        bands.short(b) for b in bands.row_bands(band.profile, top["precision"])
    ]
    off = bands.ground_column(
        profile=band.profile, arch=band.arch, hardware=top["hardware"], precision=top["precision"]
    )
    out[_("Off the profile's calibrated ground")] = [bands.reasons_text(o) for o in off]
    out[_("Why no max rate")] = [
        message_text(r) if isinstance(r, engine.Message) else "—" for r in top["reason"]
    ]
    return pd.DataFrame(out)


CSV_FIRST = (
    "cost_per_million_output_tokens_usd",
    "hardware",
    "precision",
    "tp",
    "pp",
    "devices",
    "replicas",
    "gpus",
    "max_rate_per_s",
    "saturation_rate_per_s",
    "target_rate_per_s",
)
CSV_NAMES = {  # every column name ends in its unit
    "replicas": "replicas_count",
    "gpus": "gpus_count",
    "devices": "devices_count",
    "tp": "tp_degree",
    "pp": "pp_degree",
}


def csv_frame(table: pd.DataFrame, band) -> pd.DataFrame:
    """Every deployment, ranked: the plan's columns first, then the rest of load_plan's, the
    profile and the error band's columns (error_band_pct, error_band_basis,
    off_calibrated_ground); unit-bearing names."""
    rest = [c for c in table.columns if c not in CSV_FIRST]
    out = table[list(CSV_FIRST) + rest].assign(profile=table.attrs.get("profile", ""))
    return band.columns(out).rename(columns=CSV_NAMES)


def csv_text(table: pd.DataFrame, band) -> str:
    return engine.to_csv(csv_frame(table, band))


def sim_requests(input_tokens: int, max_batched_tokens: int) -> int | None:
    """Requests per simulated run of the check within BUDGET_EVENTS (at most SIM_REQUESTS, at
    least MIN_REQUESTS; None: even that is over the budget)."""
    n = SIM_REQUESTS
    while n >= MIN_REQUESTS:
        if engine.max_rate_events(input_tokens, max_batched_tokens, requests=n) <= BUDGET_EVENTS:
            return n
        n //= 2
    return None


@st.cache_resource(max_entries=8, show_spinner=False, hash_funcs=HASH)
def simulate(_cat, _key: tuple, a: Ask, row: tuple, requests: int, _progress=None):
    """engine.max_rate for one deployment (hardware, tp, pp, precision, ep, attention DP), with
    the target; `_progress(done, total)` told after each simulated run. In this process (one
    worker): the server's cores are its users'."""
    search = engine.RateSearch(target_rate=a.target)
    run_on = engine.Execution(workers=1, progress=_progress)
    work = _workload(a, requests=requests, rate=None)
    dep = _deployment(_cat, a, row)
    return engine.max_rate(dep, work, slo=a.slo, search=search, execution=run_on)


def _deployment(cat, a: Ask, row: tuple) -> engine.Deployment:
    """One deployment of the grid (hardware, tp, pp, precision, ep, attention DP), at the
    page's price for its accelerator."""
    hw_id, tp, pp, precision, ep, attention_dp = row
    hw, price = cat.hardware[hw_id], dict(a.prices).get(hw_id)
    hw = dataclasses.replace(hw, price_per_hour_usd=price if price else None)
    g = a.grid
    return engine.Deployment(
        model=cat.models[a.model_id],
        hardware=hw,
        tp=tp,
        pp=pp,
        ep=ep,
        attention_dp=attention_dp,
        precision=precision,
        kv_precision=g.kv_precision,
        profile=g.profile,
        assumptions=g.assumptions,
        overrides=g.overrides,
    )


def _workload(a: Ask, requests: int, rate: float | None) -> engine.Workload:
    """The page's requests, open-loop at `rate` (None: the rate a search sets)."""
    return engine.Workload(
        input_tokens=a.input_tokens,
        output_tokens=a.output_tokens,
        arrivals=engine.OpenLoop(rate, burstiness=a.traffic.burstiness),
        requests=requests,
    )


def _same_gpus(cat, a: Ask, row: tuple, m, how: tuple) -> None:
    """The best deployment as two replicas against one prefill and one decode worker of its
    TP (the same GPUs), both simulated at twice its max rate (the traffic two replicas are
    sized for), the one meeting the SLOs with the higher goodput picked; with its CSV. `how`:
    (the requests per run, the profile's error band)."""
    requests, band = how
    st.subheader(_("Aggregated or disaggregated, same GPUs"))
    d = _deployment(cat, a, row)
    chosen = {"prefill_workers": 1, "decode_workers": 1, "prefill_tp": d.tp, "decode_tp": d.tp}
    chosen |= {"router": "least-outstanding"}
    w = _workload(a, requests=requests, rate=2.0 * m.max_rate_per_s)
    try:
        how = (None, BUDGET_EVENTS, _("open the deployment on /load."))
        df = fleets.compare_within(fleets.pair(d, chosen), how=how, w=w, slo=a.slo)
    except ValueError as exc:
        st.error(plain(exc), icon="🚫")
        return
    st.caption(
        _(
            "Both at twice the simulator's max rate, {rate} requests/s ({requests} requests, the "
            "{router} router), on {gpus} GPUs each; picked: the one meeting p90 TTFT and p99 TPOT "
            "with the higher goodput. KV transfer: the mean time a prompt's cache adds to its "
            "first token."
        ).format(
            rate=fmt(w.rate_per_s),
            requests=f"{w.requests:,}",
            router=_(fleets.ROUTER_LABELS[chosen["router"]]),
            gpus=f"{int(df['devices'].iloc[0]):,}",
        )
    )
    st.dataframe(fleets.table(df), key="plan_fleet_table", hide_index=True)
    if not df["picked"].any():
        st.info(_("Neither meets the SLOs at this rate."))
    out = fleet_csv_frame(df, band=band, profile=a.grid.profile)
    download_csv(df=out, filename="plan_aggregated_vs_disaggregated.csv", key="plan_fleet_csv")


def fleet_csv_frame(df: pd.DataFrame, band, profile: str) -> pd.DataFrame:
    """The side by side's CSV: both runs' figures (the engine's keys), whether each meets the
    SLOs and which is picked, the profile and the error band's columns; unit-bearing names."""
    return band.columns(df.assign(profile=profile)).rename(columns=CSV_NAMES)


def _best_words(row: pd.Series, names: Mapping[str, str], target: float) -> str:
    what = _("{devices}× {hw} (TP {tp}, PP {pp}{split}, {precision})").format(
        devices=int(row["devices"]),
        hw=names.get(str(row["hardware"]), str(row["hardware"])),
        tp=int(row["tp"]),
        pp=int(row["pp"]),
        split=split_words(int(row["ep"]), bool(row["attention_dp"])),
        precision=row["precision"],
    )
    replicas, gpus = int(row["replicas"]), int(row["gpus"])
    fleet = ngettext("{n} replica", "{n} replicas", replicas).format(n=fmt(replicas))
    fleet += " " + ngettext("({n} GPU)", "({n} GPUs)", gpus).format(n=fmt(gpus))
    values = {"what": what, "rate": fmt(row["max_rate_per_s"], "requests/s"), "fleet": fleet}
    values |= {"target": fmt(target, "requests/s")}
    cost = row["cost_per_million_output_tokens_usd"]
    if missing(cost):
        text = _("{what}: {rate} per replica within the SLOs; {fleet} for {target} (no price).")
        return text.format(**values)
    text = _(
        "{what}: {rate} per replica within the SLOs; {fleet} for {target}, at {cost} per 1M "
        "output tokens."
    )
    return text.format(**values, cost=fmt(cost, "USD"))


def _check_table(row: pd.Series, m) -> pd.DataFrame:
    """The fast path's figures beside the simulator's for the best deployment."""
    plan = m.plan or {}
    sim = {
        "rate": m.max_rate_per_s,
        "replicas": plan.get("replicas"),
        "cost": plan.get("cost_per_million_output_tokens_usd"),
    }
    devices = float(row["devices"])
    labels = {
        "rate": _("Max rate per replica (requests/s)"),
        "replicas": _("Replicas for the target"),
        "gpus": _("GPUs"),
        "cost": _("Cost at the target (USD per 1M output tokens)"),
    }
    gpus = None if sim["replicas"] is None else sim["replicas"] * devices
    fast = [row["max_rate_per_s"], row["replicas"], row["gpus"]]
    fast.append(row["cost_per_million_output_tokens_usd"])
    return pd.DataFrame(
        {
            _("Figure"): list(labels.values()),
            _("Fast path (analytic)"): fmt_all(fast),
            _("Simulator (engine.max_rate)"): fmt_all(
                [sim["rate"], sim["replicas"], gpus, sim["cost"]]
            ),
        }
    )


def section(cat, key: tuple, a: Ask, names: Mapping[str, str], band, query: Mapping):
    """Draw the section (in its expander, after the static-batch ranking); returns the best
    deployment under load (None: none serves)."""
    st.caption(
        _(
            "Continuous batching (the profile's scheduler) at {target}, Poisson arrivals, "
            "{n_in} input + {n_out} output tokens per request. SLOs: the planner's TTFT as the "
            "p90 TTFT ({ttft}) and its TPOT (with the tokens/s per user floor) as the p99 TPOT "
            "({tpot}). Max rate: the highest rate one replica sustains within them by the "
            "analytic fast path; replicas = ⌈target ÷ max rate⌉; cost = replicas × devices × "
            "price ÷ output tokens per hour at the target × 10⁶ (docs/model.md, 'Serving "
            "under load')."
        ).format(
            target=fmt(a.target, "requests/s"),
            n_in=fmt(a.input_tokens),
            n_out=fmt(a.output_tokens),
            ttft=_("none") if a.slo.ttft_ms is None else fmt(a.slo.ttft_ms * 1e-3, "s"),
            tpot=_("none") if a.slo.tpot_ms is None else fmt(a.slo.tpot_ms * 1e-3, "s"),
        )
    )
    if a.deployments > MAX_DEPLOYMENTS:
        st.warning(
            _(
                "{n} deployments: this section computes at most {top} (fewer accelerators, TP "
                "or PP degrees or precisions)."
            ).format(n=fmt(a.deployments), top=fmt(MAX_DEPLOYMENTS)),
            icon="🚫",
        )
        return
    table = computed(
        _("Serving every deployment under load (fast path)…"), lambda: fast_path(cat, key, a)
    )
    if table is None:
        return
    served = table[table["max_rate_per_s"].to_numpy() > 0]
    if served.empty:
        st.warning(
            _(
                "No deployment sustains any rate within these SLOs under load: relax them, or "
                "add devices (TP/PP) or faster accelerators."
            ),
            icon="⛔",
        )
    else:
        best = served.iloc[0]
        words = plain(_best_words(best, names, a.target))
        st.markdown(_("**Best under load:** {words}").format(words=words))
    st.caption(plain(bands.sentence(band.note(), _("Every figure of this section"))))
    st.dataframe(display_table(table, names, band), key="plan_load_table", hide_index=True)
    shown = min(len(table), TABLE_ROWS)
    st.caption(
        _(
            "{served} of {n} deployments sustain a rate within the SLOs; the first {shown} are "
            "shown. The CSV has every deployment, ranked, with the reason a deployment has no "
            "max rate, the prices, the profile and the error band."
        ).format(served=fmt(len(served)), n=fmt(len(table)), shown=fmt(shown))
    )
    name = f"plan_load_{a.model_id}_{len(table)}deployments.csv"
    csv = lambda: csv_text(table, band)  # noqa: E731  (written only when clicked)
    st.download_button(
        _("Download CSV"), csv, name, "text/csv", key="plan_load_csv", icon="⬇️", on_click=NO_RERUN
    )
    if served.empty:
        return
    _check(cat=cat, key=key, a=a, best=served.iloc[0], query=query, band=band)
    return served.iloc[0]


def footprint_usage(best: pd.Series | None, a: Ask | None) -> tuple[engine.Usage | None, str]:
    """The best deployment under load for a year at the target (None while the section is
    closed, nothing serves, or no target is given), and the sentence saying what is counted."""
    if best is None or a is None:
        return None, _(
            "Open the section 'Under load: replicas and cost for your traffic': this one counts "
            "its best deployment for a year at the target rate."
        )
    try:
        usage = engine.plan_usage(best.to_dict())
    except ValueError:  # no target rate: nothing runs for a year
        return None, _("Give a target rate to count the footprint and cost of ownership.")
    what = _(
        "The best deployment for a year: {gpus} GPUs serving {target}, busy {busy} of the time."
    ).format(
        gpus=fmt(usage.devices),
        target=fmt(a.target, "requests/s"),
        busy=fmt(100 * usage.utilisation, "%"),
    )
    return usage, what


def _check(cat, key: tuple, a: Ask, best: pd.Series, query: Mapping, band) -> None:
    """The simulator's check of the best deployment (a button; its work bounded first), and
    the link to /load for it."""
    row = (str(best["hardware"]), int(best["tp"]), int(best["pp"]), str(best["precision"]))
    row += (int(best["ep"]), bool(best["attention_dp"]))
    profile = a.grid.profile
    budget = engine.load_scheduler(profile).max_batched_tokens
    n = sim_requests(a.input_tokens, budget)
    events = 0 if n is None else engine.max_rate_events(a.input_tokens, budget, requests=n)
    longer = engine.RateSearch().confirm_count(n or 1)  # requests per confirmation run
    scenario = (key, a, row, n)
    done = st.session_state.get(SIM_KEY)
    if n is None:
        st.caption(
            _(
                "The simulator's check would take more than this page's budget of {budget} "
                "events at {n_in} input tokens: open the deployment on /load."
            ).format(budget=fmt(BUDGET_EVENTS), n_in=fmt(a.input_tokens))
        )
    elif st.button(
        _("Check the best deployment with the simulator"),
        key="plan_load_check",
        help=_(
            "engine.max_rate: bisection on simulated runs of {n} requests each (at most {runs} "
            "runs), from the fast path's bracket, then its answer confirmed on {seeds} seeds of "
            "{longer} requests each, 5 % lower a round until every run meets the SLOs (at most "
            "{rounds} rounds); about {events} events at most."
        ).format(
            n=fmt(n),
            runs=fmt(engine.MAX_RATE_RUNS),
            seeds=fmt(engine.RateSearch().confirm_seeds),
            longer=fmt(longer),
            rounds=fmt(engine.MAX_RATE_CONFIRM_ROUNDS),
            events=fmt(events),
        ),
    ):
        bar = st.progress(0.0, text=_("Simulating…"))

        def progress(runs: int, most: int) -> None:
            text = _("Simulated {runs} of at most {most} runs").format(
                runs=fmt(runs), most=fmt(most)
            )
            bar.progress(min(runs / most, 1.0), text=text)

        try:
            result = simulate(_cat=cat, _key=key, a=a, row=row, requests=n, _progress=progress)
            done = (scenario, result)
        except ValueError as exc:
            done = (scenario, str(exc))
        bar.empty()
        st.session_state[SIM_KEY] = done
    if done is not None and done[0] == scenario:
        result = done[1]
        if isinstance(result, str):
            st.error(
                _("The simulator refused this deployment: {error}").format(error=plain(result))
            )
        else:
            st.dataframe(_check_table(best, result), key="plan_load_sim", hide_index=True)
            st.caption(
                _(
                    "The simulator's max rate: p90 TTFT and p99 TPOT measured on {n} simulated "
                    "requests per rate tried ({tried} rates; the fast path brackets them), then "
                    "on {confirmations} confirmation runs of {longer} requests; {bisection} "
                    "requests/s before the confirmation."
                ).format(
                    n=fmt(n),
                    tried=fmt(len(result.tried)),
                    confirmations=fmt(len(result.confirmations)),
                    longer=fmt(longer),
                    bisection=fmt(result.bisection_rate_per_s),
                )
            )
            if result.max_rate_per_s > 0:
                _same_gpus(cat=cat, a=a, row=row, m=result, how=(n, band))
    to_load = dict(query) | {"hardware": row[0], "tp": row[1], "pp": row[2]}
    to_load |= {"precision": row[3], "ep": row[4], "attention_dp": row[5], "target_rate": a.target}
    to_load |= {"slo_ttft_ms_p90": a.slo.ttft_ms, "slo_tpot_ms_p99": a.slo.tpot_ms}
    price = dict(a.prices).get(row[0])
    to_load |= {"price": price if price else None}
    page_links.load_link(to_load, _("Serve the best deployment under load on /load"))
    fleet_link(to_load, tp=row[1], rate=float(best["max_rate_per_s"]))


def fleet_link(to_load: Mapping, tp: int, rate: float) -> None:
    """A link to /load's side-by-side of the best deployment as two replicas and as one
    prefill and one decode worker of the same TP (the same GPUs), at twice its max rate: the
    traffic two replicas sustain within the SLOs (ui/load/fleet.py picks per SLO there)."""
    fleet = {"fleet": "on", "prefill_workers": "1", "decode_workers": "1"}
    fleet |= {"prefill_tp": str(tp), "decode_tp": str(tp), "router": "least-outstanding"}
    fleet |= {"mode": "open", "rate": f"{2 * rate:.6g}"}
    st.page_link(
        page_links.LOAD_PAGE,
        label=_("Compare it with disaggregated prefill/decode on the same GPUs (/load)"),
        icon=":material/call_split:",
        query_params=page_links.load_query(to_load) | fleet,
        help=_(
            "Two replicas against one prefill and one decode worker, each simulated at twice "
            "this deployment's max rate; /load picks the one meeting the SLOs."
        ),
    )
