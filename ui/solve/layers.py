"""The layer table of a catalogued CNN (ResNet-50, MobileNetV2): for reading, as CSV, as a roofline.

`engine.layer_table` writes one row per convolution or fully connected layer, generated from
the network's architecture (docs/model.md). Here: readable headers with units and numbers from
ui.words.format for the screen, the engine's snake_case unit-suffixed columns plus the scenario and
profile for the CSV, the totals beside the catalogue's whole-model figures, and each layer as a
point on the roofline through ui.charts.operators.operator_roofline (one builder for operators and
layers). Pure functions: no streamlit.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import engine
from ui.charts.operators import (
    GAP_WORDS,
    OPERATORS_WORD,
    operator_roofline,
    phase_label,
    roof_values,
)
from ui.words.format import fmt, fmt_all, pct
from ui.words.i18n import N_, _
from ui.words.text import bound

NETWORKS = ("ResNet-50", "MobileNetV2")  # the CNNs engine.layer_table knows
PHASE = "prefill"  # the builder's phase for a forward pass (relabelled below)
FORWARD = N_("forward pass")
# engine column: (on-screen header, ui.words.format unit or None (as is), factor to that unit)
DISPLAY = {
    "name": (N_("Layer"), None, 1.0),
    "kind": (N_("Kind"), None, 1.0),
    "shape": (N_("Shape (kernel, channels in→out, stride, output side)"), None, 1.0),
    "params": (N_("Parameters"), "", 1.0),
    "macs": (N_("Multiply-accumulates (batch)"), "MAC", 1.0),
    "flops": (N_("FLOPs (batch)"), "FLOP", 1.0),
    "weight_bytes": (N_("Weights"), "B", 1.0),
    "activation_bytes": (N_("Activations in + out (batch)"), "B", 1.0),
    "bytes": (N_("Bytes moved (batch)"), "B", 1.0),
    "arithmetic_intensity_flop_per_byte": (N_("Intensity (FLOP/byte)"), "", 1.0),
    "t_compute_ms": (N_("Compute time"), "s", 1e-3),
    "t_memory_ms": (N_("Memory time"), "s", 1e-3),
    "time_ms": (N_("Time (roofline)"), "s", 1e-3),
    "bottleneck": (N_("Bound"), None, 1.0),
}
CSV_RENAMES = dict(name="layer", flops="flop", macs="mac", bytes="bytes_moved")  # CSV: English


def has_layers(model_id: str) -> bool:
    """True for a CNN whose layer table the engine generates."""
    return model_id in NETWORKS


def display_table(layers: pd.DataFrame) -> pd.DataFrame:
    """The layer rows under readable headers, numbers as ui.words.format text with their units."""
    out = {}
    for column, (header, unit, factor) in DISPLAY.items():
        values = layers[column].to_numpy()
        out[_(header)] = values if unit is None else fmt_all(values * factor, unit)
    return pd.DataFrame(out)


def csv_table(layers: pd.DataFrame, scenario: Mapping[str, object]) -> pd.DataFrame:
    """The CSV rows: the scenario (model, hardware, batch, precision, profile, assumptions) on
    every row, then the engine's columns, snake_case (`flop`, `mac`, `bytes_moved` per batch)."""
    front = pd.DataFrame({key: [value] * len(layers) for key, value in scenario.items()})
    body = layers.rename(columns=CSV_RENAMES).reset_index(drop=True)
    return pd.concat([front, body], axis=1)


def totals(layers: pd.DataFrame, spec) -> dict[str, float]:
    """The table's sums beside the catalogue's whole-model figures (a ModelSpec, 1 FLOP/MAC).

    Returns:
        the layer count, parameters, MACs per sample (the table's are per batch), the
        catalogue's figures, the relative differences and the layers' summed time (s).
    """
    params = float(layers["params"].sum())
    batch = float(layers.attrs.get("batch_size", 1))
    macs = float(layers["macs"].sum()) / batch
    return {
        "layers": float(len(layers)),
        "params": params,
        "macs_per_sample": macs,
        "catalogue_params": float(spec.params),
        "catalogue_macs": float(spec.flops_per_sample),
        "params_diff": params / float(spec.params) - 1.0,
        "macs_diff": macs / float(spec.flops_per_sample) - 1.0,
        "time_s": float(layers["time_ms"].sum()) * 1e-3,
    }


def totals_text(t: Mapping[str, float], name: str) -> str:
    """One sentence: the layer table's totals against the catalogue (plain text, no markup)."""
    return _(
        "{layers} layers generated from {name}'s architecture: {macs} MACs per sample "
        "(catalogue {catalogue_macs} MACs, {macs_diff}) and {params} parameters (catalogue "
        "{catalogue_params}, {params_diff})."
    ).format(
        layers=int(t["layers"]),
        name=name,
        macs=fmt(t["macs_per_sample"]),
        catalogue_macs=fmt(t["catalogue_macs"]),
        macs_diff=_signed(t["macs_diff"]),
        params=fmt(t["params"]),
        catalogue_params=fmt(t["catalogue_params"], ""),
        params_diff=_signed(t["params_diff"]),
    )


def whole_pass_text(t: Mapping[str, float], r: Mapping) -> str:
    """Why the layer chart's whole forward pass is not the headline's point (plain text).

    Args:
        t: engine.layer_totals of the layer table.
        r: the whole-model solve's result, `SolveResult.as_dict()`.
    """
    alpha, batch = r["assumptions"]["activation_fraction"], int(r["batch_size"])
    ms = lambda v: fmt(v * 1e-3, "s")  # noqa: E731  (the solve's times are in ms)
    return _(
        "Two intensities for one forward pass: the headline is the tutorial's whole-model "
        "figure, which moves weights × (1 + α·batch) with α = {alpha} ({bytes} at batch "
        "{batch}): {intensity}. The layer view counts what each layer moves, its weights and its "
        "activations in and out ({layer_bytes}: {weights} of weights + {activations} of "
        "activations), so its whole forward pass (the star) sits at {layer_intensity}. Time: "
        "the layers' own rooflines sum to {layer_time} where the whole-model roofline gives "
        "max(compute {compute}, memory {memory}); both add the same {overhead} of fixed "
        "overhead (layers × τ + dispatch): the star's {star} against the headline's {latency}."
    ).format(
        alpha=fmt(alpha),
        bytes=fmt(r["bytes"], "B"),
        batch=f"{batch:,}",
        intensity=fmt(r["arithmetic_intensity_flop_per_byte"], "FLOP/byte"),
        layer_bytes=fmt(t["bytes"], "B"),
        weights=fmt(t["weight_bytes"], "B"),
        activations=fmt(t["activation_bytes"], "B"),
        layer_intensity=fmt(t["arithmetic_intensity_flop_per_byte"], "FLOP/byte"),
        layer_time=fmt(t["time_s"], "s"),
        compute=ms(r["t_compute_ms"]),
        memory=ms(r["t_memory_ms"]),
        overhead=ms(r["t_overhead_ms"]),
        star=fmt(t["time_s"] + r["t_overhead_ms"] * 1e-3, "s"),
        latency=ms(r["latency_ms"]),
    )


def _signed(fraction: float) -> str:
    return ("+" if fraction >= 0 else "") + pct(fraction)


def as_operators(layers: pd.DataFrame, overhead_s: float) -> pd.DataFrame:
    """Layer rows in engine.operators' shape (one forward pass, count 1 each), plus an
    `overhead` row carrying the whole-model solve's fixed overhead (layers · τ + dispatch)."""
    ops = pd.DataFrame(
        {
            "phase": PHASE,
            "name": layers["name"].astype(str),
            "layer": layers["shape"].astype(str),
            "count": 1,
            "op_class": "gemm",  # convolutions and the classifier run on the GEMM roof
            "flops": layers["flops"].to_numpy(dtype=float),
            "bytes": layers["bytes"].to_numpy(dtype=float),
            "arithmetic_intensity_flop_per_byte": layers["arithmetic_intensity_flop_per_byte"],
            "time_ms": layers["time_ms"].to_numpy(dtype=float),
            "total_time_ms": layers["time_ms"].to_numpy(dtype=float),
            "bottleneck": layers["bottleneck"].astype(str),
            "peak_flop_per_s": layers["peak_flop_per_s"].to_numpy(dtype=float),
            "achievable_flop_per_s": layers["achievable_flop_per_s"].to_numpy(dtype=float),
            "achievable_bytes_per_s": layers["achievable_bytes_per_s"].to_numpy(dtype=float),
        }
    )
    extra = dict(phase=PHASE, name="overhead", layer="all", count=1)  # not drawn
    extra |= {"op_class": "overhead", "flops": 0.0, "bytes": 0.0}
    extra |= {"arithmetic_intensity_flop_per_byte": 0.0, "time_ms": overhead_s * 1e3}
    extra |= {"total_time_ms": overhead_s * 1e3, "bottleneck": "overhead"}
    extra |= dict.fromkeys(("peak_flop_per_s", "achievable_flop_per_s"), float("nan"))
    extra |= {"achievable_bytes_per_s": float("nan")}
    return pd.concat([ops, pd.DataFrame([extra])], ignore_index=True)


def layer_hover(layers: pd.DataFrame) -> list[str]:
    """One hover text per layer: name, shape, FLOPs, bytes, intensity, time, bound (escaped)."""
    share = layers["time_ms"] / layers["time_ms"].sum()
    text = _(
        "<b>{name}</b> ({kind})<br>{shape}<br>{flops}, {bytes} · intensity {intensity}<br>"
        "time {time} ({share} of the layers') · {bound}"
    )
    return [
        text.format(
            name=html.escape(str(r.name)),
            kind=html.escape(str(r.kind)),
            shape=html.escape(str(r.shape)),
            flops=fmt(r.flops, "FLOP"),
            bytes=fmt(r.bytes, "B"),
            intensity=fmt(r.arithmetic_intensity_flop_per_byte, "FLOP/B"),
            time=fmt(r.time_ms * 1e-3, "s"),
            share=pct(s),
            bound=html.escape(bound(r.bottleneck)),
        )
        for r, s in zip(layers.itertuples(), share, strict=True)
    ]


def layer_roofline(layers: pd.DataFrame, hw, overhead_s: float, title: str) -> go.Figure:
    """Each layer a point on the accelerator's roofline, and the whole forward pass.

    Args:
        layers: engine.layer_table rows (they carry their roofs).
        hw: the HardwareSpec (its name labels the roofs).
        overhead_s: the solve's fixed overhead, drawn as the whole pass's dotted gap.
        title: the chart title (escaped by the builder).
    """
    ops = as_operators(layers, overhead_s)
    fig = operator_roofline(ops, roof_values(ops, hw.name), title)
    hover = np.asarray(layer_hover(layers), dtype=object)
    label, forward = phase_label(PHASE), _(FORWARD)
    operators = _("Operators: {phase}").format(phase=label)
    for trace in fig.data:
        name = trace.name or ""
        if name == operators:
            name = _("Layers ({phase}; area ∝ time)").format(phase=forward)
            trace.update(name=name, hovertext=hover)
        elif label in name:
            trace.update(name=name.replace(label, forward))
            trace.update(hovertext=[_whole_hover(t, label, forward) for t in trace.hovertext])
    for note in fig.layout.annotations:
        note.text = note.text.replace(label, forward)
    return fig


def _whole_hover(text: str, label: str, forward: str) -> str:
    """The builder's whole-step hover in a CNN's words (layers, overhead; no communication)."""
    text = text.replace(label, forward).replace(_(OPERATORS_WORD) + " ", _("layers") + " ")
    return text.replace(_(GAP_WORDS), _("overhead (layers · τ + dispatch)"))


def layer_frame(model_id: str, hw, *, batch_size: int, precision: str, **assumptions):
    """engine.layer_table with the batch recorded (for `totals`)."""
    layers = engine.layer_table(
        model_id, hw, batch_size=batch_size, precision=precision, **assumptions
    )
    layers.attrs["batch_size"] = batch_size
    return layers
