"""Words, metric cards and tables of the serving-under-load page (pure: no streamlit).

Every number is an engine figure (`engine.serve_load`, `engine.max_rate`, `engine.load_grid`,
`engine.error_band`), at most scaled to its display unit, and shown through ui.words.format.
Tables are shown with readable headers, true and false as yes and no; their CSV downloads keep
the engine's column names, with the unit named where the engine leaves it bare (CSV_NAMES:
`kv_cache_utilisation_fraction`, `running_requests` ...), and every row carries the profile's
error band (`error_band_pct`, `error_band_basis`). Past saturation the fast path has no steady
state: its rows keep `stable` false and empty cells (`steady_curve`), never infinite figures.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

import engine
from ui.charts import bands
from ui.core import profiles
from ui.widgets.pickers import split_words
from ui.words.data_text import said
from ui.words.format import fmt, pct
from ui.words.i18n import N_, _, message_text
from ui.words.tables import WORDS, YES_NO

STAGES = {"bisection": N_("bisection"), "confirmation": N_("confirmation")}
CURVE_TABLE = {  # column: (header, unit (YES_NO: true or false; None: as it is), factor)
    "rate_per_s": (N_("Rate (requests/s)"), "", 1.0),
    "stable": (N_("Steady state"), YES_NO, 1.0),
    "ttft_ms_p50": (N_("TTFT p50"), "s", 1e-3),
    "ttft_ms_p90": (N_("TTFT p90"), "s", 1e-3),
    "ttft_ms_p99": (N_("TTFT p99"), "s", 1e-3),
    "tpot_ms_p50": (N_("TPOT p50"), "s", 1e-3),
    "tpot_ms_p99": (N_("TPOT p99"), "s", 1e-3),
    "requests_per_s": (N_("Served (requests/s)"), "", 1.0),
    "output_tokens_per_s": (N_("Output tokens/s"), "", 1.0),
    "kv_cache_utilisation": (N_("KV pool in use"), "%", 100.0),
    "meets_slo": (N_("Meets the SLOs"), YES_NO, 1.0),
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
    "queue_grew": (N_("Queue grew"), YES_NO, 1.0),
}
TRIED_TABLE = {
    "stage": (N_("Stage"), WORDS, 1.0),
    "rate_per_s": (N_("Rate tried (requests/s)"), "", 1.0),
    "seed": (N_("Seed"), None, 1.0),
    "requests": (N_("Requests"), None, 1.0),
    "ttft_ms_p90": (N_("TTFT p90"), "s", 1e-3),
    "tpot_ms_p99": (N_("TPOT p99"), "s", 1e-3),
    "passed": (N_("Meets the SLOs"), YES_NO, 1.0),
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
    (N_("Mean accepted tokens per pass"), "spec_accepted_tokens_mean", "tokens", 1.0),
    (N_("Prefix-cache hit rate (of input tokens)"), "prefix_hit_rate", "%", 100.0),
)


SPEC_TABLE = {
    "rate_per_s": (N_("Rate (requests/s)"), "", 1.0),
    "tokens_per_s_per_user_with": (N_("Tokens/s per user, speculating"), "", 1.0),
    "tokens_per_s_per_user_without": (N_("Tokens/s per user, without"), "", 1.0),
    "speedup": (N_("Speed-up"), "×", 1.0),
}


def speculation_frame(with_spec: pd.DataFrame, without: pd.DataFrame) -> pd.DataFrame:
    """Per rate, each user's output tokens per second (1 / mean TPOT, the fast path's) with
    and without speculative decoding, and their ratio; rows with a steady state in both."""
    both = with_spec["stable"].astype(bool).to_numpy() & without["stable"].astype(bool).to_numpy()
    rate = with_spec["rate_per_s"].to_numpy()[both]
    on = 1e3 / with_spec["tpot_ms_mean"].to_numpy()[both]
    off = 1e3 / without["tpot_ms_mean"].to_numpy()[both]
    return pd.DataFrame(
        {
            "rate_per_s": rate,
            "tokens_per_s_per_user_with": on,
            "tokens_per_s_per_user_without": off,
            "speedup": on / off,
        }
    )


def crossing_text(frame: pd.DataFrame) -> str:
    """Where speculation stops helping: the first rate at which it is no faster per user."""
    if not len(frame):
        return _("No rate has a steady state with and without speculative decoding.")
    slower = frame[frame["speedup"] <= 1.0]
    if len(slower):
        return _(
            "Speculative decoding stops helping at about {rate}: from there each user is no "
            "faster with it (the verify passes' compute outweighs the tokens they accept)."
        ).format(rate=fmt(float(slower["rate_per_s"].iloc[0]), "requests/s"))
    return _(
        "Speculative decoding helps at every steady rate up to {rate} (×{low} there, ×{high} "
        "for one user); it stops helping only when the batch is compute-bound."
    ).format(
        rate=fmt(float(frame["rate_per_s"].iloc[-1]), "requests/s"),
        low=fmt(float(frame["speedup"].iloc[-1])),
        high=fmt(float(frame["speedup"].iloc[0])),
    )


# The fast path's figures that need a steady state: past saturation (`stable` false) the queue
# grows without bound and they have none (its frame holds 1e8 ms TPOTs and infinite TTFTs).
STEADY_ONLY = (
    "tau_s",
    "mean_running_requests",
    "requests_per_s",
    "output_tokens_per_s",
    "output_tokens_per_s_per_gpu",
    "kv_cache_utilisation",
    "cost_per_million_output_tokens_usd",
)
# CSV columns whose engine name carries no unit, as the page's CSVs name them
CSV_NAMES = {
    "kv_cache_utilisation": "kv_cache_utilisation_fraction",
    "kv_in_use": "kv_in_use_fraction",
    "slo_attainment": "slo_attainment_fraction",
    "length_spread": "length_spread_fraction",
    "running": "running_requests",
    "queued": "queued_requests",
}


def steady_curve(grid: pd.DataFrame) -> pd.DataFrame:
    """The fast path's rows with `stable` as true or false and, past saturation, empty cells
    (NaN) where a figure needs a steady state (latencies, served rates, KV use, cost)."""
    stable = grid["stable"].astype(bool)
    blank = [c for c in grid if c in STEADY_ONLY or "_ms_" in c]
    out = grid.assign(stable=stable)
    out.loc[~stable, blank] = np.nan
    return out


def csv_frame(df: pd.DataFrame, band: bands.Note) -> pd.DataFrame:
    """A CSV's rows, each with the scenario's error band (its basis, edited or not, and where
    it leaves the profile's calibrated ground), every column's unit in its name."""
    return bands.with_columns(df, band).rename(columns=CSV_NAMES)


def tried_frame(m) -> pd.DataFrame:
    """engine.max_rate's runs in order: the bisection's rates (on the search's seed and
    requests), then the confirmation runs; its plan and answer on every row."""
    found = m.as_dict()
    bisection = pd.DataFrame(found["rates_tried"]).assign(
        stage="bisection", seed=m.search_seed, requests=m.search_requests
    )
    rows = bisection
    if found["confirmation_runs"]:
        confirmation = pd.DataFrame(found["confirmation_runs"]).assign(stage="confirmation")
        rows = pd.concat([bisection, confirmation], ignore_index=True)
    plan = {k: v for k, v in found.items() if k in PLAN_KEYS}
    first = ["stage", "rate_per_s", "seed", "requests"]
    rows = rows[[c for c in first if c in rows] + [c for c in rows if c not in first]]
    return rows.assign(
        **plan,
        bisection_max_rate_per_s=m.bisection_rate_per_s,
        max_rate_per_s=m.max_rate_per_s,
    )


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
        if key in OPTIONAL and r.get(key) is None:
            continue  # speculation or a shared prefix: off
        if f"{key}_mean" in r:
            cells = [r[f"{key}_{s}"] for s in ("mean", "p50", "p90", "p99")]
            value = " / ".join(fmt(float(v) * factor, unit) for v in cells)
        elif unit is None:
            value = f"{int(r[key]):,}"
        else:
            value = fmt(float(r[key]) * factor, unit)
        rows.append((_(label), value))
    return pd.DataFrame(rows, columns=[_("What"), _("Value")])


OPTIONAL = ("spec_accepted_tokens_mean", "prefix_hit_rate")  # None when not used


def per_request_frame(result) -> pd.DataFrame:
    """The measured requests (seconds and tokens), one row each."""
    return pd.DataFrame({k: np.asarray(v) for k, v in result.per_request.items()})


def series_frame(result) -> pd.DataFrame:
    return pd.DataFrame({k: np.asarray(v) for k, v in result.timeseries.items()})


def band_text(band: bands.Note, profile: str) -> str:
    """The band in words, for beside every figure; said to be the profile's as fitted when the
    page edits its assumptions."""
    basis = message_text(band.band.basis)
    if band.pct is None:
        text = _("Error band of profile {profile}: not measured ({basis}).").format(
            profile=profile, basis=basis
        )
    else:
        text = _(
            "Error band of profile {profile}: ±{band}, {basis}; shaded around the curves and to "
            "be read around every figure below."
        ).format(profile=profile, band=pct(band.pct / 100), basis=basis)
    if band.edited:
        text += " " + _(
            "The band is the profile's as fitted; your edits of its assumptions are not measured."
        )
    return text


def confirmed_words(m, tip: str) -> str:
    """How the search's answer was found and confirmed (the max-rate card's help)."""
    runs = m.confirmations
    if not runs:
        return _("per replica, simulated (bisection, not confirmed on longer runs); {tip}").format(
            tip=tip
        )
    seeds, requests = len({row[1] for row in runs}), runs[0][2]
    return _(
        "per replica, simulated: the bisection's {bisection} requests/s, then the highest rate "
        "meeting the SLOs on {seeds} seeds of {requests} requests each; {tip}"
    ).format(
        bisection=fmt(m.bisection_rate_per_s),
        seeds=f"{seeds:,}",
        requests=f"{requests:,}",
        tip=tip,
    )


def no_rate_words(m) -> str:
    """Why the search found no rate (its answer is 0): a trickle misses the SLOs, or the
    bisection's answer and every rate below it tried missed them on the longer runs."""
    if not m.confirmations:
        return _("Even a trickle of requests misses the SLOs: relax them, or serve faster.")
    return _(
        "No rate is confirmed: the bisection's {bisection} requests/s met the SLOs on its "
        "{requests} requests, but from there down to {lowest} requests/s at least one of the "
        "longer runs misses them (the table of rates tried says which). Relax the SLOs, or serve "
        "faster."
    ).format(
        bisection=fmt(m.bisection_rate_per_s),
        requests=f"{m.search_requests:,}",
        lowest=fmt(min(row[0] for row in m.confirmations)),
    )


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
                confirmed_words(m, tip),
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
        if r["spec_accepted_tokens_mean"] is not None:
            cards.append(
                (
                    _("Mean accepted tokens"),
                    fmt(r["spec_accepted_tokens_mean"]),
                    _("tokens per speculative pass, the model's own included"),
                )
            )
        if r["prefix_hit_rate"] is not None:
            cards.append(
                (
                    _("Prefix-cache hit rate"),
                    pct(r["prefix_hit_rate"]),
                    _("input tokens found cached, not computed"),
                )
            )
    return cards


def trace_cards(r: Mapping, band, slo) -> list[tuple[str, str, str]]:
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
        ttft=fmt(slo.ttft_ms * 1e-3, "s"), tpot=fmt(slo.tpot_ms * 1e-3, "s")
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
        release=said(s["release"]),
        max_num_seqs=f"{s['max_num_seqs']:,}",
        max_batched_tokens=f"{s['max_batched_tokens']:,}",
        chunked=chunked,
        block_size=f"{s['block_size']:,}",
        kv_policy=said(s["kv_policy"]),
    )


def caption(d, w, mode: str, hw_name: str, model_name: str) -> str:
    """The scenario in one line (plain: the caller escapes the names)."""
    dep = {
        "model": model_name,
        "devices": d.tp * d.pp,
        "hardware": hw_name,
        "tp": d.tp,
        "pp": d.pp,
        "split": split_words(d.ep, d.attention_dp),
        "precision": d.precision,
        "kv": d.kv_precision or d.precision,
        "profile": profiles.label(engine.get_profile(d.profile), d.overrides_dict),
    }
    if mode == "trace":  # its requests are the file's: said beside the uploader
        return _(
            "{model} on {devices} × {hardware} (TP {tp} × PP {pp}{split}), {precision}, KV {kv}, "
            "profile {profile} · an uploaded trace"
        ).format(**dep)
    if w.mode == "open":
        how = _("open loop at {rate} (burstiness {burstiness})").format(
            rate=fmt(w.rate_per_s, "requests/s"), burstiness=fmt(w.burstiness)
        )
    elif w.mode == "closed":
        how = _("{clients} closed-loop clients").format(clients=f"{w.concurrency:,}")
    else:
        how = _("max throughput (every request queued at once)")
    spread = f" ± {pct(w.length_spread)}" if w.length_spread else ""
    return techniques_text(
        d,
        w,
        _(
            "{model} on {devices} × {hardware} (TP {tp} × PP {pp}{split}), {precision}, KV {kv}, "
            "profile {profile} · {how} · {input_tokens} input + {output_tokens} output "
            "tokens{spread} · {requests} requests, seed {seed}"
        ).format(
            **dep,
            how=how,
            input_tokens=f"{w.input_tokens:,}",
            output_tokens=f"{w.output_tokens:,}",
            spread=spread,
            requests=f"{w.requests:,}",
            seed=w.seed,
        ),
    )


def techniques_text(d, w, text: str) -> str:
    """`text` followed by the speculation, shared prefix and sessions in use."""
    parts = [text]
    s = d.speculation
    if s is not None:
        parts.append(
            _(
                "speculative decoding {method}: {tokens} drafted, {accepted} accepted per pass"
            ).format(method=s.method, tokens=s.tokens, accepted=fmt(s.mean_accepted))
        )
    if w.prefix is not None:
        parts.append(
            _("a {tokens}-token shared prefix on {share} of the requests").format(
                tokens=f"{w.prefix.tokens:,}", share=pct(w.prefix.share)
            )
        )
    if w.session_turns > 1:
        parts.append(_("sessions of {turns} turns").format(turns=w.session_turns))
    return " · ".join(parts)


def run_title(w) -> str:
    """'open loop at 3 requests/s, 2,000 requests' (the timeline's subtitle)."""
    if w.mode == "open":
        how = _("open loop at {rate}").format(rate=fmt(w.rate_per_s, "requests/s"))
    elif w.mode == "closed":
        how = _("{clients} closed-loop clients").format(clients=f"{w.concurrency:,}")
    else:
        how = _("max throughput")
    return _("{how}, {requests} requests").format(how=how, requests=f"{w.requests:,}")


def file_name(kind: str, d, hw_id: str, model_id: str) -> str:
    split = (f"_ep{d.ep}" if d.ep > 1 else "") + ("_adp" if d.attention_dp else "")
    return f"load_{kind}_{model_id}_{hw_id}_tp{d.tp}_pp{d.pp}{split}_{d.profile_name}.csv"
