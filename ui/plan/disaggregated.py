"""The planner's disaggregated candidates: every prefill layout against every decode layout of
the planner's deployments (`engine.load_plan_disaggregated`, the fast path), each side sized
for the target within the SLOs, ranked by cost beside the best aggregated deployment, and the
one to pick per SLO and cost said in words. docs/model.md, "Disaggregated serving on the fast
path".
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import streamlit as st

import engine
from ui.charts import bands
from ui.core.downloads import download_csv
from ui.plan.under_load import HASH, TABLE_ROWS, Ask, allowed_rows, computed, resolved
from ui.widgets.pickers import split_words
from ui.words.format import fmt, fmt_all, missing
from ui.words.i18n import N_, _, message_text
from ui.words.text import plain

MAX_DEPLOYMENTS = 200  # deployments per pass here: every pair of one accelerator and format
CSV_NAMES = {
    "prefill_workers": "prefill_workers_count",
    "decode_workers": "decode_workers_count",
    "gpus": "gpus_count",
    "prefill_devices": "prefill_devices_count",
    "decode_devices": "decode_devices_count",
    "prefill_tp": "prefill_tp_degree",
    "prefill_pp": "prefill_pp_degree",
    "prefill_ep": "prefill_ep_degree",
    "decode_tp": "decode_tp_degree",
    "decode_pp": "decode_pp_degree",
    "decode_ep": "decode_ep_degree",
}


@st.cache_resource(max_entries=4, show_spinner=False, hash_funcs=HASH)
def fast_path(_cat, _key: tuple, a: Ask) -> pd.DataFrame:
    """engine.load_plan_disaggregated over the planner's deployments (both sides among them),
    ranked: pairs that serve first, by cost at the target, then GPUs."""
    df = engine.load_plan_disaggregated(
        resolved(a.grid, _cat), traffic=a.traffic, slo=a.slo, prices=dict(a.prices)
    )
    keep = allowed_rows(df, a, prefix="prefill_") & allowed_rows(df, a, prefix="decode_")
    df = df[keep]
    served = df["max_rate_per_s"].to_numpy() > 0
    order = ["_served", "cost_per_million_output_tokens_usd", "gpus"]
    order.append("cost_per_million_output_tokens_at_max_rate_usd")
    return (
        df.assign(_served=served)
        .sort_values(order, ascending=[False, True, True, True], na_position="last", kind="stable")
        .drop(columns="_served")
        .reset_index(drop=True)
    )


def _layout(row: pd.Series, side: str) -> str:
    return _("TP {tp}, PP {pp}{split}").format(
        tp=int(row[f"{side}_tp"]),
        pp=int(row[f"{side}_pp"]),
        split=split_words(int(row[f"{side}_ep"]), bool(row[f"{side}_attention_dp"])),
    )


def fleet_words(row: pd.Series, names: Mapping[str, str]) -> str:
    """'3 prefill workers (TP 1, PP 1) + 1 decode worker (TP 2, PP 1) of H100, fp8'."""
    return _("{p} × prefill ({pl}) + {d} × decode ({dl}) on {hw}, {precision}").format(
        p=fmt(row["prefill_workers"]),
        pl=_layout(row, "prefill"),
        d=fmt(row["decode_workers"]),
        dl=_layout(row, "decode"),
        hw=names.get(str(row["hardware"]), str(row["hardware"])),
        precision=row["precision"],
    )


def table_columns() -> dict:
    """column: (on-screen header, ui.words.format unit or None (as is), factor to that unit)."""
    return {
        "cost_per_million_output_tokens_usd": (
            _("Cost at the target (USD per 1M output tokens)"),
            "",
            1.0,
        ),
        "hardware": (_("Accelerator"), None, 1.0),
        "precision": (_("Precision"), None, 1.0),
        "prefill_tp": (_("Prefill TP"), None, 1.0),
        "prefill_workers": (_("Prefill workers"), "", 1.0),
        "decode_tp": (_("Decode TP"), None, 1.0),
        "decode_workers": (_("Decode workers"), "", 1.0),
        "gpus": (_("GPUs"), "", 1.0),
        "prefill_max_rate_per_s": (_("Max rate per prefill worker (requests/s)"), "", 1.0),
        "decode_max_rate_per_s": (_("Max rate per decode worker (requests/s)"), "", 1.0),
        "ttft_ms_p90": (_("p90 TTFT at max rate"), "s", 1e-3),
        "tpot_ms_p99": (_("p99 TPOT at max rate"), "s", 1e-3),
        "kv_transfer_ms": (_("KV transfer (exposed)"), "s", 1e-3),
    }


def display_table(table: pd.DataFrame, names: Mapping[str, str], band) -> pd.DataFrame:
    top = table.head(TABLE_ROWS)
    out = {_("Rank"): np.arange(1, len(top) + 1)}
    for column, (header, unit, factor) in table_columns().items():
        values = top[column].to_numpy()
        if column == "hardware":
            values = [names.get(str(h), str(h)) for h in values]
        elif unit is not None:
            values = fmt_all(values.astype(float) * factor, unit)
        out[header] = values
    out[_("Layouts (prefill / decode)")] = [
        f"{_layout(r, 'prefill')} / {_layout(r, 'decode')}" for _i, r in top.iterrows()
    ]
    out[_("KV link")] = [_(LINKS[v]) if v in LINKS else "—" for v in top["kv_link"]]
    out[_("Typical error")] = [
        bands.short(b) for b in bands.row_bands(band.profile, top["precision"])
    ]
    out[_("Why no max rate")] = [
        message_text(r) if isinstance(r, engine.Message) else "—" for r in top["reason"]
    ]
    return pd.DataFrame(out)


LINKS = {"nvlink": "NVLink", "network": N_("scale-out network"), "none": N_("none")}


def csv_frame(table: pd.DataFrame, band) -> pd.DataFrame:
    """Every pair, ranked, with the profile and the error band's columns; unit-bearing names."""
    out = table.assign(profile=table.attrs.get("profile", ""))
    return band.columns(out).rename(columns=CSV_NAMES)


def pick_words(disagg: pd.Series | None, agg: pd.Series | None, names) -> str:
    """Which serves the target within the SLOs for less: the best disaggregated fleet or the
    best aggregated one (fewer GPUs when neither has a price)."""
    if disagg is None:
        return _("No disaggregated fleet of these layouts meets the SLOs.")
    if agg is None:
        return _(
            "Picked: disaggregated ({fleet}), as no aggregated deployment meets the SLOs."
        ).format(fleet=fleet_words(disagg, names))
    key = "cost_per_million_output_tokens_usd"
    priced = not (missing(disagg[key]) or missing(agg[key]))
    a, d = (agg[key], disagg[key]) if priced else (agg["gpus"], disagg["gpus"])
    values = {
        "fleet": fleet_words(disagg, names),
        "d_gpus": fmt(disagg["gpus"]),
        "a_gpus": fmt(agg["gpus"]),
        "d_cost": fmt(disagg[key], "USD"),
        "a_cost": fmt(agg[key], "USD"),
    }
    if d < a:
        text = _(
            "Picked: disaggregated, {fleet}: {d_gpus} GPUs at {d_cost} per 1M output tokens, "
            "against {a_gpus} GPUs at {a_cost} aggregated."
        )
    else:
        text = _(
            "Picked: aggregated ({a_gpus} GPUs at {a_cost} per 1M output tokens); the best "
            "disaggregated fleet, {fleet}, needs {d_gpus} GPUs at {d_cost}."
        )
    return text.format(**values)


def section(cat, key: tuple, a: Ask, names: Mapping[str, str], band, best_aggregated) -> None:
    """Draw the disaggregated candidates after the aggregated ranking."""
    st.subheader(_("Disaggregated prefill/decode (fast path)"))
    st.caption(
        _(
            "Every prefill layout against every decode layout of the same accelerator and "
            "format: TTFT is the prefill worker's p90 plus the KV transfer it cannot hide, TPOT "
            "the decode worker's p99, so each side gets its own max rate per worker within the "
            "SLOs; prefill workers = ⌈target ÷ its max rate⌉, decode workers likewise, both "
            "behind a least-outstanding router. The KV cache moves over NVLink when the fleet "
            "fits one NVLink domain, else over the scale-out network. docs/model.md, "
            "'Disaggregated serving on the fast path'."
        )
    )
    if a.deployments > MAX_DEPLOYMENTS:
        st.info(
            _(
                "{n} deployments: the disaggregated pairs are computed for at most {top} (fewer "
                "accelerators, TP or PP degrees or precisions)."
            ).format(n=fmt(a.deployments), top=fmt(MAX_DEPLOYMENTS)),
            icon=":material/info:",
        )
        return
    table = computed(
        _("Pairing prefill and decode workers (fast path)…"), lambda: fast_path(cat, key, a)
    )
    if table is None:
        return
    served = table[table["max_rate_per_s"].to_numpy() > 0]
    best = None if served.empty else served.iloc[0]
    st.markdown(plain(pick_words(best, best_aggregated, names)))
    st.dataframe(display_table(table, names, band), key="plan_disagg_table", hide_index=True)
    st.caption(
        _(
            "{served} of {n} prefill × decode pairs meet the SLOs at the target; the first "
            "{shown} are shown, the CSV has every pair."
        ).format(served=fmt(len(served)), n=fmt(len(table)), shown=fmt(min(len(table), TABLE_ROWS)))
    )
    download_csv(
        csv_frame(table, band),
        filename=f"plan_disaggregated_{a.model_id}_{len(table)}pairs.csv",
        key="plan_disagg_csv",
    )
