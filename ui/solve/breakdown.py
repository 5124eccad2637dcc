"""The single-solve page's look inside the model, under the tutorial's whole-model roofline.

For ResNet-50 and MobileNetV2: the layer table generated from the architecture (ui.solve.layers:
totals against the catalogue, each layer a point on the roofline). For decoder LLMs with
shapes: the serving model's operators of a prefill and of a mean decode step on one device
(ui.charts.operator_table, ui.charts.operators). docs/model.md describes both. Streamlit
rendering only; the tables and figures come from the pure builders.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import streamlit as st

import engine
from ui.charts import operator_table as ov
from ui.charts.operators import operator_roofline, roof_values, step_breakdown
from ui.core import frame
from ui.core.downloads import download_csv
from ui.links.params import Link
from ui.solve import layers as lv
from ui.solve.link import PAGE
from ui.widgets.tokens import token_inputs as token_fields
from ui.words.i18n import N_, _
from ui.words.text import plain

OPERATOR_ASSUMPTIONS = ("efficiency", "layer_overhead_us", "dispatch_overhead_ms")
DETAILS_KEY = frame.section_key(PAGE, "details")  # the operators' or layers' expander


def has_operators(model) -> bool:
    """A decoder LLM with shapes (the serving model's operators need them)."""
    return getattr(model, "arch", None) is not None


def token_inputs(link: Link) -> dict[str, int]:
    """The request shape of the operator view (sidebar, decoder LLMs only)."""
    return token_fields(
        link,
        _(
            "The operator view's request: a prefill of the input tokens, then decode steps (the "
            "one shown at the mean context, input + ⌊output / 2⌋)."
        ),
    )


def serving_values(profile: engine.Profile, overrides: Mapping[str, object]) -> dict:
    """The profile's serving assumptions with the page's edits (user names; None: unset)."""
    values = dict(profile.values())
    values |= {k: overrides.get(k) for k in OPERATOR_ASSUMPTIONS}
    values.pop("activation_fraction", None)  # the whole-model solve's alone
    return values


@dataclass(frozen=True)
class Scenario:
    """What the single-solve page chose, for the sections below its whole-model figures."""

    model_id: str
    model: object  # ModelSpec
    hw: object  # HardwareSpec
    batch: int
    precision: str
    profile: engine.Profile
    overrides: Mapping[str, object]  # the page's assumptions (user names)
    result: object  # the whole-model SolveResult
    tokens: Mapping[str, int]  # input and output tokens (LLMs)
    label: str  # the profile as used: 'trtllm' or 'trtllm, edited'


def show(sc: Scenario) -> None:
    """The operator view (decoder LLMs with shapes) or the layer table (the two CNNs), each in
    an expander drawn (and computed) only while open."""
    if has_operators(sc.model):
        title, draw = N_("Operators (serving model, one device)"), show_operators
    elif lv.has_layers(sc.model_id):
        title, draw = N_("Layers (from the architecture)"), show_layers
    else:
        return
    box = frame.lazy_expander(_(title), DETAILS_KEY)
    if box is not None:
        with box:
            draw(sc)


def show_operators(sc: Scenario) -> None:
    """Operators of a prefill and a mean decode step on one device (tp = pp = 1)."""
    values = serving_values(sc.profile, sc.overrides)
    set_values = {k: v for k, v in values.items() if v is not None}
    # every value the profile sets is passed by name over the tutorial's defaults, so a custom
    # profile from a link (not a built-in name step_table could look up) works the same way
    dep = engine.Deployment.of(
        model=sc.model_id, hardware=sc.hw, profile="tutorial", precision=sc.precision, **set_values
    )
    ops = ov.step_table(dep, engine.Batch(batch_size=sc.batch, **sc.tokens))
    roof = roof_values(ops, sc.hw.name)
    title = _("Operators: {model} on {hardware}, batch {batch}, {precision}").format(
        model=sc.model.name, hardware=sc.hw.name, batch=f"{sc.batch:,}", precision=sc.precision
    )
    st.plotly_chart(operator_roofline(ops, roof, title), key="solve_ops_roofline")
    st.markdown(ov.binding_text(ops))
    i, o = sc.tokens["input_tokens"], sc.tokens["output_tokens"]
    context = ov.decode_context(i, o)
    step = (
        _("no decode step (1 output token)")
        if context is None
        else _(
            "the decode step at the mean context of {context} tokens ({input} input + half of "
            "{output} output)"
        ).format(context=f"{context:,}", input=f"{i:,}", output=f"{o:,}")
    )
    st.caption(
        _(
            "A prefill of {input} tokens per sequence (TTFT) and {step}, batch {batch}, "
            "profile {profile} (docs/model.md, Serving model). Counts are per step."
        ).format(input=f"{i:,}", step=step, batch=f"{sc.batch:,}", profile=sc.label)
    )
    st.plotly_chart(step_breakdown(ops), key="solve_ops_breakdown")
    st.dataframe(ov.display_table(ops), key="solve_ops_table", hide_index=True)
    scenario = {"model": sc.model_id, "hardware": sc.hw.id, "tp": 1, "pp": 1}
    scenario |= {"batch_size": sc.batch, **sc.tokens, "precision": sc.precision}
    scenario |= {"kv_precision": sc.precision, "profile": sc.label, "assumptions": values}
    csv = ov.csv_table(ops, scenario)
    name = f"operators_{sc.model_id}_{sc.hw.id}_b{sc.batch}_{sc.precision}.csv"
    download_csv(
        df=csv,
        filename=name,
        key="solve_ops_csv",
        label=_("Download the operators (CSV)"),
    )


def show_layers(sc: Scenario) -> None:
    """The layer table generated from the architecture, each layer on the roofline."""
    layers = lv.layer_frame(
        sc.model_id, sc.hw, batch_size=sc.batch, precision=sc.precision, **sc.overrides
    )
    title = _("Layers: {model} on {hardware}, batch {batch}, {precision}").format(
        model=sc.model.name, hardware=sc.hw.name, batch=f"{sc.batch:,}", precision=sc.precision
    )
    fig = lv.layer_roofline(layers=layers, hw=sc.hw, overhead_s=sc.result.t_overhead_s, title=title)
    st.plotly_chart(fig, key="solve_layers_roofline")
    st.caption(lv.totals_text(lv.totals(layers, sc.model), plain(sc.model.name)))
    st.caption(lv.whole_pass_text(engine.layer_totals(layers), sc.result.as_dict()))
    st.dataframe(lv.display_table(layers), key="solve_layers_table", hide_index=True)
    scenario = {"model": sc.model_id, "hardware": sc.hw.id, "batch_size": sc.batch}
    scenario |= {"precision": sc.precision, "profile": sc.label, **sc.overrides}
    name = f"layers_{sc.model_id}_{sc.hw.id}_b{sc.batch}_{sc.precision}.csv"
    csv = lv.csv_table(layers, scenario)
    download_csv(
        df=csv,
        filename=name,
        key="solve_layers_csv",
        label=_("Download the layers (CSV)"),
    )
