"""The batch-sweep page's headline cards, crossover prose and latency-budget cards (streamlit).

Every number is an engine column or the engine's exact crossover; this module only picks rows
and words them."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui.charts import sweep as fs
from ui.charts import tables
from ui.widgets.cards import Card, cards
from ui.words.format import fmt
from ui.words.i18n import _

TUTORIAL_COLUMNS = ["batch_size", "regime", "bottleneck", "latency_ms", "throughput_per_s"]
TUTORIAL_COLUMNS += ["marginal_throughput_gain_pct", "arithmetic_intensity_flop_per_byte"]
TUTORIAL_COLUMNS += ["achieved_tflops", "attainable_tflops", "mfu", "t_overhead_ms", "energy_j"]


def ms(milliseconds: float) -> str:
    """A time given in ms (the sweep's columns), formatted with its prefix: '1.24 ms'."""
    return fmt(milliseconds / 1e3, "s")


def crossover_card(first: int | None, exact: int | None, serving: bool) -> Card:
    """The crossover: the engine's exact smallest compute-bound batch (tutorial view), and the
    first compute-bound batch in the user's list (which is all the serving views show)."""
    listed = tables.crossover_text(first)
    if serving:
        return (
            _("Crossover batch (first in your list)"),
            listed,
            _("The first batch in your list whose decode step is compute-bound."),
        )
    notes = [_("first in your list: {batch}").format(batch=listed)]
    if first is not None and exact is not None and first != exact:
        notes.append(first_vs_exact(first, exact))
    return (
        _("Crossover batch (exact, samples)"),
        _("never") if exact is None else f"{exact:,}",
        _("The smallest batch whose compute time exceeds its memory time (engine)."),
        *notes,
    )


def first_vs_exact(first: int, exact: int) -> str:
    """Why a sweep's crossover differs from the exact one (the tutorial's H100 "batch 4")."""
    return _(
        "{first} is the first compute-bound batch of the list, as the tutorial reports it (its "
        "'crosses over at batch 4' for H100 is the first power of two in its sweep); the exact "
        "crossover is {exact}."
    ).format(first=f"{first:,}", exact=f"{exact:,}")


def never_text(df: pd.DataFrame, exact: int | None, serving: bool) -> str:
    """Why no batch of the list is compute-bound, and what batch would be."""
    last = int(df["batch_size"].max())
    ridge = float(df["effective_ridge_flop_per_byte"].iloc[0])
    text = _(
        "**Never compute-bound within this sweep.** Every batch up to {last} stays below the "
        "effective ridge of {ridge}; "
    ).format(last=f"{last:,}", ridge=fmt(ridge, "FLOP/byte"))
    if serving:
        return text + _("each sequence's KV cache adds bytes as fast as it adds work.")
    if exact is None:
        return text + _(
            "more batch never crosses it: activation traffic (α) grows as fast as the work, "
            "so intensity levels off below the ridge."
        )
    return text + _("batch ≥ {batch} would cross it (extend the list).").format(batch=f"{exact:,}")


def show_cards(df: pd.DataFrame, first: int | None, exact: int | None, serving: bool) -> None:
    """Crossover, best throughput, latency range, ridges; then the never-crossed note."""
    unit, note = tables.sample_unit(df), "FLOP/byte"
    best = df.loc[df["throughput_per_s"].idxmax()]
    lo, hi = df["latency_ms"].iloc[0], df["latency_ms"].iloc[-1]
    b0, b1 = int(df["batch_size"].iloc[0]), int(df["batch_size"].iloc[-1])
    eff, ridge = df["effective_ridge_flop_per_byte"].iloc[0], df["ridge_flop_per_byte"].iloc[0]
    # one figure per card (a range "543 µs → 7.24 ms" was cut to "543 µs → 7.24…" in a
    # narrow column); the other end of the range in the caption under it
    cards(
        [
            crossover_card(first, exact, serving),
            (
                _("Best throughput ({unit})").format(unit=unit),
                fmt(best["throughput_per_s"]),
                None,
                at_batch(best),
            ),
            (
                _("Latency at batch {batch}").format(batch=f"{b1:,}"),
                ms(hi),
                None,
                _("{time} at batch {batch}").format(time=ms(lo), batch=f"{b0:,}"),
            ),
            (
                _("Effective ridge ({unit})").format(unit=note),
                fmt(eff),
                None,
                _("theoretical {ridge} (the engine's ridge)").format(ridge=fmt(ridge, note)),
            ),
        ]
    )
    if first is None:
        st.info(never_text(df, exact, serving))


def show_budget(df: pd.DataFrame, budget: float | None) -> None:
    """The largest batch and the best throughput within the latency budget, or why none."""
    if budget is None:
        return
    within = fs.budget_rows(df, budget)
    if within is None:
        fastest = df.loc[df["latency_ms"].idxmin()]
        st.warning(
            _(
                "No batch meets {budget}: the fastest is {latency} (batch {batch}), of which "
                "fixed overhead is {overhead}."
            ).format(
                budget=ms(budget),
                latency=ms(fastest["latency_ms"]),
                batch=f"{int(fastest['batch_size']):,}",
                overhead=ms(fastest["t_overhead_ms"]),
            )
        )
        return
    largest, fastest = within
    unit = tables.sample_unit(df)
    cards(
        [
            (
                _("Largest batch within {budget}").format(budget=ms(budget)),
                f"{largest['batch_size']:,}",
                None,
                _("latency {time}").format(time=ms(largest["latency_ms"])),
            ),
            (
                _("Best throughput within {budget} ({unit})").format(budget=ms(budget), unit=unit),
                fmt(fastest["throughput_per_s"]),
                None,
                at_batch(fastest),
            ),
        ]
    )


def at_batch(row) -> str:
    """'at batch 64 (1.24 ms)': where a best throughput is reached."""
    return _("at batch {batch} ({latency})").format(
        batch=f"{row['batch_size']:,}", latency=ms(row["latency_ms"])
    )
