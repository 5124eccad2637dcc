"""Figures of the training planner: the chosen configuration's step time and memory per GPU,
and the scaling curves (docs/model.md, "Training step").

Pure builders over `engine.train(...).as_dict()` (`r`) and `engine.train_search` rows (no
streamlit, no physics): every bar segment is one of the engine's terms, which add up to its
step time or memory per GPU; numbers in labels and hover text come from ui.words.format. A
configuration that does not fit is drawn as what it needs against the usable-memory line, never
as a step time.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts.theme import COLORS, GAP_COLOR, legend_below, log_axis, wrap_title
from ui.train.link import RECOMPUTE_WORDS
from ui.words.format import fmt, fmt_all, pct
from ui.words.i18n import N_, _

STEP_PARTS = (  # (label, translated where shown; the engine's key, colour)
    (N_("compute"), "compute_s", COLORS[2]),
    (N_("tensor-parallel communication"), "comm_tp_s", COLORS[4]),
    (N_("context-parallel communication"), "comm_cp_s", COLORS[5]),
    (N_("expert-parallel communication"), "comm_ep_s", COLORS[6]),
    (N_("pipeline sends"), "comm_pp_s", COLORS[7]),
    (N_("data-parallel communication (exposed)"), "comm_dp_s", COLORS[1]),
    (N_("pipeline bubble"), "bubble_s", COLORS[3]),
    (N_("overhead"), "overhead_s", GAP_COLOR),
    (N_("optimizer step"), "optimizer_s", COLORS[0]),
)
MEMORY_PARTS = (
    (N_("weights"), "weight_bytes_per_gpu", COLORS[0]),
    (N_("gradients"), "gradient_bytes_per_gpu", COLORS[2]),
    (N_("optimizer state"), "optimizer_bytes_per_gpu", COLORS[3]),
    (N_("activations"), "activation_bytes_per_gpu", COLORS[4]),
)
SCHEDULE_NAMES = {"dualpipe": "DualPipe", "dualpipev": "DualPipeV"}  # their authors' names
LIMIT_COLOR = "#d62728"


def config_text(r: Mapping) -> str:
    """'tp 8 · pp 4 · cp 1 · vp 5 · ep 1 · dp 2 · micro-batch 1 · ZeRO 1 · selective
    recomputation (core_attn, moe_act)', in the reader's language."""
    parts = [f"{k} {int(r[k])}" for k in ("tp", "pp", "cp", "vp", "ep", "dp")]
    etp = r.get("etp")  # the experts' tensor parallelism, said where it is not tp
    if etp is not None and etp == etp and int(etp) != int(r["tp"]):
        parts.insert(5, f"etp {int(etp)}")
    schedule = SCHEDULE_NAMES.get(str(r.get("pp_schedule")))  # said where it is not 1F1B
    if schedule is not None:
        parts.insert(4, schedule)
    exchange = str(r.get("cp_comm_type"))  # said where cp > 1 exchanges other than by the ring
    if int(r["cp"]) > 1 and exchange in ("allgather", "a2a"):
        parts[2] = f"cp {int(r['cp'])} ({exchange})"
    recompute = _(RECOMPUTE_WORDS[str(r["recompute"])])
    modules = r.get("recompute_modules")  # Megatron-Core's names, a selective row's
    if isinstance(modules, str):
        recompute = f"{recompute} ({modules.replace(',', ', ')})"
    return " · ".join(
        [
            *parts,
            _("micro-batch {n}").format(n=int(r["micro_batch_size"])),
            f"ZeRO {int(r['zero'])}",
            recompute,
        ]
    )


def _bar(value: float, label: str, color: str, text: str, y: object) -> dict:
    return {
        "type": "bar",
        "orientation": "h",
        "x": [value],
        "y": [y],
        "name": label,
        "marker": {"color": color},
        "text": [text],
        "textposition": "inside",
        "hovertext": [text],
        "hoverinfo": "text",
    }


def step_figure(r: Mapping) -> go.Figure:
    """One stacked bar: the step time split into the engine's terms (they add up to it)."""
    total = float(r["step_time_s"])
    traces = []
    for label, key, color in STEP_PARTS:
        value = float(r[key])
        if value > 0:
            text = _("{part}: {value} ({share})").format(
                part=_(label), value=fmt(value, "s"), share=pct(value / total)
            )
            traces.append(_bar(value=value, label=_(label), color=color, text=text, y=0))
    hidden = float(r["comm_dp_total_s"]) - float(r["comm_dp_s"])
    note = (
        _(", {time} of data-parallel traffic hidden").format(time=fmt(hidden, "s"))
        if hidden > 0
        else ""
    )
    layout = {
        "barmode": "stack",
        "height": 300,
        "title": wrap_title(_("Step time: {time}").format(time=fmt(total, "s")) + note),
        "xaxis": {"title": {"text": _("Seconds per step")}, "rangemode": "tozero"},
        "yaxis": {"showticklabels": False, "range": [-0.6, 0.6]},
        "uniformtext": {"minsize": 10, "mode": "hide"},
        "legend": legend_below() | {"traceorder": "normal"},
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
    }
    return go.Figure(data=traces, layout=layout, _validate=False)


def memory_figure(r: Mapping, capacity_bytes: float) -> go.Figure:
    """One stacked bar per GPU (weights, gradients, optimizer state, activations) against the
    usable memory (capacity less the reserve) and the capacity."""
    need, usable = float(r["memory_per_gpu_bytes"]), float(r["usable_memory_bytes"])
    traces = []
    for label, key, color in MEMORY_PARTS:
        value = float(r[key])
        if value > 0:
            text = _("{part}: {value} ({share})").format(
                part=_(label), value=fmt(value, "B"), share=pct(value / need)
            )
            traces.append(_bar(value=value / 1e9, label=_(label), color=color, text=text, y=0))
    top = max(need, capacity_bytes) / 1e9 * 1.08
    for x, name, color, dash in (
        (usable, _("usable: {memory}").format(memory=fmt(usable, "B")), LIMIT_COLOR, "dash"),
        (
            capacity_bytes,
            _("capacity: {memory}").format(memory=fmt(capacity_bytes, "B")),
            GAP_COLOR,
            "dot",
        ),
    ):
        traces.append(
            {
                "type": "scatter",
                "x": [x / 1e9, x / 1e9],
                "y": [-0.5, 0.5],
                "mode": "lines",
                "name": name,
                "line": {"color": color, "width": 2.5, "dash": dash},
                "hovertemplate": f"{name}<extra></extra>",
            }
        )
    verdict = (
        _("fits: {need} of {usable} usable")
        if r["fits_in_memory"]
        else _("does NOT fit: {need} needed, {usable} usable")
    ).format(need=fmt(need, "B"), usable=fmt(usable, "B"))
    layout = {
        "barmode": "stack",
        "height": 300,
        "title": wrap_title(_("Memory per GPU: {verdict}").format(verdict=verdict)),
        "xaxis": {"title": {"text": _("GB per GPU")}, "range": [0, top]},
        "yaxis": {"showticklabels": False, "range": [-0.6, 0.6]},
        "uniformtext": {"minsize": 10, "mode": "hide"},
        "legend": legend_below() | {"traceorder": "normal"},
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
    }
    return go.Figure(data=traces, layout=layout, _validate=False)


def scaling_figure(best: pd.DataFrame, column: str, band: float | None) -> go.Figure:
    """The best configuration per GPU count: tokens/s (log) or MFU against GPUs (log), with
    the run's out-of-sample error band (engine.training_band) (none drawn when not measured)."""
    gpus = best["gpus"].to_numpy(dtype=float)
    y = best[column].to_numpy(dtype=float) * (100.0 if column == "mfu" else 1.0)
    unit = "%" if column == "mfu" else "tokens/s"
    title = _("MFU (model FLOPs utilisation)") if column == "mfu" else _("Training throughput")
    configs = [config_text(row) for _, row in best.iterrows()]
    hover = [
        _("{gpus} GPUs: {value}").format(gpus=f"{int(g):,}", value=v) + f"<br>{html.escape(c)}"
        for g, v, c in zip(gpus, fmt_all(y, unit), configs, strict=True)
    ]
    traces = []
    if band is not None and len(y):
        lo, hi = y * (1 - band / 100), y * (1 + band / 100)
        traces.append(
            {
                "type": "scatter",
                "x": [*gpus, *gpus[::-1]],
                "y": [*hi, *lo[::-1]],
                "fill": "toself",
                "fillcolor": "rgba(31, 119, 180, 0.15)",
                "line": {"width": 0},
                "mode": "lines",
                "name": _("± {band} (out-of-sample error)").format(band=pct(band / 100)),
                "hoverinfo": "skip",
            }
        )
    traces.append(
        {
            "type": "scatter",
            "x": list(gpus),
            "y": list(y),
            "mode": "lines+markers",
            "name": _("best configuration per GPU count"),
            "line": {"color": COLORS[0], "width": 2},
            "marker": {"size": 9, "color": COLORS[0]},
            "hovertext": hover,
            "hoverinfo": "text",
        }
    )
    y_axis = (
        {"title": {"text": _("MFU (%)")}, "rangemode": "tozero"}
        if column == "mfu"
        else log_axis(_("Tokens/s (all GPUs)"), [v for v in y if np.isfinite(v) and v > 0])
    )
    layout = {
        "title": wrap_title(html.escape(title)),
        "height": 420,
        "xaxis": log_axis(_("GPUs"), gpus),
        "yaxis": y_axis,
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "hovermode": "closest",
    }
    return go.Figure(data=traces, layout=layout, _validate=False)
