"""Words, metric cards and tables of the serving-under-load page (pure: no streamlit).

Every number is an engine figure (`engine.serve_load`, `engine.max_rate`, `engine.load_grid`,
`engine.error_band`), at most scaled to its display unit, and shown through ui.core.format.
Tables are shown with readable headers; their CSV downloads keep the engine's column names and
every row carries the profile's error band (`error_band_pct`, `error_band_basis`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ui.core.format import fmt, fmt_all, pct
from ui.core.i18n import N_, _, band_basis

CURVE_TABLE = {  # column: (header, unit or None, factor)
    "rate_per_s": (N_("Rate (requests/s)"), "", 1.0),
    "stable": (N_("Steady state"), None, 1.0),
    "ttft_ms_p50": (N_("TTFT p50"), "s", 1e-3),
    "ttft_ms_p90": (N_("TTFT p90"), "s", 1e-3),
    "ttft_ms_p99": (N_("TTFT p99"), "s", 1e-3),
    "tpot_ms_p50": (N_("TPOT p50"), "s", 1e-3),
    "tpot_ms_p99": (N_("TPOT p99"), "s", 1e-3),
    "requests_per_s": (N_("Served (requests/s)"), "", 1.0),
    "output_tokens_per_s": (N_("Output tokens/s"), "", 1.0),
    "kv_cache_utilisation": (N_("KV pool in use"), "%", 100.0),
    "meets_slo": (N_("Meets the SLOs"), None, 1.0),
}
POINTS_TABLE = {
    "rate_per_s": (N_("Offered (requests/s)"), "", 1.0),
    "requests_measured": (N_("Requests measured"), None, 1.0),
    "requests_per_s": (N_("Served (requests/s)"), "", 1.0),
    "goodput_requests_per_s": (N_("Goodput (requests/s)"), "", 1.0),
    "output_tokens_per_s": (N_("Output tokens/s"), "", 1.0),
    "ttft_ms_p50": (N_("TTFT p50"), "s", 1e-3),
    "ttft_ms_p90": (N_("TTFT p90"), "s", 1e-3),
    "ttft_ms_p99": (N_("TTFT p99"), "s", 1e-3),
    "tpot_ms_p50": (N_("TPOT p50"), "s", 1e-3),
    "tpot_ms_p99": (N_("TPOT p99"), "s", 1e-3),
    "preemptions": (N_("Preemptions"), None, 1.0),
    "queue_grew": (N_("Queue grew"), None, 1.0),
}
TRIED_TABLE = {
    "rate_per_s": (N_("Rate tried (requests/s)"), "", 1.0),
    "ttft_ms_p90": (N_("TTFT p90"), "s", 1e-3),
    "tpot_ms_p99": (N_("TPOT p99"), "s", 1e-3),
    "passed": (N_("Meets the SLOs"), None, 1.0),
}
SUMMARY = (  # (label, key, unit, factor) of the run's summary table
    (N_("Requests measured"), "requests_measured", None, 1.0),
    (N_("TTFT mean / p50 / p90 / p99"), "ttft_ms", "s", 1e-3),
    (N_("TPOT mean / p50 / p90 / p99"), "tpot_ms", "s", 1e-3),
    (N_("End-to-end mean / p50 / p90 / p99"), "e2e_latency_ms", "s", 1e-3),
    (N_("Queueing mean / p50 / p90 / p99"), "queueing_ms", "s", 1e-3),
    (N_("Served"), "requests_per_s", "requests/s", 1.0),
    (N_("Goodput (meeting every SLO)"), "goodput_requests_per_s", "requests/s", 1.0),
    (N_("Output tokens/s"), "output_tokens_per_s", "tokens/s", 1.0),
    (N_("Output tokens/s per GPU"), "output_tokens_per_s_per_gpu", "tokens/s", 1.0),
    (N_("Mean running requests"), "mean_running_requests", "requests", 1.0),
    (N_("Mean queued requests"), "mean_queued_requests", "requests", 1.0),
    (N_("KV pool in use (mean)"), "kv_cache_utilisation", "%", 100.0),
    (N_("KV pool"), "kv_pool_tokens", "tokens", 1.0),
    (N_("Preemptions"), "preemptions", None, 1.0),
    (N_("Measured window"), "measured_window_s", "s", 1.0),
)


def table(df: pd.DataFrame, spec: Mapping) -> pd.DataFrame:
    """`df`'s columns of `spec` under readable headers, numbers as ui.core.format text."""
    out = {}
    for column, (header, unit, factor) in spec.items():
        if column not in df:
            continue
        values = df[column].to_numpy()
        if unit is None:
            out[_(header)] = [
                (_("yes") if v else _("no")) if isinstance(v, bool | np.bool_) else v
                for v in values
            ]
        else:
            out[_(header)] = fmt_all(np.asarray(values, dtype=float) * factor, unit)
    return pd.DataFrame(out)


def with_band(df: pd.DataFrame, band) -> pd.DataFrame:
    """The CSV's rows, each with the profile's error band."""
    return df.assign(error_band_pct=band.pct, error_band_basis=band.basis)


def tried_frame(m) -> pd.DataFrame:
    """engine.max_rate's rates tried, in order, and its plan on every row."""
    rows = m.as_dict()["rates_tried"]
    plan = {k: v for k, v in m.as_dict().items() if k in PLAN_KEYS}
    return pd.DataFrame(rows).assign(**plan, max_rate_per_s=m.max_rate_per_s)


PLAN_KEYS = (
    "target_rate_per_s",
    "replicas",
    "devices",
    "price_per_hour_usd",
    "cost_per_million_output_tokens_usd",
)


def summary_table(r: Mapping) -> pd.DataFrame:
    """The run's figures as (what, value) rows."""
    rows = []
    for label, key, unit, factor in SUMMARY:
        if f"{key}_mean" in r:
            cells = [r[f"{key}_{s}"] for s in ("mean", "p50", "p90", "p99")]
            value = " / ".join(fmt(float(v) * factor, unit) for v in cells)
        elif unit is None:
            value = f"{int(r[key]):,}"
        else:
            value = fmt(float(r[key]) * factor, unit)
        rows.append((_(label), value))
    return pd.DataFrame(rows, columns=[_("What"), _("Value")])


def per_request_frame(result) -> pd.DataFrame:
    """The measured requests (seconds and tokens), one row each."""
    return pd.DataFrame({k: np.asarray(v) for k, v in result.per_request.items()})


def series_frame(result) -> pd.DataFrame:
    return pd.DataFrame({k: np.asarray(v) for k, v in result.timeseries.items()})


def band_text(band, profile: str) -> str:
    """The band in words, for beside every figure."""
    if band.pct is None:
        return _("Error band of profile {profile}: not measured ({basis}).").format(
            profile=profile, basis=band_basis(band)
        )
    return _(
        "Error band of profile {profile}: ±{band}, {basis}; shaded around the curves and to be "
        "read around every figure below."
    ).format(profile=profile, band=pct(band.pct / 100), basis=band_basis(band))


def headline(m, r: Mapping | None, band) -> list[tuple[str, str, str]]:
    """(label, value, help) metric cards: the search's answer, then the chosen run's."""
    tip = (
        _("measured error: not measured")
        if band.pct is None
        else _("measured error: ±{band}").format(band=pct(band.pct / 100))
    )
    run_tip = _("this run; {tip}").format(tip=tip)
    cards = []
    if m is not None:
        plan = m.as_dict()
        target = plan.get("target_rate_per_s")
        found = m.max_rate_per_s > 0
        cards += [
            (
                _("Max rate within SLOs (requests/s)"),
                fmt(m.max_rate_per_s) if found else "—",
                _("per replica, simulated; {tip}").format(tip=tip),
            ),
            (
                _("Replicas for {rate}").format(rate=fmt(target, "requests/s"))
                if target
                else _("Replicas"),
                "—" if plan.get("replicas") is None else f"{plan['replicas']:,}",
                _("⌈target ÷ max rate⌉ replicas of this deployment"),
            ),
            (
                _("Cost per 1M output tokens (USD)"),
                fmt(plan.get("cost_per_million_output_tokens_usd")),
                _("at the target rate; {tip}").format(tip=tip),
            ),
            (
                _("Saturation, fast path (requests/s)"),
                fmt(m.saturation_rate_per_s),
                _("the highest rate with a steady state (analytic)"),
            ),
        ]
    if r is not None and r["fits_in_memory"]:
        cards += [
            ("TTFT p90", fmt(r["ttft_ms_p90"] * 1e-3, "s"), run_tip),
            ("TPOT p99", fmt(r["tpot_ms_p99"] * 1e-3, "s"), run_tip),
            (_("Served (requests/s)"), fmt(r["requests_per_s"]), run_tip),
            (_("Goodput (requests/s)"), fmt(r["goodput_requests_per_s"]), _("meeting every SLO")),
            (_("Output tokens/s per GPU"), fmt(r["output_tokens_per_s_per_gpu"]), tip),
            (
                _("Mean running requests"),
                fmt(r["mean_running_requests"]),
                _("time-averaged batch"),
            ),
            (
                _("KV pool in use"),
                pct(r["kv_cache_utilisation"]),
                _("mean fraction of its blocks"),
            ),
            (
                _("Preemptions"),
                f"{int(r['preemptions']):,}",
                _("requests evicted and recomputed"),
            ),
        ]
    return cards


def trace_cards(r: Mapping, band, slo: tuple) -> list[tuple[str, str, str]]:
    """(label, value, help) metric cards of one run of a trace: its latency percentiles, what
    it served, its goodput against the SLOs and how many requests were measured."""
    tip = (
        _("this run; measured error: not measured")
        if band.pct is None
        else _("this run; measured error: ±{band}").format(band=pct(band.pct / 100))
    )
    cards = [
        (f"{metric.upper()} {stat}", fmt(r[f"{metric}_ms_{stat}"] * 1e-3, "s"), tip)
        for metric in ("ttft", "tpot")
        for stat in ("p50", "p90", "p99")
    ]
    slos = _("TTFT ≤ {ttft} and TPOT ≤ {tpot} per request").format(
        ttft=fmt(slo[0] * 1e-3, "s"), tpot=fmt(slo[1] * 1e-3, "s")
    )
    return [
        *cards,
        (_("Served (requests/s)"), fmt(r["requests_per_s"]), tip),
        (_("Output tokens/s"), fmt(r["output_tokens_per_s"]), tip),
        (_("Goodput (requests/s)"), fmt(r["goodput_requests_per_s"]), slos),
        (
            _("Requests measured"),
            f"{int(r['requests_measured']):,}",
            _("the trace's requests less the first and last 10 % (warm-up and drain)"),
        ),
        (_("Preemptions"), f"{int(r['preemptions']):,}", _("requests evicted and recomputed")),
        (_("KV pool in use"), pct(r["kv_cache_utilisation"]), _("mean fraction of its blocks")),
    ]


def scheduler_text(s: Mapping) -> str:
    """The scheduler a run uses, in one line (plain text)."""
    chunked = _("on") if s["chunked_prefill"] else _("off")
    return _(
        "Scheduler: {stack} ({release}): max_num_seqs {max_num_seqs}, max_batched_tokens "
        "{max_batched_tokens}, chunked prefill {chunked}, block {block_size} tokens, KV policy "
        "{kv_policy}."
    ).format(
        stack=s["stack"],
        release=s["release"],
        max_num_seqs=f"{s['max_num_seqs']:,}",
        max_batched_tokens=f"{s['max_batched_tokens']:,}",
        chunked=chunked,
        block_size=f"{s['block_size']:,}",
        kv_policy=s["kv_policy"],
    )


def caption(d, w, hw_name: str, model_name: str) -> str:
    """The scenario in one line (plain: the caller escapes the names)."""
    dep = {
        "model": model_name,
        "devices": d.tp * d.pp,
        "hardware": hw_name,
        "tp": d.tp,
        "pp": d.pp,
        "precision": d.precision,
        "kv": d.kv_precision or d.precision,
        "profile": d.profile,
    }
    if w.mode == "trace":  # its requests are the file's: said beside the uploader
        return _(
            "{model} on {devices} × {hardware} (TP {tp} × PP {pp}), {precision}, KV {kv}, "
            "profile {profile} · an uploaded trace"
        ).format(**dep)
    if w.mode == "open":
        how = _("open loop at {rate} (burstiness {burstiness})").format(
            rate=fmt(w.rate, "requests/s"), burstiness=fmt(w.burstiness)
        )
    elif w.mode == "closed":
        how = _("{clients} closed-loop clients").format(clients=f"{w.concurrency:,}")
    else:
        how = _("max throughput (every request queued at once)")
    spread = f" ± {pct(w.length_spread)}" if w.length_spread else ""
    return _(
        "{model} on {devices} × {hardware} (TP {tp} × PP {pp}), {precision}, KV {kv}, profile "
        "{profile} · {how} · {input_tokens} input + {output_tokens} output tokens{spread} · "
        "{requests} requests, seed {seed}"
    ).format(
        **dep,
        how=how,
        input_tokens=f"{w.input_tokens:,}",
        output_tokens=f"{w.output_tokens:,}",
        spread=spread,
        requests=f"{w.requests:,}",
        seed=w.seed,
    )


def run_title(w) -> str:
    """'open loop at 3 requests/s, 2,000 requests' (the timeline's subtitle)."""
    if w.mode == "open":
        how = _("open loop at {rate}").format(rate=fmt(w.rate, "requests/s"))
    elif w.mode == "closed":
        how = _("{clients} closed-loop clients").format(clients=f"{w.concurrency:,}")
    else:
        how = _("max throughput")
    return _("{how}, {requests} requests").format(how=how, requests=f"{w.requests:,}")


def file_name(kind: str, d, hw_id: str, model_id: str) -> str:
    return f"load_{kind}_{model_id}_{hw_id}_tp{d.tp}_pp{d.pp}_{d.profile}.csv"
