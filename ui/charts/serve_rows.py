"""Decoder LLMs on the batch-sweep and comparison pages: the serving model's rows as sweep rows.

The tutorial's whole-model view moves a fraction of the weights again for every extra sample
(a vision rule); a decoder LLM's decode step moves the weights once per step for the whole
batch plus each sequence's KV cache. So for LLMs these pages show `engine.serve_sweep` rows —
the numbers of /decode, /plan and the CLI's `serve` for the same scenario — and offer the
tutorial view as a labelled choice (ui/widgets/llm_view.py). Two serving views, one request
shape (input and output tokens):

- "decode": one batch is one decode step (latency = the request's mean time per output token,
  throughput = the batch's tokens/s during decode);
- "request": one batch is a whole static batch of requests (latency = end-to-end, throughput =
  output tokens/s over the request).

The engine's columns are renamed onto the sweep's (and scaled for display only), so the same
charts and tables draw them; the roofline points are a decode step's (its intensity, achieved
and attainable FLOP/s, the roofs the profile achieves).
"""

from __future__ import annotations

import pandas as pd

import engine
from ui.charts import tables
from ui.words.i18n import N_, _
from ui.words.text import plain

SERVING = ("efficiency", "layer_overhead_us", "dispatch_overhead_ms", "memory_reserve")
VIEW_COLUMNS = {
    "decode": {"tpot_ms": "latency_ms", "decode_tokens_per_s": "throughput_per_s"},
    "request": {"e2e_latency_ms": "latency_ms", "output_tokens_per_s": "throughput_per_s"},
}
COMMON = {  # the serving model's column -> the sweep column the charts and tables read
    "decode_bottleneck": "bottleneck",
    "decode_arithmetic_intensity_flop_per_byte": "arithmetic_intensity_flop_per_byte",
    "decode_mfu": "mfu",
    "decode_overhead_ms": "t_overhead_ms",
    "decode_overhead_share": "overhead_share",
}
TFLOPS = {  # FLOP/s columns shown in TFLOP/s (display scaling only)
    "decode_achieved_flop_per_s": "achieved_tflops",
    "decode_attainable_flop_per_s": "attainable_tflops",
    "peak_flop_per_s": "peak_tflops",
    "achievable_flop_per_s": "effective_peak_tflops",
}
COLUMNS = ["batch_size", "bottleneck", "latency_ms", "throughput_per_s", "ttft_ms"]
COLUMNS += ["arithmetic_intensity_flop_per_byte", "achieved_tflops", "attainable_tflops"]
COLUMNS += ["mfu", "t_overhead_ms", "memory_per_device_bytes", "fits_in_memory", "max_batch_size"]
HEADERS = {  # the sweep table's headers (English keys, ui.charts.tables) renamed per view
    "decode": {N_("Latency"): N_("TPOT (mean decode step)"), N_("Bound"): N_("Decode bound")},
    "request": {N_("Latency"): N_("End-to-end latency (request)"), N_("Bound"): N_("Decode bound")},
}


def options(profile: engine.Profile, overrides: dict, cat: engine.Catalog) -> dict:
    """The serving model's keyword arguments for a page: the profile (its name and every value
    it carries), the catalogue, and the page's edits of the assumptions the serving model reads
    (SERVING; α and the FLOP convention are the tutorial view's)."""
    used = {k: v for k, v in overrides.items() if k in SERVING}
    return {"profile": profile.name, "assumptions": profile.assumptions, "catalog": cat} | used


def serve_frame(
    model,
    hardware: list,
    batches: list[int],
    tokens: dict,
    precision: str,
    opts: dict,
    view: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the serve_sweep rows as they go to the CSV, the same rows under sweep column names).

    Args:
        model, hardware: a decoder LLM with shapes and the accelerators (specs).
        batches, tokens: batch sizes and the request shape (input_tokens, output_tokens).
        precision: the weights'; opts: `options(...)`.
        view: "decode" or "request" (VIEW_COLUMNS).
    """
    grid = engine.Deployments.of(
        models=(model,), hardware=tuple(hardware), precisions=(precision,), **opts
    )
    raw = engine.serve_sweep(grid, batches=engine.BatchGrid(batch_sizes=tuple(batches), **tokens))
    shown = raw.rename(columns=VIEW_COLUMNS[view] | COMMON)
    for column, name in TFLOPS.items():
        shown[name] = raw[column] * 1e-12
    shown["memory_bandwidth_bytes_per_s"] = raw["achievable_bytes_per_s"]  # the roof drawn
    shown["regime"] = shown["bottleneck"]  # the serving bound names overhead and links too
    shown["sample"] = "token"  # throughput in tokens/s (sample_unit: 'tokens/s')
    shown["energy_j"] = float("nan")  # the serving model has no energy figure
    return raw, shown


def table(
    df: pd.DataFrame, names: dict[str, str], view: str, columns: list[str] = COLUMNS
) -> pd.DataFrame:
    """The serving rows as the sweep's table (`columns`, sweep names), headed as what they are."""
    headers = {_(k): _(v) for k, v in HEADERS[view].items()}  # as display_table shows them
    return tables.display_table(df, names, columns).rename(columns=headers)


def caption(view: str, tokens: dict, profile: str) -> str:
    """What the serving view shows, in words."""
    shape = _("{input} input and {output} output tokens").format(
        input=f"{tokens['input_tokens']:,}", output=f"{tokens['output_tokens']:,}"
    )
    what = {
        "decode": _(
            "one batch is one decode step: latency is the mean time per output token "
            "(TPOT), throughput the batch's tokens/s while decoding"
        ),
        "request": _(
            "one batch is a static batch of whole requests: latency is end to end "
            "(TTFT + every decode step), throughput the output tokens/s over the "
            "request"
        ),
    }[view]
    return _(
        "Serving model (docs/model.md), profile {profile}, requests of {shape}: {what}. "
        "The roofline points are a decode step's; the same numbers as /decode and /plan."
    ).format(profile=plain(profile), shape=shape, what=what)


def no_decode_step(view: str | None, tokens: dict) -> str | None:
    """Why the decode view has nothing to draw, or None: a request of one output token ends
    at its first token (the prefill's), so it has no decode step and no TPOT."""
    if view != "decode" or tokens.get("output_tokens", 2) >= 2:
        return None
    return _(
        "A request of 1 output token has no decode step (its only token comes from the "
        "prefill), so the decode view has no TPOT to draw. Choose the whole-request view, or "
        "2 or more output tokens."
    )
