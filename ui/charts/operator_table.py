"""The operator table of one deployment: a prefill and a decode step, for reading and as CSV.

`step_table` asks `engine.operators` for the prefill of the batch's prompts (TTFT: its rows sum
to engine.serve's ttft_ms) and for the decode step at the mean context of the request's
O − 1 steps, c = I + ⌊O/2⌋ (the mean I + O/2 when O is even; its rows then sum to tpot_ms
whenever no attention operator changes bound or crosses its window over the steps, as
docs/model.md's closed form shows). The display frame has readable headers and numbers from
ui.words.format; the CSV keeps the engine's snake_case, unit-suffixed columns plus the scenario.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

import engine
from ui.words.format import fmt, fmt_all, pct
from ui.words.i18n import N_, _
from ui.words.text import bound, plain

PHASES = ("prefill", "decode")
SCENARIO_KEYS = (
    "model",
    "hardware",
    "tp",
    "pp",
    "batch_size",
    "input_tokens",
    "output_tokens",
    "precision",
    "kv_precision",
    "profile",
)
ASSUMPTION_NAMES = (  # the serving model's assumptions, by their user names
    "efficiency",
    "attention_efficiency",
    "expert_efficiency",
    "bandwidth_efficiency",
    "layer_overhead_us",
    "dispatch_overhead_ms",
    "memory_reserve",
    "link_efficiency",
    "link_latency_us",
)
# engine column: (on-screen header, ui.words.format unit or None (as is), factor to that unit);
# headers shown through _()
DISPLAY = {
    "phase": (N_("Phase"), None, 1.0),
    "name": (N_("Operator"), None, 1.0),
    "layer": (N_("Layers"), None, 1.0),
    "count": (N_("Count (instances per step)"), None, 1.0),
    "op_class": (N_("Class"), None, 1.0),
    "flops": (N_("FLOPs (each)"), "FLOP", 1.0),
    "bytes": (N_("Bytes moved (each)"), "B", 1.0),
    "weight_bytes": (N_("Weights (each)"), "B", 1.0),
    "kv_bytes": (N_("KV cache (each)"), "B", 1.0),
    "activation_bytes": (N_("Activations (each)"), "B", 1.0),
    "arithmetic_intensity_flop_per_byte": (N_("Intensity (FLOP/byte)"), "", 1.0),
    "time_ms": (N_("Time (each)"), "s", 1e-3),
    "total_time_ms": (N_("Time (all instances)"), "s", 1e-3),
    "bottleneck": (N_("Bound"), None, 1.0),
}
CAPTION = N_(  # shown through _() and .format(context=...)
    "The prefill's operators sum to TTFT; the decode step shown is at context {context} tokens "
    "(the mean of the O − 1 steps), whose operators sum to TPOT unless an attention operator "
    "changes bound or crosses its window between the first and the last step. The embedding "
    "has no FLOPs, so it is in the table but not on the roofline; communication and the fixed "
    "overhead are in the bars. Marker area ∝ share of the step time."
)
CSV_RENAMES = dict(name="operator", layer="layers", flops="flop_per_op")  # CSV: English
CSV_RENAMES |= {"bytes": "bytes_per_op"}  # plain "flops"/"bytes" mean per batch in the CSVs
FRACTIONS = ("attention_efficiency", "expert_efficiency", "link_efficiency")  # engine.to_csv
# suffixes the other assumptions (efficiency -> compute_efficiency_fraction, ...)


def decode_context(input_tokens: int, output_tokens: int) -> int | None:
    """The context of the decode step shown: I + ⌊O/2⌋; None when O = 1 (no decode step)."""
    return None if output_tokens < 2 else input_tokens + output_tokens // 2


def step_table(dep: engine.Deployment, request: engine.Batch) -> pd.DataFrame:
    """engine.operators rows of the prefill and of the mean decode step of `request` on `dep`,
    with `phase` and `context_tokens` columns first."""
    i, o = request.input_tokens, request.output_tokens
    contexts = {"prefill": i, "decode": decode_context(i, o)}
    parts = []
    for phase in PHASES:
        if contexts[phase] is None:
            continue
        rows = engine.operators(
            dep, phase=phase, batch_size=request.batch_size, context=contexts[phase]
        )
        rows.insert(0, "context_tokens", contexts[phase])
        rows.insert(0, "phase", phase)
        parts.append(rows)
    return pd.concat(parts, ignore_index=True)


def display_table(ops: pd.DataFrame) -> pd.DataFrame:
    """The operator rows under readable headers, numbers as ui.words.format text with units."""
    out = {}
    for column, (header, unit, factor) in DISPLAY.items():
        values = ops[column].to_numpy()
        out[_(header)] = values if unit is None else fmt_all(values * factor, unit)
    return pd.DataFrame(out)


def csv_table(ops: pd.DataFrame, r: Mapping) -> pd.DataFrame:
    """The CSV rows: the scenario of `r` (engine.serve(...).as_dict(): model, hardware, tp, pp,
    batch, tokens, precisions, profile) on every row, the operator columns snake_case and
    unit-suffixed, then the assumptions used (user names; empty: the catalogue's figure)."""
    front = pd.DataFrame({key: [r[key]] * len(ops) for key in SCENARIO_KEYS})
    body = ops.rename(columns=CSV_RENAMES).reset_index(drop=True)
    used = {
        f"{name}_fraction" if name in FRACTIONS else name: r["assumptions"].get(name)
        for name in ASSUMPTION_NAMES
    }
    tail = pd.DataFrame({key: [value] * len(ops) for key, value in used.items()})
    return pd.concat([front, body, tail], axis=1)


STEP_WORDS = {"prefill": (N_("the prefill"), "TTFT"), "decode": (N_("a decode step"), "TPOT")}
NAMED = 3  # operators named per phase


def _bound(row) -> str:
    return bound(row["bottleneck"])


def _name(row) -> str:
    """An operator's name as the text shows it: the engine's id, but the step's fixed overhead
    in words (its id is a word too)."""
    return _("the fixed overhead") if row["name"] == "overhead" else plain(row["name"])


def _other(row, share: float) -> str:
    """A runner-up of the step with its share and its bound (the fixed overhead is its own)."""
    if row["name"] == "overhead":
        return _("{name} {share}").format(name=_name(row), share=pct(share))
    return _("{name} {share} ({bound})").format(
        name=_name(row), share=pct(share), bound=_bound(row)
    )


def binding_text(ops: pd.DataFrame) -> str:
    """Which operators bind each step, in words (README question 3): the largest shares of
    the step time, each with its bound (Markdown; the names are the engine's operators)."""
    parts = []
    for phase in reversed(PHASES):  # the decode step first: most of a request's time
        rows = ops[ops["phase"] == phase]
        if rows.empty:
            continue
        total = float(rows["total_time_ms"].sum())
        top = rows.sort_values("total_time_ms", ascending=False).head(NAMED)
        shares = [(r, float(r["total_time_ms"]) / total) for _, r in top.iterrows()]
        (first, share), rest = shares[0], shares[1:]
        words, step = STEP_WORDS[phase]
        text = _(
            "In {step} ({metric} {time}), **{name}** takes {share} of the time, {bound}"
        ).format(
            step=_(words),
            metric=step,
            time=fmt(total * 1e-3, "s"),
            name=_name(first),
            share=pct(share),
            bound=_bound(first),
        )
        if rest:
            others = [_other(r, s) for r, s in rest]
            text += _("; then {operators}").format(operators=_(" and ").join(others))
        parts.append(text + _("."))
    return _("**Which operator binds.**") + " " + " ".join(parts)
