"""Words, metric cards and tables of the training planner (pure: no streamlit).

Every number is the engine's (`engine.train`, `engine.train_search`, the training profile's
residuals), at most scaled to its display unit and shown through ui.words.format. The CSV files
keep the engine's column names, with the profile's measured errors on every row.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

import engine
from ui.charts.operators import layers_text, phase_label
from ui.train.link import ATTENTION_WORDS, RANKS, RECIPE_WORDS, RECOMPUTE_WORDS
from ui.words.format import fmt, fmt_all, pct
from ui.words.i18n import N_, _, message_text
from ui.words.text import bound

# The bubble's share of the step under each pipeline schedule (docs/model.md, "Pipeline
# schedules"): F&B a slot, B a backward chunk, W its weight-gradient GEMMs
BUBBLE_HELP = {
    "1f1b": N_("(pp − 1) / (vp · micro-batches)"),
    "dualpipe": N_("DualPipe: (pp/2 − 1) · (F&B + B − 3W) / (micro-batches · slot)"),
    "dualpipev": N_("DualPipeV: (pp − 1) · (F&B + B − 3W) / (2 · micro-batches · slot)"),
}
SHOWN_ROWS = 50  # ranked configurations on screen (the CSV has them all)
RANKED = {  # column: (header, unit or None (as is), factor)
    "tp": ("tp", None, 1),
    "pp": ("pp", None, 1),
    "cp": ("cp", None, 1),
    "cp_comm_type": (N_("CP exchange"), None, 1),  # how cp > 1 exchanges keys and values
    "vp": ("vp", None, 1),
    "pp_schedule": (N_("Schedule"), None, 1),  # the pipeline schedule
    "ep": ("ep", None, 1),
    "etp": ("etp", None, 1),  # the experts' tensor parallelism (tp unless searched)
    "dp": ("dp", None, 1),
    "micro_batch_size": (N_("Micro-batch"), None, 1),
    "micro_batches": (N_("Micro-batches"), None, 1),
    "zero": (N_("ZeRO"), None, 1),
    "recompute": (N_("Recompute"), None, 1),
    "tokens_per_s": (N_("Tokens/s"), "", 1.0),
    "mfu": (N_("MFU"), "%", 100.0),
    "step_time_s": (N_("Step"), "s", 1.0),
    "bubble_fraction": (N_("Bubble"), "%", 100.0),
    "memory_per_gpu_bytes": (N_("Memory per GPU"), "B", 1.0),
    "memory_headroom_bytes": (N_("Headroom"), "B", 1.0),
    "time_to_train_days": (N_("Days to budget"), "", 1.0),
    "cost_to_train_usd": (N_("Cost to budget (USD)"), "", 1.0),
    "above_published_mfu": (N_("Above published MFU"), None, 1),
}
LAYOUT = ("tp", "pp", "cp", "cp_comm_type", "vp", "pp_schedule", "ep", "etp", "dp")
REJECTED = {k: v for k, v in RANKED.items() if k in LAYOUT}
REJECTED |= {k: RANKED[k] for k in ("micro_batch_size", "zero", "recompute")}
REJECTED |= {"memory_per_gpu_bytes": RANKED["memory_per_gpu_bytes"]}
REJECTED |= {"reason": (N_("Why rejected"), None, 1)}
SCALING = {"gpus": (N_("GPUs"), None, 1)} | {
    k: RANKED[k] for k in ("tp", "pp", "cp", "vp", "dp", "tokens_per_s", "mfu", "step_time_s")
}
OPERATORS = {
    "phase": (N_("Pass"), None, 1),
    "name": (N_("Operator"), None, 1),
    "layer": (N_("Layers"), None, 1),
    "count": ("×", None, 1),
    "flops": (N_("FLOPs each"), "FLOP", 1.0),
    "bytes": (N_("Bytes each"), "B", 1.0),
    "arithmetic_intensity_flop_per_byte": (N_("Intensity (FLOP/B)"), "", 1.0),
    "time_ms": (N_("Time each"), "s", 1e-3),
    "bottleneck": (N_("Bound"), None, 1),
}
WORDS = {  # columns of words: each value as shown, in the reader's language
    "recompute": lambda v: _(RECOMPUTE_WORDS[str(v)]),
    "phase": phase_label,
    "layer": layers_text,
    "bottleneck": bound,
    "above_published_mfu": lambda v: _("yes") if bool(v) else "",
}
ERRORS = (  # residual key prefix: words
    ("mape", N_("in sample")),
    ("loo_row_mape", N_("leave one run out")),
    ("loo_table_mape", N_("leave one table out")),
)


def table(df: pd.DataFrame, spec: Mapping, rows: int | None = None) -> pd.DataFrame:
    """`df`'s columns of `spec` under readable headers (the first `rows`), numbers formatted."""
    part = df if rows is None else df.head(rows)
    out = {}
    for column, (header, unit, factor) in spec.items():
        values = part[column].to_numpy()
        if column == "reason":  # the engine's rule, in the reader's language
            out[_(header)] = [
                message_text(v) if isinstance(v, engine.Message) else "" for v in values
            ]
        elif column in WORDS:
            out[_(header)] = [WORDS[column](v) for v in values]
        elif unit is None:
            out[_(header)] = [
                int(v) if isinstance(v, float | np.floating) and float(v).is_integer() else v
                for v in values
            ]
        else:
            out[_(header)] = fmt_all(np.asarray(values, dtype=float) * factor, unit)
    return pd.DataFrame(out)


def errors(profile) -> dict[str, float]:
    """The training profile's measured MAPE (%) by basis, as its file records them."""
    r = profile.residuals
    return {_(words): r[f"{key}_pct"] for key, words in ERRORS if f"{key}_pct" in r}


def error_text(profile, band, why) -> str:
    """The profile's measured errors and this run's band (engine.training_band) in words, for
    beside the numbers: the band, its basis and every way the run leaves the fitted ground."""
    found = errors(profile)
    if not found or band.pct is None:
        return _("Profile {profile}: its error was not measured.").format(profile=profile.name)
    parts = _(", ").join(f"{words} {pct(v / 100)}" for words, v in found.items())
    text = _(
        "Profile {profile}'s measured error (MAPE of TFLOP/s per GPU, {rows} runs of {files}): "
        "{parts}. This run's band: ±{band} ({basis})."
    ).format(
        profile=profile.name,
        rows=profile.rows,
        files=", ".join(profile.fitted_on) or _("no file"),
        parts=parts,
        band=pct(band.pct / 100),
        basis=message_text(band.basis),
    )
    if why:
        reasons = _("; ").join(message_text(w) for w in why)
        text += " " + _("Off the fitted ground: {reasons}.").format(reasons=reasons)
    return text


def with_errors(df: pd.DataFrame, profile) -> pd.DataFrame:
    """The CSV's rows, each with the profile's measured errors."""
    cols = {f"profile_{key}_pct": profile.residuals.get(f"{key}_pct") for key, _ in ERRORS}
    return df.assign(**cols)


def headline(r: Mapping, band) -> list[tuple[str, str, str]]:
    """(label, value, help) metric cards of the chosen configuration; `band`: the run's
    (engine.training_band)."""
    b = band.pct
    tip = (
        _("measured error: not measured")
        if b is None
        else _("error band: ±{band} (out of sample, for this ground)").format(band=pct(b / 100))
    )
    return [
        (
            _("Step time"),
            fmt(r["step_time_s"], "s"),
            _("one optimizer step; {tip}").format(tip=tip),
        ),
        (
            _("Tokens/s"),
            fmt(r["tokens_per_s"]),
            _("all {gpus} GPUs; {tip}").format(gpus=f"{int(r['gpus']):,}", tip=tip),
        ),
        (_("Tokens/s per GPU"), fmt(r["tokens_per_s_per_gpu"]), tip),
        ("MFU", pct(r["mfu"]), _("model FLOPs (PaLM) ÷ peak; {tip}").format(tip=tip)),
        ("HFU", pct(r["hfu"]), _("hardware FLOPs (recomputation counted) ÷ peak")),
        (_("Model TFLOP/s per GPU"), fmt(r["model_tflops_per_gpu"]), tip),
        (
            _("Memory per GPU"),
            fmt(r["memory_per_gpu_bytes"], "B"),
            _("weights, gradients, optimizer, activations"),
        ),
        (
            _("Headroom"),
            fmt(r["memory_headroom_bytes"], "B"),
            _("usable − needed (negative: short)"),
        ),
        (_("Time to the token budget"), fmt(r["time_to_train_days"] * 86_400, "s"), tip),
        (
            _("GPU-hours"),
            fmt(r["gpu_hours"]),
            _("{tokens} tokens").format(tokens=fmt(r["token_budget"])),
        ),
        (
            _("Cost to the token budget (USD)"),
            fmt(r["cost_to_train_usd"]),
            _("price per GPU-hour × GPU-hours")
            if r["cost_to_train_usd"] is not None
            else _("no price: set one"),
        ),
        (_("Bubble"), pct(r["bubble_fraction"]), _(BUBBLE_HELP[str(r["pp_schedule"])])),
    ]


def caption(
    run, rank_by: str, model_name: str, hw_name: str, counts: tuple[int, int], fits: int
) -> str:
    """The scenario in one line (plain: the caller escapes the names); `run` an
    engine.TrainRun."""
    return _(
        "{model} on {gpus} × {hardware} · global batch {batch} × {seq_len} tokens · "
        "{precision}, {attention} · profile {profile} · {searched} configurations searched, "
        "{fits} fit · ranked by {rank_by}"
    ).format(
        model=model_name,
        gpus=f"{run.gpus:,}",
        hardware=hw_name,
        batch=f"{run.global_batch_size:,}",
        seq_len=f"{run.seq_len:,}",
        precision=precision_text(run),
        attention=_(ATTENTION_WORDS[run.attention]),
        profile=run.profile,
        searched=f"{counts[0]:,}",
        fits=f"{fits:,}",
        rank_by=_(RANKS[rank_by]),
    )


def precision_text(run) -> str:
    """The run's number format as the caption says it: fp8 with its recipe and weights."""
    if run.fp8_recipe is None:
        return run.precision
    words = [_(RECIPE_WORDS[run.fp8_recipe])]
    words += [_("weights in fp8")] if run.fp8_param_gather else []
    return f"{run.precision} ({', '.join(words)})"


def file_name(kind: str, s, model_id: str, hw_id: str) -> str:
    """A CSV's file name; `s` the engine.TrainRun."""
    return f"train_{kind}_{model_id}_{hw_id}_{s.gpus}gpus_{s.precision}.csv"
