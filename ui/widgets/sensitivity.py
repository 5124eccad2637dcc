"""The "Sensitivity" section of /decode (and lesson 09's tables): which figure of the
accelerator is worth improving for this request (a tornado of elasticities, a table with
CSV), and the smallest memory bandwidth, FLOP/s and memory that meet an ITL target
(engine.sensitivity and engine.synthesis; docs/model.md, "Sensitivity and synthesis"). Its
inputs are link parameters (ui/decode/link.py `sensitivity_params`); it is computed only while
its section is open.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import engine
from ui.charts.tornado import tornado_figure
from ui.core.downloads import download_csv
from ui.links.params import Link
from ui.widgets.pickers import number_input
from ui.words.format import fmt, pct, sig
from ui.words.i18n import N_, _
from ui.words.text import plain

PARAMETER_LABELS = {
    "peak_flops": N_("Peak FLOP/s"),
    "memory_bandwidth": N_("Memory bandwidth"),
    "memory_capacity": N_("Memory capacity"),
    "interconnect_bandwidth": N_("Link bandwidth"),
    "weight_stream_bandwidth": N_("Weight-streaming bandwidth"),
    "efficiency": N_("Compute efficiency η"),
    "layer_overhead": N_("Layer overhead τ"),
    "dispatch_overhead": N_("Dispatch overhead d"),
}
METRIC_LABELS = {
    "tpot_ms": N_("TPOT (time per output token)"),
    "ttft_ms": N_("TTFT (time to first token)"),
    "e2e_latency_ms": N_("Request latency"),
    "output_tokens_per_s": N_("Output tokens/s"),
    "cost_per_million_output_tokens_usd": N_("Cost per 1M output tokens"),
}
UNITS = {"FLOP/s": "FLOP/s", "B/s": "B/s", "B": "B", "s": "s", "": ""}


def inputs(link: Link) -> tuple[float, float, str]:
    """(ITL target in ms, perturbation as a fraction, the metric the tornado shows): drawn with
    the page's other inputs, so the link keeps them while the section is closed."""
    target = number_input(link, "target_tpot_ms", _("ITL target for the synthesis (ms)"))
    step = number_input(link, "sensitivity_step_pct", _("Sensitivity: perturbation ± (%)"))
    metric = st.selectbox(
        _("Sensitivity: result in the tornado"),
        list(link["sensitivity_metric"].read.options),
        format_func=lambda k: _(METRIC_LABELS[k]),
        key=link.key("sensitivity_metric"),
    )
    return float(target), float(step) / 100.0, metric


def labels() -> dict[str, str]:
    return {k: _(v) for k, v in PARAMETER_LABELS.items()}


def _value(value: float | None, unit: str) -> str:
    return fmt(value, UNITS.get(unit, unit)) if value is not None else "—"


def elasticity_table(result: engine.Sensitivity, metric: str) -> pd.DataFrame:
    """The rows of one metric under readable headers (numbers as text with units)."""
    rows = [r for r in result.rows if r["metric"] == metric]
    step = pct(result.step)
    return pd.DataFrame(
        {
            _("Parameter"): [_(PARAMETER_LABELS[r["parameter"]]) for r in rows],
            _("As given"): [_value(r["value"], r["unit"]) for r in rows],
            _("Elasticity"): [
                sig(r["elasticity"]) if r["elasticity"] is not None else "—" for r in rows
            ],
            _("Change at −{step}").format(step=step): [
                pct(r["change_at_minus_step"]) for r in rows
            ],
            _("Change at +{step}").format(step=step): [pct(r["change_at_plus_step"]) for r in rows],
        }
    )


def synthesis_table(result: engine.Synthesis) -> pd.DataFrame:
    rows = result.rows
    return pd.DataFrame(
        {
            _("Parameter"): [_(PARAMETER_LABELS[r["parameter"]]) for r in rows],
            _("As given"): [_value(r["catalogued"], r["unit"]) for r in rows],
            _("Needed, the rest as given"): [_value(r["required"], r["unit"]) for r in rows],
            _("× as given"): [
                sig(r["required_over_catalogued"]) if r["required"] else "—" for r in rows
            ],
            _("Needed, the other rates unbounded"): [
                _value(r["required_others_unbounded"], r["unit"]) for r in rows
            ],
        }
    )


def binding_text(result: engine.Sensitivity, metric: str) -> str:
    name = result.binding(metric)
    if name is None:
        return _("No parameter moves this result.")
    e = result.elasticity(name, metric)
    text = _(
        "**{parameter}** binds: {step} more of it changes the result by {change} (elasticity {e})."
    )
    return text.format(
        parameter=_(PARAMETER_LABELS[name]),
        step=pct(result.step),
        change=pct(e * result.step),
        e=sig(e),
    )


def section(
    dep: engine.Deployment, request: engine.Batch, chosen: tuple[float, float, str], file_stem: str
) -> None:
    """The section's body: tornado, elasticity table and CSV, synthesis table and CSV, for the
    `inputs` chosen (target ms, step, metric)."""
    target, step, metric = chosen
    try:
        sens = engine.sensitivity(dep, request, engine.Perturbation(step=step))
        syn = engine.synthesis(dep, request, engine.Target(value=target))
    except ValueError as exc:
        st.error(plain(str(exc)), icon="🚫")
        return
    rows = [r for r in sens.rows if r["metric"] == metric]
    title = _("{metric}: change when each figure moves ±{step}").format(
        metric=_(METRIC_LABELS[metric]), step=pct(step)
    )
    st.plotly_chart(
        tornado_figure(rows=rows, labels=labels(), title=title, step=step), key="sens_tornado"
    )
    st.markdown(binding_text(sens, metric))
    st.dataframe(elasticity_table(sens, metric), key="sens_table", hide_index=True)
    st.caption(
        _(
            "Elasticity = (ΔT/T) ÷ (Δp/p) by a central difference: the serving model re-run with "
            "one figure at −{step} and +{step}. A term that is all memory time has −1/(1 − h²) "
            "(−1.01 at 10 %). Memory capacity changes no time (a request that does not fit is "
            "flagged, not slowed)."
        ).format(step=pct(step))
    )
    download_csv(sens.frame(), f"{file_stem}_sensitivity.csv", "sens_csv")
    st.markdown(
        _(
            "**Inverse roofline**: the smallest figures for an ITL (TPOT) of {target}, each alone."
        ).format(target=fmt(target * 1e-3, "s"))
    )
    st.dataframe(synthesis_table(syn), key="synth_table", hide_index=True)
    st.caption(
        _(
            "Now: TPOT {tpot}. '—': no figure up to 10,000× the given one meets the target with "
            "the rest as given (a TPOT that is memory time cannot be bought with FLOP/s). "
            "'The other rates unbounded': FLOP/s, bandwidth and weight streaming raised "
            "1,000×, the requirement of that resource alone. Memory: the smallest that holds "
            "the weights and the KV cache."
        ).format(tpot=fmt(syn.baseline * 1e-3, "s"))
    )
    download_csv(syn.frame(), f"{file_stem}_synthesis.csv", "synth_csv")
