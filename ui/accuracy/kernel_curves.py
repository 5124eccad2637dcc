"""The accuracy page's kernel curves, pure: the points drawn, the figure and the tables.

Each operator class is drawn the way its law reads (engine.kernel_curves(); docs/model.md,
"Kernel efficiency curves"): a GEMM's fraction of peak against its tokens M at one weight
shape, decode attention's fraction of the memory bandwidth against the context at a few
batch sizes, prefill attention's fraction of peak against the prompt, and a collective's time
against its message size per GPU count. The CSV table keeps English, unit-suffixed columns;
the table shown translates its headers and formats its numbers (ui.words.format).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import engine
from ui.charts.theme import COLORS, legend_below, log_axis, wrap_title
from ui.words.format import fmt
from ui.words.i18n import N_, _

STACK_LABELS = {
    "trtllm": "TensorRT-LLM",
    "vllm": "vLLM",
    "sglang": "SGLang",
    "nccl": "NCCL",
}
OP_LABELS = {
    "gemm": N_("GEMM (linear layers)"),
    "decode_attention": N_("Decode attention"),
    "prefill_attention": N_("Prefill attention"),
    "all_reduce": N_("All-reduce"),
    "all_gather": N_("All-gather"),
    "reduce_scatter": N_("Reduce-scatter"),
    "alltoall": N_("All-to-all"),
}
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")
# The shapes the curves are drawn at: Llama-3.1-8B's on one GPU (docs/model.md).
GEMM_N = GEMM_K = 8192
HEADS, KV_HEADS, HEAD_DIM = 32, 8, 128
DECODE_BATCHES = (1, 16, 128)
# What each law's parameter is called on the page (the symbol docs/model.md uses) and its unit.
SYMBOLS = {
    "overhead_s": ("t0", "s"),
    "eta_compute": ("η_c", ""),
    "eta_memory": ("η_m", ""),
    "exposed": ("s", ""),
    "narrow_n": ("N½", ""),
    "per_row_s": ("τ", "s"),
    "pairs_half": ("P½", ""),
    "keys_half": ("w½", ""),
    "weight_bytes": ("w", "B"),
    "kv_bytes": ("b_kv", "B"),
}


def _pct(value: float) -> str:
    return fmt(value, "%")  # already in %


def _grid(lo: float, hi: float, points: int = 60) -> np.ndarray:
    return np.unique(np.round(np.geomspace(lo, hi, points)))


def _gemm(curve: engine.KernelCurve) -> pd.DataFrame:
    m = _grid(1, 16384)
    y = engine.gemm_efficiency(curve, m=m, n=float(GEMM_N), k=float(GEMM_K))
    return pd.DataFrame({"series": curve.dtype, "x": m, "y": y})


def _decode(curve: engine.KernelCurve) -> pd.DataFrame:
    keys = _grid(128, 131072, 40)
    parts = []
    for batch in DECODE_BATCHES:
        y = engine.decode_attention_efficiency(
            curve, batch=float(batch), keys=keys, heads=HEADS, kv_heads=KV_HEADS, head_dim=HEAD_DIM
        )
        series = _("{dtype}, batch {batch}").format(dtype=curve.dtype, batch=batch)
        parts.append(pd.DataFrame({"series": series, "x": keys, "y": y}))
    return pd.concat(parts, ignore_index=True)


def _prefill(curve: engine.KernelCurve) -> pd.DataFrame:
    tokens = _grid(16, 32768, 50)
    y = engine.prefill_attention_efficiency(
        curve, batch=1.0, tokens=tokens, heads=HEADS, kv_heads=KV_HEADS, head_dim=HEAD_DIM
    )
    return pd.DataFrame({"series": curve.dtype, "x": tokens, "y": y})


def _collective(curve: engine.KernelCurve) -> pd.DataFrame:
    sizes = np.geomspace(1e3, 1e9, 61)
    parts = []
    for gpus in curve.law.gpus:
        y = engine.collective_time_s(curve, gpus=gpus, message_bytes=sizes)
        series = _("{dtype}, {gpus} GPUs").format(dtype=curve.dtype, gpus=gpus)
        parts.append(pd.DataFrame({"series": series, "x": sizes, "y": y}))
    return pd.concat(parts, ignore_index=True)


def curve_points(curves: tuple[engine.KernelCurve, ...]) -> pd.DataFrame:
    """The points drawn for `curves` (one operator class): columns series, x, y."""
    draw = {"gemm": _gemm, "decode_attention": _decode, "prefill_attention": _prefill}
    parts = [draw.get(c.op, _collective)(c) for c in curves]
    return (
        pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["series", "x", "y"])
    )


def axes(op: str) -> tuple[str, str, str]:
    """(title, x-axis title, y-axis title) of an operator class's figure."""
    if op == "gemm":
        return (
            _("GEMM efficiency: N = K = {n}").format(n=f"{GEMM_N:,}"),
            _("tokens M"),
            _("fraction of the type's peak"),
        )
    shape = _("{heads} query heads, {kv} KV heads, head size {d}").format(
        heads=HEADS, kv=KV_HEADS, d=HEAD_DIM
    )
    if op == "decode_attention":
        return (
            _("Decode attention: {shape}").format(shape=shape),
            _("context (keys attended)"),
            _("fraction of the memory bandwidth"),
        )
    if op == "prefill_attention":
        return (
            _("Prefill attention: {shape}, one prompt").format(shape=shape),
            _("prompt tokens"),
            _("fraction of the type's peak"),
        )
    return (
        _("{collective}: time against message size").format(collective=_(OP_LABELS[op])),
        _("message (bytes)"),
        _("time (s)"),
    )


def kernel_figure(points: pd.DataFrame, op: str) -> go.Figure:
    """One line per series; log x; a fraction (0 to 1) on a linear y, or time on a log y."""
    title, x_title, y_title = axes(op)
    traces = [
        {
            "type": "scatter",
            "x": part["x"].to_numpy(),
            "y": part["y"].to_numpy(),
            "mode": "lines",
            "name": str(series),
            "line": {"color": COLORS[i % len(COLORS)], "width": 2},
        }
        for i, (series, part) in enumerate(points.groupby("series", sort=False))
    ]
    timed = op in COLLECTIVES
    y_axis = (
        log_axis(y_title, points["y"])
        if timed
        else {"title": {"text": y_title}, "range": [0, 1], "tickformat": ".0%"}
    )
    layout = {
        "title": wrap_title(title),
        "xaxis": log_axis(x_title, points["x"]),
        "yaxis": y_axis,
        "legend": legend_below(),
        "height": 460,
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
    }
    return go.Figure(data=traces, layout=layout)


def _params(curve: engine.KernelCurve) -> dict[str, float]:
    law = curve.law
    names = [n for n in SYMBOLS if hasattr(law, n)]
    return {n: getattr(law, n) for n in names}


def _collective_params(curve: engine.KernelCurve) -> str:
    law, lines = curve.law, []
    for i, gpus in enumerate(law.gpus):
        lines.append(
            _("{gpus} GPUs: {a_s} + S / {b_s}, or {a_l} + S / {b_l}").format(
                gpus=gpus,
                a_s=fmt(law.small_latency_s[i], "s"),
                b_s=fmt(law.small_bandwidth_bytes_per_s[i], "B/s"),
                a_l=fmt(law.large_latency_s[i], "s"),
                b_l=fmt(law.large_bandwidth_bytes_per_s[i], "B/s"),
            )
        )
    return "; ".join(lines)


def parameters_text(curve: engine.KernelCurve) -> str:
    """The law's parameters in the symbols of docs/model.md: 't0 = 2.9 µs · η_c = 0.748 · …'."""
    if curve.op in COLLECTIVES:
        return _collective_params(curve)
    shown = []
    for name, value in _params(curve).items():
        symbol, unit = SYMBOLS[name]
        text = fmt(value, unit) if unit else fmt(value)
        shown.append(f"{symbol} = {text}" + ("" if name in curve.fit.free else " *"))
    return " · ".join(shown)


def parameters_table(curves: tuple[engine.KernelCurve, ...]) -> pd.DataFrame:
    """The table shown: one row per curve, headers translated, numbers formatted."""
    rows = []
    for c in curves:
        rows.append(
            {
                _("type"): c.dtype,
                _("parameters (* not fitted)"): parameters_text(c),
                _("held-out MAPE"): _pct(c.fit.mape_pct),
                _("median"): _pct(c.fit.median_ape_pct),
                _("90th percentile"): _pct(c.fit.p90_ape_pct),
                _("worst"): _pct(c.fit.max_ape_pct),
                _("rows fitted / held out"): f"{c.fit.rows:,} / {c.fit.held_out_rows:,}",
                _("release"): c.source.version,
                _("source"): c.source.url,
            }
        )
    return pd.DataFrame(rows)


def csv_table(curves: tuple[engine.KernelCurve, ...]) -> pd.DataFrame:
    """The CSV: English, unit-suffixed columns, every parameter as a number."""
    rows = []
    for c in curves:
        row = {"accelerator": c.accelerator, "stack": c.stack, "op": c.op, "dtype": c.dtype}
        row |= {"version": c.source.version, "free": " ".join(c.fit.free)}
        if c.op in COLLECTIVES:
            law = c.law
            for i, gpus in enumerate(law.gpus):
                row[f"small_latency_s_{gpus}gpu"] = law.small_latency_s[i]
                row[f"small_bandwidth_bytes_per_s_{gpus}gpu"] = law.small_bandwidth_bytes_per_s[i]
                row[f"large_latency_s_{gpus}gpu"] = law.large_latency_s[i]
                row[f"large_bandwidth_bytes_per_s_{gpus}gpu"] = law.large_bandwidth_bytes_per_s[i]
        else:
            row |= {"peak_flop_per_s": c.law.peak_flop_per_s}
            row |= {"bandwidth_bytes_per_s": c.law.bandwidth_bytes_per_s} | _params(c)
        row |= {
            "rows": c.fit.rows,
            "held_out_rows": c.fit.held_out_rows,
            "mape_pct": c.fit.mape_pct,
            "median_ape_pct": c.fit.median_ape_pct,
            "p90_ape_pct": c.fit.p90_ape_pct,
            "max_ape_pct": c.fit.max_ape_pct,
            "source": c.source.url,
        }
        rows.append(row)
    return pd.DataFrame(rows)


def transfer_csv(profile: engine.Profile) -> pd.DataFrame:
    """The profile's kernel transfer, one row per accelerator and weight format (English ids,
    as every CSV): the two curves compared and the ratios its GEMM efficiencies take there."""
    a = profile.assumptions
    rows = engine.kernel_transfers(a.kernel_curves, a.kernel_reference)
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame.insert(0, "profile", profile.name)
    return frame


def transfer_table(csv: pd.DataFrame) -> pd.DataFrame:
    """The table shown: the CSV's rows, headers translated, ratios as ×-factors."""
    return pd.DataFrame(
        {
            _("accelerator"): csv["accelerator"],
            _("weight format"): csv["format"],
            _("curve"): csv["curve"],
            _("compared with"): csv["reference_curve"],
            _("× GEMM compute fraction"): [fmt(v, "×") for v in csv["compute_ratio"]],
            _("× weight bandwidth fraction"): [fmt(v, "×") for v in csv["weight_bandwidth_ratio"]],
            _("release"): csv["stack_release"],
        }
    )
