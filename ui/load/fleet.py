"""Aggregated against disaggregated serving on the same GPUs, side by side (/load; the pair,
its runs and its table: ui/widgets/fleets.py).

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

import streamlit as st

import engine
from ui.core.downloads import download_csv
from ui.links.params import Link
from ui.load import run as lr
from ui.load import view as lv
from ui.load.inputs import ON_OFF_LABELS
from ui.load.link import ON_OFF
from ui.widgets import fleets
from ui.widgets.pickers import number_input
from ui.words.format import fmt
from ui.words.i18n import _
from ui.words.text import plain


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
            format_func=lambda r: _(fleets.ROUTER_LABELS[r]),
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
        how = (sched, lr.BUDGET_EVENTS, _("lower the requests or the tokens."))
        df = fleets.compare_within(fleets.pair(d, chosen), how=how, w=at, slo=slo)
    except ValueError as exc:
        st.error(plain(exc), icon="🚫")
        return
    st.caption(
        _(
            "Both at {rate} requests/s, {requests} requests, the {router} router; picked: the "
            "one meeting p90 TTFT and p99 TPOT with the higher goodput. KV transfer: the mean "
            "time a prompt's cache adds to its first token."
        ).format(
            rate=fmt(w.rate_per_s, ""),
            requests=f"{at.requests:,}",
            router=_(fleets.ROUTER_LABELS[chosen["router"]]),
        )
    )
    st.dataframe(fleets.table(df), key="load_fleet_table", hide_index=True)
    if not df["picked"].any():
        st.info(_("Neither meets the SLOs at this rate."))
    download_csv(
        df=lv.csv_frame(df, band),
        filename="load_aggregated_vs_disaggregated.csv",
        key="load_fleet_csv",
    )
