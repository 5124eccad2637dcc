"""The planner's pure parts: SLO checks, cost per million tokens, Pareto fronts and the words.

Everything works on the DataFrame `engine.serve_sweep` returns (one row per configuration) and
is vectorised: a 50,000-row grid is filtered, priced and ranked without a Python loop per row.
The chart's axes follow public serving benchmarks and NVIDIA's aiconfigurator: output tokens/s
per GPU (what a deployment costs) against tokens/s per user (what a user feels).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ui.charts.cost import usd_per_1m_output_tokens
from ui.links.params import write_list
from ui.words.format import fmt, pct
from ui.words.i18n import N_, _

X, Y = "tokens_per_s_per_user", "output_tokens_per_s_per_gpu"
SECTIONS = {  # the page's expanders drawn only while open: their titles
    "table": N_("Configurations that meet the SLOs, cheapest first"),
    "load": N_("Under load: replicas and cost for your traffic"),
    "cost_front": N_("Cost against latency: the Pareto front"),
    "prices": N_("Prices"),
}


PRICES_NOTE = N_(
    "List prices are public on-demand prices per accelerator-hour as a dated public page "
    "quotes them (check the source; reserved and spot prices are lower). Cost = price × "
    "devices ÷ output tokens per hour × 10⁶."
)
NO_FIT = N_("does not fit in memory")  # such a row has no cost (NaN); English in the CSV
EMPTY_GRID = N_(
    "The grid is empty: choose at least one accelerator, precision, TP and PP degree and batch "
    "size that the model and the chips accept (the notes above say what was left out)."
)  # shown through _()


@dataclass(frozen=True, slots=True)
class Slo:
    """Service-level objectives; None means "no limit on this one"."""

    ttft_ms: float | None = None
    tpot_ms: float | None = None
    min_tokens_per_s_per_user: float | None = None

    def fields(self) -> dict[str, float | None]:
        """The three limits by their link names (None: no limit)."""
        return {
            "ttft_ms": self.ttft_ms,
            "tpot_ms": self.tpot_ms,
            "min_tokens_per_s_per_user": self.min_tokens_per_s_per_user,
        }

    def limits(self) -> dict[str, float]:
        """The limits that are set, by the column they bound."""
        named = {
            "ttft_ms": self.ttft_ms,
            "tpot_ms": self.tpot_ms,
            "tokens_per_s_per_user": self.min_tokens_per_s_per_user,
        }
        return {k: float(v) for k, v in named.items() if v is not None}


def slo_margins(df: pd.DataFrame, slo: Slo) -> pd.DataFrame:
    """Per limit, how far each row is inside it (>= 0 meets it), in the limit's unit."""
    out = {}
    for column, limit in slo.limits().items():
        if column == "tokens_per_s_per_user":
            out[column] = df[column] - limit  # a floor
        else:
            out[column] = limit - df[column]  # a ceiling
    return pd.DataFrame(out, index=df.index)


def meets_slo(df: pd.DataFrame, slo: Slo) -> np.ndarray:
    """True where the configuration fits in memory and meets every set limit."""
    ok = df["fits_in_memory"].to_numpy(dtype=bool).copy()
    margins = slo_margins(df, slo)
    if len(margins.columns):
        ok &= (margins.to_numpy() >= 0).all(axis=1)
    return ok


def pareto_mask(df: pd.DataFrame, groups: list[str], x: str = X, y: str = Y) -> np.ndarray:
    """True for the rows on their group's Pareto front (higher x and higher y are better).

    Sorted by group, then x descending (ties: y descending), a row is on the front when its y
    beats the best y of every row before it in its group, i.e. of every row with a larger x.
    Vectorised (group codes from one groupby, no per-row Python): 50,000 rows in milliseconds.
    """
    if df.empty:
        return np.zeros(0, dtype=bool)
    if groups:
        key = df.groupby(groups, observed=True, sort=False).ngroup().to_numpy()
    else:
        key = np.zeros(len(df), dtype=np.int64)
    order = np.lexsort((-df[y].to_numpy(), -df[x].to_numpy(), key))
    ys, keys = df[y].to_numpy(dtype=float)[order], key[order]
    best = pd.Series(ys).groupby(keys).cummax().to_numpy()
    before = np.concatenate(([-np.inf], best[:-1]))
    first = np.concatenate(([True], keys[1:] != keys[:-1]))
    before[first] = -np.inf
    on_front = np.zeros(len(df), dtype=bool)
    on_front[order] = ys > before
    return on_front


def ranked(df: pd.DataFrame, slo: Slo, price_per_hour: Mapping[str, float | None]):
    """The grid with `meets_slo` and `usd_per_1m_output_tokens`, cheapest meeting rows first.

    Rows that meet the SLOs come first, by cost (unpriced last), then the other rows that fit
    in memory by cost, then those that do not fit: they have no cost (NaN), since a
    deployment that cannot hold its weights and KV cache serves nothing.
    """
    fits = df["fits_in_memory"].to_numpy(dtype=bool)
    cost = usd_per_1m_output_tokens(df, price_per_hour).where(fits)
    out = df.assign(usd_per_1m_output_tokens=cost, meets_slo=meets_slo(df, slo))
    return out.sort_values(
        ["meets_slo", "fits_in_memory", "usd_per_1m_output_tokens", Y],
        ascending=[False, False, True, False],
        na_position="last",
        kind="stable",
    ).reset_index(drop=True)


def infeasible_reason(df: pd.DataFrame, slo: Slo) -> str | None:
    """Why no configuration meets the SLOs (None when some do), in words with numbers.

    Says "nothing fits" when no configuration fits in memory; otherwise names the limit the
    fitting configurations come closest to meeting and by how much the best one misses it.
    """
    if df.empty:
        return _(EMPTY_GRID)
    fitting = df[df["fits_in_memory"].to_numpy(dtype=bool)]
    if fitting.empty:
        return _(
            "Nothing fits: every configuration needs more memory per device than the usable "
            "capacity (add devices with TP/PP, lower the precision, or shorten the context)."
        )
    if meets_slo(fitting, slo).any():
        return None
    margins = slo_margins(fitting, slo)
    misses = []
    for column in margins.columns:
        best = margins[column].max()
        if best < 0:
            misses.append(_miss_words(column, -best, slo.limits()[column]))
    return _("No fitting configuration meets the SLOs: {misses}.").format(misses="; ".join(misses))


_UNIT = {"ttft_ms": "s", "tpot_ms": "s", "tokens_per_s_per_user": "tokens/s"}
_SCALE = {"ttft_ms": 1e-3, "tpot_ms": 1e-3, "tokens_per_s_per_user": 1.0}  # to fmt's unit
_WORD = {"ttft_ms": "TTFT", "tpot_ms": "TPOT", "tokens_per_s_per_user": N_("tokens/s per user")}


def limit_text(column: str, value: float) -> str:
    """A limit's value with its unit: ("ttft_ms", 2000) -> '2 s'."""
    return fmt(value * _SCALE[column], _UNIT[column])


def _english(text: str) -> str:
    return text


def limit_label(column: str, limit: float, tr=_english) -> str:
    """A limit in words: ("ttft_ms", 2000) -> 'TTFT ≤ 2 s'; the floor reads '≥'. `tr`
    translates the words (ui.words.i18n._ on screen; English by default, as in the CSV)."""
    sign = "≥" if column == X else "≤"
    return f"{tr(_WORD[column])} {sign} {limit_text(column, limit)}"


def verdicts(df: pd.DataFrame, slo: Slo, tr=_english) -> list[str]:
    """Per row: 'meets the SLOs', 'does not fit in memory', or the limits it misses (in
    English, as the CSV writes them; `tr=ui.words.i18n._` for the screen)."""
    fits = df["fits_in_memory"].to_numpy(dtype=bool)
    margins = slo_margins(df, slo)
    labels = {c: limit_label(c, v, tr) for c, v in slo.limits().items()}
    missed = margins.to_numpy() < 0
    no_fit, meets, misses = tr(NO_FIT), tr(N_("meets the SLOs")), tr(N_("misses {limits}"))
    out = []
    for i, row in enumerate(missed):
        names = [labels[c] for c, miss in zip(margins.columns, row, strict=True) if miss]
        if not fits[i]:
            out.append(no_fit)
        else:
            out.append(misses.format(limits=", ".join(names)) if names else meets)
    return out


def _miss_words(column: str, miss: float, limit: float) -> str:
    if column == "tokens_per_s_per_user":
        return _("the fastest is {miss} short of {limit} per user").format(
            miss=limit_text(column, miss), limit=limit_text(column, limit)
        )
    limit_words = f"{_(_WORD[column])} ≤ {limit_text(column, limit)}"
    return _("every configuration misses {limit} by at least {miss}").format(
        limit=limit_words, miss=limit_text(column, miss)
    )


def binding_limit(row: pd.Series, slo: Slo) -> str | None:
    """The SLO with the least relative headroom for this configuration (None if no SLO set)."""
    limits = slo.limits()
    if not limits:
        return None
    headroom = {}
    for column, limit in limits.items():
        value = float(row[column])
        headroom[column] = (value - limit) / limit if column == X else (limit - value) / limit
    return min(headroom, key=headroom.get)


def pipeline_note(pp: int) -> str:
    """What this table's PP rows are: static batches through the stages (docs/model.md,
    "Pipeline stages under load")."""
    section = SECTIONS["load"]  # its title, translated where shown
    return _(
        "PP rows here are static batches: each passes the stages in turn, so each device idles "
        "(pp − 1)/pp of the time (up to {idle} at PP {pp}). A continuous-batching server keeps a "
        "batch on every stage: “{section}” below prices PP that way."
    ).format(pp=pp, idle=pct((pp - 1) / pp), section=_(section))


def describe(row: pd.Series, slo: Slo, names: Mapping[str, str]) -> str:
    """One configuration in words: what it is, what it gives, what binds it (numbers by
    ui.words.format, each with its unit)."""
    what = _("{n}× {hardware} (TP{tp}, PP{pp}), batch {batch}, {precision}").format(
        n=int(row["devices"]),
        hardware=names.get(row["hardware"], row["hardware"]),
        tp=int(row["tp"]),
        pp=int(row["pp"]),
        batch=f"{int(row['batch_size']):,}",
        precision=row["precision"],
    )
    gives = _("{throughput}, {interactivity}, TTFT {ttft}, TPOT {tpot}").format(
        throughput=fmt(row[Y], _("output tokens/s per GPU")),
        interactivity=fmt(row[X], _("tokens/s per user")),
        ttft=fmt(row["ttft_ms"] * 1e-3, "s"),
        tpot=fmt(row["tpot_ms"] * 1e-3, "s"),
    )
    cost = row.get("usd_per_1m_output_tokens")
    if cost is not None and cost == cost:
        cost = fmt(cost, _("USD per 1M output tokens"))
        gives = _("{figures}, {cost}").format(figures=gives, cost=cost)
    binds = binding_limit(row, slo)
    limit = _("no SLO is set")
    if binds:
        headroom = abs(float(row[binds]) / slo.limits()[binds] - 1)
        value = limit_text(binds, float(row[binds]))
        limit = _(
            "{limit} is the SLO with the least headroom ({value}, {headroom} inside it)"
        ).format(limit=_(_WORD[binds]), value=value, headroom=pct(headroom))
    resource = _("decode is {bound}-bound").format(bound=_(str(row["decode_bottleneck"])))
    comm = row.get("decode_comm_ms")
    if comm is not None and row["tpot_ms"] > 0 and comm > 0:
        share = pct(comm / row["tpot_ms"])
        resource += _(", communication {share} of a decode step").format(share=share)
    return _("{what}: {gives}. Why: {limit}; {resource}.").format(
        what=what, gives=gives, limit=limit, resource=resource
    )


CALLOUTS = {
    "cheapest": N_("Cheapest (lowest USD per 1M output tokens)"),  # shown through _()
    "fastest": N_("Fastest (most tokens/s per user)"),
}


def callouts(table: pd.DataFrame, slo: Slo, names: Mapping[str, str]) -> dict[str, str]:
    """The cheapest and the fastest configuration that meet the SLOs, in words.

    Args:
        table: `ranked(...)` output.

    Returns:
        {"cheapest": words, "fastest": words}; a key is missing when no row qualifies
        (cheapest needs a price).
    """
    ok = table[table["meets_slo"].to_numpy(dtype=bool)]
    out = {}
    priced = ok[ok["usd_per_1m_output_tokens"].notna().to_numpy()]
    if len(priced):
        out["cheapest"] = describe(priced.iloc[0], slo, names)
    if len(ok):
        fastest = ok.iloc[int(np.argmax(ok[X].to_numpy()))]
        out["fastest"] = describe(fastest, slo, names)
    return out


def too_big(rows: int, most: int) -> str:
    """The refusal of a grid over the planner's budget, with how to narrow it."""
    return _(
        "The grid has {rows} configurations; the planner computes at most {most} (fewer "
        "batch sizes, TP/PP degrees or accelerators)."
    ).format(rows=f"{rows:,}", most=f"{most:,}")


def scope(rows: int, accelerators: int, grid: Mapping, tokens: tuple, profile: str) -> str:
    """The grid in one line: its configurations, axes, request shape and profile."""
    return _(
        "{rows} configurations · {accelerators} accelerators × TP {tp} × PP {pp} × {precisions} "
        "× {batches} batch sizes · {input} input + {output} output tokens per request · profile "
        "{profile} · serving model (docs/model.md)"
    ).format(
        rows=f"{rows:,}",
        accelerators=accelerators,
        tp=write_list(grid["tp"]),
        pp=write_list(grid["pp"]),
        precisions=", ".join(grid["precisions"]) or _("no precision"),
        batches=f"{len(grid['batches']):,}",
        input=f"{tokens[0]:,}",
        output=f"{tokens[1]:,}",
        profile=profile,
    )


def chart_note(slo: Slo) -> str:
    """How to read the Pareto chart, with the limits that are not drawn on its axes."""
    text = _(
        "Lines: each accelerator × precision's Pareto front (no other configuration of it has "
        "both more tokens/s per user and more tokens/s per GPU); faint dots: dominated "
        "configurations; filled markers meet every SLO, hollow ones miss one. Only "
        "configurations that fit in memory are drawn."
    )
    if slo.ttft_ms is not None:
        text += _(
            " TTFT ≤ {limit} is not on these axes: it shows in the markers (hollow when missed) "
            "and the table."
        ).format(limit=limit_text("ttft_ms", slo.ttft_ms))
    return text
