"""The headline metric grid of a single solve and its table of every figure.

Values come from the engine's SolveResult (SI floats) and are only formatted here, through
ui.words.format (one prefix chosen per value: "543 µs", "7.56 / 148 TFLOP/s", "68.8 mJ")."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine import IDLE_POWER_FRACTION, SolveResult
from ui.widgets.cards import cards
from ui.words.format import MISSING, fmt, fmt_bytes, fmt_scaled, pct
from ui.words.i18n import N_, _
from ui.words.text import FLOP_NOTE, bound

# Unit-suffixed engine names -> (suffix to drop, ui.words.format unit, factor to that unit)
SUFFIXES = (
    ("_flop_per_byte", "FLOP/byte", 1.0),
    ("_bytes_per_s", "B/s", 1.0),
    ("_tflops", "FLOP/s", 1e12),
    ("_per_s", "/s", 1.0),
    ("_bytes", "B", 1.0),
    ("_ms", "s", 1e-3),
    ("_us", "s", 1e-6),
    ("_s", "s", 1.0),
    ("_j", "J", 1.0),
)
FRACTIONS = {"overhead_share", "mfu", "efficiency", "activation_fraction"}
LABELS = {"flops": N_("FLOPs per batch"), "bytes": N_("Bytes moved per batch"), "mfu": "MFU"}
# The labels `readable` makes of SolveResult's fields, marked here: shown through `_()`.
FIELD_LABELS = (
    N_("Model"),
    N_("Hardware"),
    N_("Batch size"),
    N_("Precision"),
    N_("Peak precision"),
    N_("Bottleneck"),
    N_("Regime"),
    N_("Latency"),
    N_("T compute"),
    N_("T memory"),
    N_("T overhead"),
    N_("Overhead share"),
    N_("Arithmetic intensity (FLOP/byte)"),
    N_("Ridge (FLOP/byte)"),
    N_("Effective ridge (FLOP/byte)"),
    N_("Peak"),
    N_("Effective peak"),
    N_("Memory bandwidth"),
    N_("Attainable"),
    N_("Achieved"),
    N_("Overhead gap"),
    N_("Energy"),
    N_("Weight"),
    N_("Memory capacity"),
    N_("Fits in memory"),
    N_("Sample"),
    N_("Efficiency"),
    N_("Layer overhead"),
    N_("Dispatch overhead"),
    N_("Activation fraction"),
    N_("Flop convention"),
)


def energy_formula() -> str:
    """engine.ENERGY_FORMULA in the reader's language (the engine's idle share)."""
    idle = IDLE_POWER_FRACTION
    return _("TDP × ({idle} + {busy}·MFU) × latency").format(idle=f"{idle:g}", busy=f"{1 - idle:g}")


def solve_metrics(r: SolveResult) -> None:
    """Two rows of st.metric: bound, latency, throughput, MFU; AI, ridges, roof, energy."""
    convention = _(FLOP_NOTE[r.assumptions.flop_convention])
    (achieved, roof), unit = fmt_scaled((r.achieved_flop_per_s, r.attainable_flop_per_s), "FLOP/s")
    tip = _("{bound}: the larger of the compute and memory terms sets the latency")
    cards(
        [
            (_("Bottleneck"), _(r.bottleneck), tip.format(bound=bound(r.bottleneck))),
            (
                _("Latency"),
                fmt(r.latency_s, "s"),
                _("max(compute, memory) + fixed overhead, per batch"),
            ),
            (_("Throughput ({unit})").format(unit=f"{r.sample}s/s"), fmt(r.throughput_per_s), None),
            (_("MFU (% of peak)"), pct(r.mfu), _("achieved FLOP/s ÷ full peak FLOP/s")),
            (
                _("Arithmetic intensity (FLOP/byte)"),
                fmt(r.arithmetic_intensity_flop_per_byte),
                convention,
            ),
            (
                _("Ridge, effective / peak (FLOP/byte)"),
                f"{fmt(r.effective_ridge_flop_per_byte)} / {fmt(r.ridge_flop_per_byte)}",
                _("peak × efficiency ÷ bandwidth / peak ÷ bandwidth"),
            ),
            (
                _("Achieved / roof ({unit})").format(unit=unit),
                f"{achieved} / {roof}",
                _("the gap between them is the fixed overhead"),
            ),
            (_("Energy per batch"), fmt(r.energy_j, "J"), energy_formula()),
        ]
    )
    fit = _("fits") if r.fits_in_memory else _("does NOT fit")
    st.progress(
        min(1.0, r.weight_bytes / r.memory_capacity_bytes),
        text=_("Weights {weights} of {capacity} ({binary}) capacity — {fit}").format(
            weights=fmt_bytes(r.weight_bytes),
            capacity=fmt_bytes(r.memory_capacity_bytes),
            binary=fmt_bytes(r.memory_capacity_bytes, binary=True),
            fit=fit,
        ),
    )


def readable(name: str, value: object) -> tuple[str, str]:
    """An engine field as (human label, ui.words.format text): ('latency_ms', 0.5426) ->
    ('Latency', '543 µs'); fractions as percentages; text as is; None as '—'."""
    if value is None:
        return name.replace("_", " ").capitalize(), MISSING
    if isinstance(value, bool) or not isinstance(value, int | float):
        return name.replace("_", " ").capitalize(), str(value)
    if name in FRACTIONS:
        return LABELS.get(name, name.replace("_", " ").capitalize()), pct(value)
    if name in ("flops", "bytes"):
        return LABELS[name], fmt(value, "FLOP" if name == "flops" else "B")
    for suffix, unit, factor in SUFFIXES:
        if name.endswith(suffix):
            label = name.removesuffix(suffix).replace("_", " ").capitalize()
            if unit == "/s":
                return f"{label} (per s)", fmt(value)
            if unit == "FLOP/byte":
                return f"{label} (FLOP/byte)", fmt(value)
            return label, fmt(value * factor, unit)
    return name.replace("_", " ").capitalize(), fmt(value)


def result_table(r: SolveResult) -> pd.DataFrame:
    """Every figure of the result as (quantity, value) rows, for reading (the CSV keeps the
    engine's unit-suffixed names and full precision)."""
    d = r.as_dict()
    capacity = fmt_bytes(r.memory_capacity_bytes, binary=True)
    unit = f"({r.sample}s/s)"
    items = []
    for k, v in d.items():
        if k in ("assumptions", "warnings"):
            continue
        label, text = readable(k, v)
        text = f"{text} ({capacity})" if k == "memory_capacity_bytes" else text
        if label.endswith(" (per s)"):
            label = _("{label} {unit}").format(label=_(label.removesuffix(" (per s)")), unit=unit)
        items.append((_(label), text))
    for k, v in d["assumptions"].items():
        label, text = readable(k, v)
        name = _(label)
        name = name[0].lower() + name[1:] if name == label else name  # English: lower case
        items.append((_("Assumption: {name}").format(name=name), text))
    return pd.DataFrame(items, columns=[_("Quantity"), _("Value")])
