"""The serving page's engine calls, headline and curves (one deployment of a decoder LLM).

Its link parameters (older `context`/`prompt` links included) are ui/decode/link.py. Model:
docs/model.md, "Serving model".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import pandas as pd

import engine
from ui.charts import bands
from ui.core import budget
from ui.decode.link import OVERRIDES
from ui.widgets.pickers import split_words
from ui.words.format import capacity, fmt, fmt_all, pct
from ui.words.i18n import N_, _

SECTIONS = {  # the expanders under the first chart, drawn (and computed) only while open
    "step": N_("Step time"),
    "table": N_("Operators (table, CSV)"),
    "curves": N_("Curves against batch and input tokens"),
    "sensitivity": N_("Sensitivity: which figure to improve, and the inverse roofline"),
}
# the curves' columns under ui.decode.figures's names (engine columns renamed, not recomputed)
PAGE_ONLY = ["context", "aggregate_tokens_per_s", "memory_required_bytes", "weight_bytes"]
CURVE_TABLE = {  # column: (on-screen header, ui.words.format unit or None (as is), factor)
    "input_tokens": (N_("Input tokens"), None, 1.0),
    "batch_size": (N_("Batch (sequences)"), None, 1.0),
    "ttft_ms": ("TTFT", "s", 1e-3),
    "tpot_ms": ("TPOT", "s", 1e-3),
    "tokens_per_s_per_user": (N_("Per user (tokens/s)"), "", 1.0),
    "output_tokens_per_s_per_gpu": (N_("Per GPU (tokens/s)"), "", 1.0),
    "output_tokens_per_s": (N_("All devices (tokens/s)"), "", 1.0),
    "decode_bottleneck": (N_("Decode bound"), None, 1.0),
    "memory_per_device_bytes": (N_("Memory per device"), "B", 1.0),
    "fits_in_memory": (N_("Fits"), None, 1.0),
}


def curve_table(df: pd.DataFrame) -> pd.DataFrame:
    """The curves' rows under readable headers, numbers as ui.words.format text with units."""
    out = {}
    for column, (header, unit, factor) in CURVE_TABLE.items():
        values = df[column].to_numpy()
        if column == "decode_bottleneck":  # the engine's word, in the reader's language
            values = [_(str(v)) for v in values]
        out[_(header)] = values if unit is None else fmt_all(values * factor, unit)
    return pd.DataFrame(out)


def overrides(values: Mapping) -> dict:
    """The assumption overrides set (None: the profile's figure)."""
    return {k: values[k] for k in OVERRIDES if values.get(k) is not None}


def deployment(**fields) -> tuple[engine.Deployment, str | None]:
    """(the Deployment of `fields`, None), or, when its layout is refused as it is built (an
    ep that does not divide tp, attention DP on one device), one device's and why."""
    try:
        return engine.Deployment(**fields), None
    except ValueError as exc:
        one = fields | {"tp": 1, "pp": 1, "ep": 1, "attention_dp": False}
        return engine.Deployment(**one), _one_device(exc)


def run(
    dep: engine.Deployment, request: engine.Batch
) -> tuple[engine.ServeResult, str | None, engine.Deployment]:
    """(engine.serve(...), an error to show, the deployment shown): a placement the model or
    chip refuses (tp not dividing the heads, no device link, an ep a dense model cannot use)
    falls back to one device."""
    try:
        return engine.serve(dep, request), None, dep
    except ValueError as exc:
        if dep.tp == dep.pp == dep.ep == 1:
            raise
        one = dataclasses.replace(dep, tp=1, pp=1, ep=1, attention_dp=False)
        return engine.serve(one, request), _one_device(exc), one


def _one_device(reason: Exception) -> str:
    """Why the page shows one device instead of the layout asked for."""
    return _("Devices not used: {reason}. Showing tp = 1, pp = 1 (one device).").format(
        reason=reason
    )


def curves(
    dep: engine.Deployment, output_tokens: int, batches: list[int], contexts: list[int]
) -> pd.DataFrame:
    """The serve sweep over batch × input tokens, under the columns ui.decode.figures draws
    (context = input tokens; memory per device). The largest batch that fits is the engine's
    `max_batch_size` (per row: at that row's tokens), never re-derived here."""
    grid = engine.BatchGrid(
        input_tokens=tuple(contexts),
        output_tokens=output_tokens,
        batch_sizes=tuple(batches),
    )
    df = engine.serve_sweep(engine.Deployments.of_one(dep), batches=grid)
    return df.assign(
        context=df["input_tokens"],
        aggregate_tokens_per_s=df["output_tokens_per_s"],
        memory_required_bytes=df["memory_per_device_bytes"],
        weight_bytes=df["weight_bytes_per_device"],
    )


def curve_refusal(batches: list[int], contexts: list[int]) -> str | None:
    """Why the curves are refused (None: within the page's budget, ui/core/budget.py): their
    rows are batch sizes × input lengths, counted before any of them is computed."""
    counts = {_("batch sizes"): len(batches), _("input lengths"): len(contexts)}
    narrow = _(
        "Narrow the curves: fewer batch sizes (e.g. 1..1024, or 1..4096:8) or fewer input "
        "lengths. The deployment's figures and operators are drawn."
    )
    return budget.rows_refusal("decode", counts, narrow)


def devices_text(hw, tp: int, pp: int, split: str = "") -> str:
    """'2 × NVIDIA H100 SXM (TP 2 × PP 1), NVLink 4: 450 GB/s per direction, 600 ns per hop,
    8 per node' (plain: the caller escapes the catalogue's names); `split`: the MoE layout's
    words (ui.widgets.pickers.split_words), after the degrees."""
    n = tp * pp
    link = _("no device-to-device link catalogued")
    if hw.devices_per_node > 1:
        link = _("{link}: {bandwidth} per direction, {latency} per hop, {n} per node").format(
            link=hw.interconnect_name,
            bandwidth=fmt(hw.interconnect_bandwidth_bytes_per_s, "B/s"),
            latency=fmt(hw.interconnect_latency_s, "s"),
            n=hw.devices_per_node,
        )
    return _("{n} × {hardware} (TP {tp} × PP {pp}{split}), {link}").format(
        n=n, hardware=hw.name, tp=tp, pp=pp, split=split, link=link
    )


def held_back_bytes(r: Mapping) -> float:
    """Bytes of a device's capacity not usable by weights and KV cache (the stack's runtime
    memory and the reserve): the fit line's and the "Reserve per device" card's one figure."""
    return r["memory_capacity_bytes"] - r["usable_memory_bytes"]


def fit_text(r: Mapping, hw) -> str:
    """The memory verdict per device: needed against usable, and what the stack's rule held
    back of the capacity (its runtime memory, when it sets one aside, and the reserve)."""
    verdict = _("Fits") if r["fits_in_memory"] else _("Does not fit")
    held = {
        "held": fmt(held_back_bytes(r), "B"),
        "reserve": pct(r["assumptions"]["memory_reserve"]),
        "runtime": fmt(r["runtime_memory_bytes"], "B"),
    }
    reserved = held_back_bytes(r) - r["runtime_memory_bytes"]
    if r["runtime_memory_bytes"] > 0 and reserved < 1e-9 * r["memory_capacity_bytes"]:
        held_back = _(  # weights beyond the memory left: nothing free for the reserve to hold
            "{held} held back: the stack's activations and workspace; the weights leave "
            "nothing free for its {reserve} reserve"
        ).format(**held)
    elif r["runtime_memory_bytes"] > 0:
        held_back = _(
            "{held} held back: the stack's activations and workspace, {runtime}, and its "
            "{reserve} reserve"
        ).format(**held)
    else:
        held_back = _("{held} held back: the {reserve} reserve").format(**held)
    return _(
        "{verdict}: {memory} per device (weights {weights} + KV cache {kv}) against {usable} "
        "usable of {capacity} ({held_back})"
    ).format(
        verdict=verdict,
        memory=fmt(r["memory_per_device_bytes"], "B"),
        weights=fmt(r["weight_bytes_per_device"], "B"),
        kv=fmt(r["kv_cache_bytes_per_device"], "B"),
        usable=fmt(r["usable_memory_bytes"], "B"),
        capacity=capacity(hw),
        held_back=held_back,
    )


def headline(r: Mapping) -> list[tuple[str, str, str]]:
    """(label with unit, value, help) for the metric cards, in rows of 4 (fit first)."""
    fits, n = bool(r["fits_in_memory"]), int(r["devices"])
    mark = "" if fits else _(" — hypothetical")
    reserve = held_back_bytes(r)
    return [
        (
            _("Fits in memory"),
            _("yes") if fits else _("NO"),
            _("weights + KV cache per device ≤ usable"),
        ),
        (_("TTFT") + mark, fmt(r["ttft_ms"] * 1e-3, "s"), _("prefill of batch × input tokens")),
        (_("TPOT") + mark, fmt(r["tpot_ms"] * 1e-3, "s"), _("mean decode step")),
        (_("End-to-end latency") + mark, fmt(r["e2e_latency_ms"] * 1e-3, "s"), _("TTFT + decode")),
        (_("Per user") + mark, fmt(r["tokens_per_s_per_user"], "tokens/s"), _("1 ÷ TPOT")),
        (
            _("Per GPU") + mark,
            fmt(r["output_tokens_per_s_per_gpu"], "tokens/s"),
            _("÷ {n} devices").format(n=n),
        ),
        (
            _("All devices") + mark,
            fmt(r["output_tokens_per_s"], "tokens/s"),
            _("batch × output ÷ e2e"),
        ),
        (_("Communication share of TPOT"), pct(r["decode_comm_share"]), _("all-reduces, sends")),
        (_("Memory per device"), fmt(r["memory_per_device_bytes"], "B"), _("weights + KV cache")),
        (
            _("Weights per device"),
            fmt(r["weight_bytes_per_device"], "B"),
            _("shard of the weights"),
        ),
        (_("KV cache per device"), fmt(r["kv_cache_bytes_per_device"], "B"), _("room for I + O")),
        (
            _("Reserve per device"),
            fmt(reserve, "B"),
            _("capacity held back: the stack's runtime memory and memory_reserve"),
        ),
    ]


def caption(r: Mapping, hw) -> str:
    """The scenario in one line (plain text: the caller escapes the catalogue's names)."""
    return _(
        "{devices} · batch {batch} × {input} input + {output} output tokens · weights "
        "{precision}, KV cache {kv_precision} · profile {profile} · serving model"
    ).format(
        devices=devices_text(
            hw=hw, tp=r["tp"], pp=r["pp"], split=split_words(r["ep"], r["attention_dp"])
        ),
        batch=f"{r['batch_size']:,}",
        input=f"{r['input_tokens']:,}",
        output=f"{r['output_tokens']:,}",
        precision=r["precision"],
        kv_precision=r["kv_precision"],
        profile=r["profile"],
    )


def file_name(kind: str, r: Mapping, hw_id: str) -> str:
    return f"{kind}_{r['model']}_{hw_id}_tp{r['tp']}_pp{r['pp']}_{r['profile']}.csv"


def bounds_text(r: Mapping) -> str:
    """Which term bounds each phase, and what the fixed overhead and communication cost."""
    return _(
        "Prefill is {prefill_bound}-bound (communication {prefill_comm}, fixed overhead "
        "{prefill_overhead} of TTFT); a decode step is {decode_bound}-bound (communication "
        "{decode_comm}, fixed overhead {decode_overhead} of TPOT)."
    ).format(
        prefill_bound=_(str(r["prefill_bottleneck"])),
        prefill_comm=fmt(r["prefill_comm_ms"] * 1e-3, "s"),
        prefill_overhead=pct(r["prefill_overhead_share"]),
        decode_bound=_(str(r["decode_bottleneck"])),
        decode_comm=pct(r["decode_comm_share"]),
        decode_overhead=pct(r["decode_overhead_share"]),
    )


def pipeline_text(r: Mapping) -> str:
    """Under pipeline parallelism, what the static batch's stages do and what a server does
    instead (docs/model.md, "Pipeline stages under load"); empty without it."""
    if r["pp"] <= 1:
        return ""
    return _(
        "PP {pp}: this static batch passes the {pp} stages in turn, so each device idles "
        "{bubble} of the time. A continuous-batching server keeps a batch on every stage "
        "instead: serve this deployment under load for its throughput."
    ).format(pp=r["pp"], bubble=pct(r["pp_bubble_fraction"]))


def band(r: Mapping, model, hw_id: str, overrides: Mapping) -> bands.Note:
    """The scenario's error band: its profile's measured out-of-sample error, and why it is off
    the profile's calibrated ground (ui.charts.bands); edited when an override is set."""
    profile = engine.get_profile(r["profile"])
    arch = getattr(model, "arch", None)
    return bands.note(
        profile=profile, arch=arch, hardware=hw_id, precision=r["precision"], edited=bool(overrides)
    )


def band_text(r: Mapping, note: bands.Note) -> str:
    """The band beside the headline: '3,900 tokens/s per GPU, typically within ±13.6% ...'."""
    return bands.sentence(note, fmt(r["output_tokens_per_s_per_gpu"], _("tokens/s per GPU")))


def curve_csv(df: pd.DataFrame, note: bands.Note) -> pd.DataFrame:
    """The curves' CSV: every serve_sweep column and the band's (error_band_pct, its basis,
    off_calibrated_ground)."""
    return bands.with_columns(df.drop(columns=PAGE_ONLY), note)
