"""The planner's pure parts: SLO checks, cost per million tokens, Pareto fronts and the words.

Everything works on the DataFrame `engine.serve_sweep` returns (one row per configuration) and
is vectorised: a 50,000-row grid is filtered, priced and ranked without a Python loop per row.
The chart's axes follow SemiAnalysis InferenceMAX and NVIDIA's aiconfigurator: output tokens/s
per GPU (what a deployment costs) against tokens/s per user (what a user feels).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

X, Y = "tokens_per_s_per_user", "output_tokens_per_s_per_gpu"
SECONDS_PER_HOUR = 3600.0
TOKENS_PER_MILLION = 1e6


@dataclass(frozen=True, slots=True)
class Slo:
    """Service-level objectives; None means "no limit on this one"."""

    ttft_ms: float | None = None
    tpot_ms: float | None = None
    min_tokens_per_s_per_user: float | None = None

    def limits(self) -> dict[str, float]:
        """The limits that are set, by the column they bound."""
        named = {
            "ttft_ms": self.ttft_ms,
            "tpot_ms": self.tpot_ms,
            "tokens_per_s_per_user": self.min_tokens_per_s_per_user,
        }
        return {k: float(v) for k, v in named.items() if v is not None}


def usd_per_1m_output_tokens(df: pd.DataFrame, price_per_hour: Mapping[str, float | None]):
    """USD per million output tokens: the deployment's hourly price over its hourly output.

    price (USD per accelerator-hour) × devices ÷ (aggregate output tokens/s × 3600 s/h) × 1e6.
    NaN where the accelerator has no price.
    """
    price = df["hardware"].map(lambda h: price_per_hour.get(h)).astype(float)
    per_hour = price * df["devices"]  # USD per hour of the whole deployment
    tokens_per_hour = df["output_tokens_per_s"] * SECONDS_PER_HOUR
    return per_hour / tokens_per_hour * TOKENS_PER_MILLION


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
    """
    if df.empty:
        return np.zeros(0, dtype=bool)
    key = df[groups].astype(str).agg("|".join, axis=1) if groups else pd.Series("", df.index)
    order = np.lexsort((-df[y].to_numpy(), -df[x].to_numpy(), key.to_numpy()))
    ys, keys = df[y].to_numpy()[order], key.to_numpy()[order]
    best = pd.Series(ys).groupby(keys).cummax().to_numpy()
    before = np.concatenate(([-np.inf], best[:-1]))
    first = np.concatenate(([True], keys[1:] != keys[:-1]))
    before[first] = -np.inf
    on_front = np.zeros(len(df), dtype=bool)
    on_front[order] = ys > before
    return on_front


def ranked(df: pd.DataFrame, slo: Slo, price_per_hour: Mapping[str, float | None]):
    """The grid with `meets_slo` and `usd_per_1m_output_tokens`, cheapest meeting rows first.

    Rows that meet the SLOs come first, by cost (unpriced last), then the rest by cost.
    """
    out = df.assign(
        usd_per_1m_output_tokens=usd_per_1m_output_tokens(df, price_per_hour),
        meets_slo=meets_slo(df, slo),
    )
    return out.sort_values(
        ["meets_slo", "usd_per_1m_output_tokens", Y],
        ascending=[False, True, False],
        na_position="last",
        kind="stable",
    ).reset_index(drop=True)


def infeasible_reason(df: pd.DataFrame, slo: Slo) -> str | None:
    """Why no configuration meets the SLOs (None when some do), in words with numbers.

    Says "nothing fits" when no configuration fits in memory; otherwise names the limit the
    fitting configurations come closest to meeting and by how much the best one misses it.
    """
    if df.empty:
        return "The grid is empty: choose at least one accelerator, batch size and precision."
    fitting = df[df["fits_in_memory"].to_numpy(dtype=bool)]
    if fitting.empty:
        return (
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
    return "No fitting configuration meets the SLOs: " + "; ".join(misses) + "."


_UNIT = {"ttft_ms": "ms", "tpot_ms": "ms", "tokens_per_s_per_user": "tokens/s"}
_WORD = {"ttft_ms": "TTFT", "tpot_ms": "TPOT", "tokens_per_s_per_user": "tokens/s per user"}


def _miss_words(column: str, miss: float, limit: float) -> str:
    unit = _UNIT[column]
    if column == "tokens_per_s_per_user":
        return f"the fastest is {miss:,.4g} {unit} short of {limit:,.4g} {unit} per user"
    limit_words = f"{_WORD[column]} ≤ {limit:,.4g} {unit}"
    return f"every configuration misses {limit_words} by at least {miss:,.4g} {unit}"


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


def describe(row: pd.Series, slo: Slo, names: Mapping[str, str]) -> str:
    """One configuration in words: what it is, what it gives, what binds it."""
    what = (
        f"{int(row['devices'])}× {names.get(row['hardware'], row['hardware'])} "
        f"(TP{int(row['tp'])}, PP{int(row['pp'])}), batch {int(row['batch_size']):,}, "
        f"{row['precision']}"
    )
    gives = (
        f"{row[Y]:,.4g} output tokens/s per GPU, {row[X]:,.4g} tokens/s per user, "
        f"TTFT {row['ttft_ms']:,.4g} ms, TPOT {row['tpot_ms']:,.4g} ms"
    )
    binds = binding_limit(row, slo)
    limit = f"{_WORD[binds]} is the SLO with the least headroom" if binds else "no SLO is set"
    resource = f"decode is {row['decode_bottleneck']}-bound"
    comm = row.get("decode_comm_ms")
    if comm is not None and row["tpot_ms"] > 0 and comm > 0:
        resource += f", communication {comm / row['tpot_ms']:.0%} of a decode step"
    return f"{what}: {gives}. Why: {limit}; {resource}."
