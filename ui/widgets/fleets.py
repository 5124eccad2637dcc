"""Aggregated against disaggregated serving on the same GPUs: the pair, its simulations and its
table, shared by /load (the sidebar's workers and TPs) and /plan (the best deployment as two
replicas against one prefill and one decode worker of its TP).

The aggregated side is the deployment as replicas on the disaggregated side's GPU count behind
the same router (engine.Replicas); the disaggregated side is prefill and decode workers of the
deployment at their own tp (engine.Disaggregated). Both are simulated by engine.serve_load on
one open-loop workload; the one meeting the p90 TTFT and p99 TPOT SLOs with the higher goodput
is picked (docs/model.md, "Replicas, routers and disaggregated serving").
"""

from __future__ import annotations

import dataclasses

import pandas as pd

import engine
from ui.runtime import memo
from ui.words import tables
from ui.words.i18n import N_, _
from ui.words.tables import YES_NO
from ui.words.text import plain

ROUTER_LABELS = {
    "round-robin": N_("round robin"),
    "least-outstanding": N_("least outstanding requests"),
    "prefix-aware": N_("prefix-aware (least outstanding without a shared prefix)"),
}
TABLE = {  # column: (header, unit (None: as it is; YES_NO: true or false), factor)
    "deployment": (N_("Deployment"), None, 1.0),
    "devices": (N_("GPUs"), None, 1.0),
    "ttft_ms_p90": (N_("TTFT p90"), "s", 1e-3),
    "ttft_ms_p99": (N_("TTFT p99"), "s", 1e-3),
    "tpot_ms_p99": (N_("TPOT p99"), "s", 1e-3),
    "kv_transfer_ms_mean": (N_("KV transfer (mean)"), "s", 1e-3),
    "output_tokens_per_s": (N_("Output tokens/s"), "", 1.0),
    "goodput_requests_per_s": (N_("Goodput (requests/s)"), "", 1.0),
    "meets_slo": (N_("Meets the SLOs"), YES_NO, 1.0),
    "picked": (N_("Picked"), YES_NO, 1.0),
}
# the runs' results, shared by every session (the heavy pages' pool: ui/runtime/memo.py)
SIMULATED = memo.Shared(entries=16, max_bytes=16 * 2**20, idle_s=60.0, pool=memo.HEAVY_BYTES)


def pair(d: engine.Deployment, chosen: dict):
    """(aggregated Replicas, Disaggregated) on the same GPUs from `chosen` (prefill_workers,
    decode_workers, prefill_tp, decode_tp, router); ValueError, in the reader's language, when
    the aggregated replicas cannot fill the disaggregated GPU count."""
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


def events(fleets, w: engine.Workload, sched: engine.Scheduler | None) -> int:
    """An upper bound of the events both runs take (engine.fleet_events)."""
    return sum(engine.fleet_events(f, w, scheduler=sched) for f in fleets)


def compare_within(fleets, how: tuple, w: engine.Workload, slo: engine.SLO) -> pd.DataFrame:
    """`compare`, once both runs are bounded within the page's budget; `how`: (the scheduler,
    the budget in events, what to do when over it, translated). ValueError, in the reader's
    language, when over it (nothing is simulated)."""
    sched, budget, narrow = how
    total = events(fleets, w, sched)
    if total > budget:
        raise ValueError(
            _(
                "The two runs would take up to {events} events, more than this page's budget "
                "of {budget}: {narrow}"
            ).format(events=f"{total:,}", budget=f"{budget:,}", narrow=narrow)
        )
    return compare(fleets, sched=sched, w=w, slo=slo)


@memo.cached(SIMULATED)
def simulate(fleet, sched: engine.Scheduler | None, w: engine.Workload, slo: engine.SLO):
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


def compare(fleets, sched, w: engine.Workload, slo: engine.SLO) -> pd.DataFrame:
    """Both fleets simulated on `w`, as `rows`."""
    return rows([(label(f), simulate(fleet=f, sched=sched, w=w, slo=slo)) for f in fleets], slo)


def table(df: pd.DataFrame) -> pd.DataFrame:
    """The comparison's columns of TABLE under readable headers, numbers formatted."""
    return tables.table(df, TABLE)
