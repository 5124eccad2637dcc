"""The single-solve page's look inside the model, beside the tutorial's whole-model point.

For ResNet-50 and MobileNetV2: the layer table generated from the architecture (ui.layers_view:
totals against the catalogue, each layer a point on the roofline). For decoder LLMs with
shapes: the serving model's operators of a prefill and of a mean decode step on one device
(ui.ops_view, ui.figures_ops). docs/model.md describes both. Streamlit rendering only; the
tables and figures come from the pure builders.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

import engine
from ui import common
from ui import layers_view as lv
from ui import ops_view as ov
from ui.figures_ops import operator_roofline, roof_values, step_breakdown
from ui.params import Param, number, write_number
from ui.state import widget_key

TOKENS = {"input_tokens": 1024, "output_tokens": 256}  # the planner's and Compare's defaults
OPERATOR_ASSUMPTIONS = ("efficiency", "layer_overhead_us", "dispatch_overhead_ms")


def has_operators(model) -> bool:
    """A decoder LLM with shapes (the serving model's operators need them)."""
    return getattr(model, "arch", None) is not None


def token_params() -> list[Param]:
    """`input_tokens` and `output_tokens` (whole numbers; written for LLMs only)."""
    top = engine.MAX_TOKENS
    return [Param(n, number(1, top, whole=True), write_number) for n in TOKENS]


def token_inputs(page: str) -> dict[str, int]:
    """The request shape of the operator view (sidebar, decoder LLMs only)."""
    out = {}
    labels = {"input_tokens": "Input tokens (prompt)", "output_tokens": "Output tokens"}
    for name, label in labels.items():
        out[name] = int(
            st.number_input(
                label,
                1,
                engine.MAX_TOKENS,
                step=128,
                key=widget_key(page, name),
                help="The operator view's request: a prefill of the input tokens, then decode "
                "steps (the one shown at the mean context, input + ⌊output / 2⌋).",
            )
        )
    return out


def serving_values(profile: engine.Profile, overrides: Mapping[str, object]) -> dict:
    """The profile's serving assumptions with the page's edits (user names; None: unset)."""
    values = dict(profile.values())
    values |= {k: overrides.get(k) for k in OPERATOR_ASSUMPTIONS}
    values.pop("activation_fraction", None)  # the whole-model solve's alone
    return values


def show_operators(model_id, hw, batch, precision, profile, overrides, tokens, label) -> None:
    """Operators of a prefill and a decode step on one device, next to the whole-model point."""
    values = serving_values(profile, overrides)
    set_values = {k: v for k, v in values.items() if v is not None}
    # every value the profile sets is passed by name over the tutorial's defaults, so a custom
    # profile from a link (not a built-in name step_table could look up) works the same way
    ops = ov.step_table(
        model_id, hw, profile="tutorial", batch_size=batch,
        precision=precision, **tokens, **set_values,
    )  # fmt: skip
    roof = roof_values(hw, precision, _roof_assumptions(values))
    title = f"Operators: {model_id} on {hw.name}, batch {batch:,}, {precision}"
    st.plotly_chart(operator_roofline(ops, roof, title), key="solve_ops_roofline")
    st.plotly_chart(step_breakdown(ops), key="solve_ops_breakdown")
    st.dataframe(ov.display_table(ops), key="solve_ops_table", hide_index=True)
    scenario = {"model": model_id, "hardware": hw.id, "tp": 1, "pp": 1, "batch_size": batch}
    scenario |= {"input_tokens": tokens["input_tokens"], "output_tokens": tokens["output_tokens"]}
    scenario |= {"precision": precision, "profile": label}
    csv = ov.csv_table(ops, scenario, values)
    name = f"operators_{model_id}_{hw.id}_b{batch}_{precision}.csv"
    common.download_csv(csv, name, "solve_ops_csv", "Download the operators (CSV)", lazy=True)


def _roof_assumptions(values: Mapping[str, object]) -> dict:
    base = engine.get_profile("tutorial").values()
    out = {k: values.get(k) for k in ("attention_efficiency", "expert_efficiency")}
    for k in ("efficiency", "bandwidth_efficiency"):
        out[k] = values.get(k) if values.get(k) is not None else base[k]
    return out


def show_layers(model_id, model, hw, batch, precision, overrides, result, label) -> None:
    """The layer table generated from the architecture, each layer on the roofline."""
    layers = lv.layer_frame(model_id, hw, batch_size=batch, precision=precision, **overrides)
    st.caption(lv.totals_text(lv.totals(layers, model), common.plain(model.name)))
    a = {"efficiency": overrides["efficiency"], "bandwidth_efficiency": 1.0}
    title = f"Layers: {model.name} on {hw.name}, batch {batch:,}, {precision}"
    fig = lv.layer_roofline(layers, hw, precision, a, result.t_overhead_s, title)
    st.plotly_chart(fig, key="solve_layers_roofline")
    st.dataframe(lv.display_table(layers), key="solve_layers_table", hide_index=True)
    scenario = {"model": model_id, "hardware": hw.id, "batch_size": batch}
    scenario |= {"precision": precision, "profile": label, **overrides}
    name = f"layers_{model_id}_{hw.id}_b{batch}_{precision}.csv"
    csv = lv.csv_table(layers, scenario)
    common.download_csv(csv, name, "solve_layers_csv", "Download the layers (CSV)", lazy=True)
