"""Aggregated against disaggregated serving on the same GPUs, side by side (/load).

The sidebar's inputs (`fleet_inputs`, link parameters fleet, prefill_workers, prefill_tp,
decode_workers, decode_tp, router) name a disaggregated deployment (engine.Disaggregated:
prefill and decode workers of the page's deployment at their own tp); the aggregated one is
the page's deployment as replicas on the same number of GPUs behind the same router
(engine.Replicas). Both are simulated by engine.serve_load on the page's open-loop workload
(its rate, at most CHECK_REQUESTS requests), within the page's budget (engine.fleet_events);
the table shows each side's figures, and the one meeting the p90 TTFT and p99 TPOT SLOs with
the higher goodput is picked (docs/model.md, "Replicas, routers and disaggregated serving").
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

import engine
from ui.core.downloads import download_csv
from ui.links.params import Link
from ui.load import run as lr
from ui.load import view as lv
from ui.load.inputs import ON_OFF_LABELS
from ui.load.link import ON_OFF
from ui.runtime import memo
from ui.widgets.pickers import number_input
from ui.words.format import fmt
from ui.words.i18n import N_, _
from ui.words.text import plain

ROUTER_LABELS = {
    "round-robin": N_("round robin"),
    "least-outstanding": N_("least outstanding requests"),
    "prefix-aware": N_("prefix-aware (least outstanding without a shared prefix)"),
}
TABLE = {  # column: (header, unit (None: as it is), factor)
    "deployment": (N_("Deployment"), None, 1.0),
    "devices": (N_("GPUs"), None, 1.0),
    "ttft_ms_p90": (N_("TTFT p90"), "s", 1e-3),
    "ttft_ms_p99": (N_("TTFT p99"), "s", 1e-3),
    "tpot_ms_p99": (N_("TPOT p99"), "s", 1e-3),
    "kv_transfer_ms_mean": (N_("KV transfer (mean)"), "s", 1e-3),
    "output_tokens_per_s": (N_("Output tokens/s"), "", 1.0),
    "goodput_requests_per_s": (N_("Goodput (requests/s)"), "", 1.0),
    "meets_slo": (N_("Meets the SLOs"), lv.YES_NO, 1.0),
    "picked": (N_("Picked"), lv.YES_NO, 1.0),
}


def fleet_inputs(link: Link, tp: int) -> dict | None:
    """The comparison's inputs (None: switched off); blank tp fields are the page's tp."""
    with st.expander(_("Aggregated or disaggregated, same GPUs"), expanded=False):
        on = st.selectbox(
            _("Compare with disaggregated prefill/decode"),
            ON_OFF,
            key=link.key("fleet"),
            format_func=lambda v: _(ON_OFF_LABELS[v]),
        )
        left, right = st.columns(2)
        pw = number_input(link, "prefill_workers", _("Prefill workers"), where=left, step=1)
        dw = number_input(link, "decode_workers", _("Decode workers"), where=right, step=1)
        shown = _("page: {value}").format(value=tp)
        pt = number_input(
            link, "prefill_tp", _("Prefill TP"), where=left, value=None, step=1, placeholder=shown
        )
        dt = number_input(
            link, "decode_tp", _("Decode TP"), where=right, value=None, step=1, placeholder=shown
        )
        router = st.selectbox(
            _("Router"),
            engine.ROUTERS,
            key=link.key("router"),
            format_func=lambda r: _(ROUTER_LABELS[r]),
        )
    if on != "on":
        return None
    return {
        "prefill_workers": int(pw),
        "decode_workers": int(dw),
        "prefill_tp": int(pt) if pt is not None else tp,
        "decode_tp": int(dt) if dt is not None else tp,
        "router": router,
    }


def fleets(d: engine.Deployment, chosen: dict):
    """(aggregated Replicas, Disaggregated) on the same GPUs; ValueError when the aggregated
    replicas cannot fill the disaggregated GPU count."""
    dis = engine.Disaggregated(
        prefill=dataclasses.replace(d, tp=chosen["prefill_tp"]),
        decode=dataclasses.replace(d, tp=chosen["decode_tp"]),
        prefill_workers=chosen["prefill_workers"],
        decode_workers=chosen["decode_workers"],
        router=chosen["router"],
    )
    replicas, rest = divmod(dis.devices, d.devices)
    if rest or not replicas:
        raise ValueError(
            _(
                "The disaggregated workers use {gpus} GPUs, not a whole number of the page's "
                "{each}-GPU replicas: change the workers or their TP."
            ).format(gpus=dis.devices, each=d.devices)
        )
    try:
        return engine.Replicas(d, replicas, chosen["router"]), dis
    except ValueError as exc:
        raise ValueError(
            _("The same GPUs as aggregated replicas: {error}").format(error=plain(exc))
        ) from None


@memo.cached(lr.SIMULATED)
def simulate(fleet, sched: engine.Scheduler, w: engine.Workload, slo: engine.SLO):
    """One fleet on the workload (engine.serve_load)."""
    return engine.serve_load(fleet, w, scheduler=sched, slo=slo)


def label(fleet) -> str:
    if isinstance(fleet, engine.Replicas):
        return _("Aggregated: {n} × TP{tp}").format(n=fleet.replicas, tp=fleet.deployment.tp)
    return _("Disaggregated: {p} × TP{a} prefill + {d} × TP{b} decode").format(
        p=fleet.prefill_workers, a=fleet.prefill.tp, d=fleet.decode_workers, b=fleet.decode.tp
    )


def rows(results: list[tuple[str, object]], slo: engine.SLO) -> pd.DataFrame:
    """One row per deployment: the engine's keys, whether it meets the SLOs, which is picked."""
    out = []
    for name, r in results:
        meets = bool(r["fits_in_memory"])
        meets &= slo.ttft_ms is None or r["ttft_ms_p90"] <= slo.ttft_ms
        meets &= slo.tpot_ms is None or r["tpot_ms_p99"] <= slo.tpot_ms
        values = {k: v for k, v in r.values.items() if not isinstance(v, dict | list)}
        out.append({"deployment": name} | values | {"meets_slo": meets})
    df = pd.DataFrame(out)
    best = df["goodput_requests_per_s"].where(df["meets_slo"]).fillna(-1.0)
    df["picked"] = df["meets_slo"] & (best == best.max())
    return df


def section(d: engine.Deployment, w: engine.Workload, slo: engine.SLO, how: tuple) -> None:
    """The side-by-side table, or why it is not shown; `how`: (the scheduler, the inputs of
    `fleet_inputs`, the profile's error band)."""
    sched, chosen, band = how
    if chosen is None:
        return
    st.subheader(_("Aggregated or disaggregated, same GPUs"))
    if w.mode != "open":
        st.info(_("The comparison runs on open-loop arrivals: choose the open-loop workload."))
        return
    at = dataclasses.replace(w, requests=lr.sim_requests(w))
    try:
        pair = fleets(d, chosen)
        events = sum(engine.fleet_events(f, at, scheduler=sched) for f in pair)
        if events > lr.BUDGET_EVENTS:
            raise ValueError(
                _(
                    "The two runs would take up to {events} events, more than this page's budget "
                    "of {budget}: lower the requests or the tokens."
                ).format(events=f"{events:,}", budget=f"{lr.BUDGET_EVENTS:,}")
            )
        results = [(label(f), simulate(fleet=f, sched=sched, w=at, slo=slo)) for f in pair]
    except ValueError as exc:
        st.error(plain(exc), icon="🚫")
        return
    df = rows(results, slo)
    st.caption(
        _(
            "Both at {rate} requests/s, {requests} requests, the {router} router; picked: the "
            "one meeting p90 TTFT and p99 TPOT with the higher goodput. KV transfer: the mean "
            "time a prompt's cache adds to its first token."
        ).format(
            rate=fmt(w.rate_per_s, ""),
            requests=f"{at.requests:,}",
            router=_(ROUTER_LABELS[chosen["router"]]),
        )
    )
    st.dataframe(lv.table(df, TABLE), key="load_fleet_table", hide_index=True)
    if not df["picked"].any():
        st.info(_("Neither meets the SLOs at this rate."))
    download_csv(
        df=lv.csv_frame(df, band),
        filename="load_aggregated_vs_disaggregated.csv",
        key="load_fleet_csv",
    )
