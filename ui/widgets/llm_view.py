"""The LLM view of the batch-sweep and comparison pages: its inputs, link values and notes.

For a decoder LLM these pages use the decode model by default (ui/charts/decode_rows.py) and
offer the tutorial's whole-model view as a labelled choice; the context and the memory reserve
apply to the decode view only.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import engine
from ui.charts.decode_rows import DEFAULT_CONTEXT
from ui.core.params import Param, choice, number, write_number
from ui.core.state import widget_key
from ui.core.text import plain

MAX_CONTEXT = engine.MAX_CONTEXT
VIEWS = {
    "decode": "LLM decode model (weights once per step + KV cache)",
    "tutorial": "Tutorial whole-model view (each extra sample moves α × weights)",
}
RESERVE_MAX = 0.95  # at most 95 % of the capacity held back (the widget's and the link's range)
VIEW_DEFAULTS = {
    "view": "decode",
    "context": DEFAULT_CONTEXT,
    "memory_reserve": engine.DEFAULTS.memory_reserve,
}


def reserve_param() -> Param:
    return Param("memory_reserve", number(0.0, RESERVE_MAX), write_number)


def reserve_input(page: str, *, disabled: bool = False) -> float:
    """The usable-memory reserve: the fraction of capacity held back (runtime, fragmentation)."""
    return st.number_input(
        "Memory reserve (fraction of capacity held back)",
        0.0,
        RESERVE_MAX,
        step=0.05,
        format="%.2f",
        key=widget_key(page, "memory_reserve"),
        disabled=disabled,
        help=f"Default {engine.DEFAULTS.memory_reserve:g}: the share of capacity the runtime "
        "keeps (vLLM's gpu_memory_utilization 0.9 leaves 0.1). Applies to the decode model's "
        "fit, max batch and max context.",
    )


def view_params() -> list[Param]:
    """The `view` (decode | tutorial), `context` (tokens) and `memory_reserve` parameters."""
    return [
        Param("view", choice(tuple(VIEWS))),
        Param("context", number(1, MAX_CONTEXT, whole=True), write_number),
        reserve_param(),
    ]


def view_inputs(page: str, model) -> tuple[str | None, int | None, dict]:
    """For a decoder LLM: the view, the context and the decode-only assumptions (the reserve);
    (None, None, {}) for other models."""
    if not model.is_decoder_llm:
        return None, None, {}
    view = st.radio(
        "LLM view",
        list(VIEWS),
        key=widget_key(page, "view"),
        format_func=VIEWS.get,
        help="The decode model gives the LLM decode page's numbers; the tutorial view "
        "reproduces the tutorial's whole-model figure.",
    )
    decode = view == "decode"
    context = st.number_input(
        "Context (tokens per sequence)",
        1,
        MAX_CONTEXT,
        step=1024,
        key=widget_key(page, "context"),
        disabled=not decode,
        help="Tokens in each sequence's KV cache at the decode step (decode view).",
    )
    reserve = reserve_input(page, disabled=not decode)
    return view, int(context), {"memory_reserve": reserve}


def link_values(view: str | None, context: int | None, extra: dict) -> dict:
    """The share-link values of the LLM view (None for other models: not in the link)."""
    return {"view": view, "context": context, "memory_reserve": extra.get("memory_reserve")}


def show_fit(df: pd.DataFrame, names: dict[str, str]) -> None:
    """Rows that do not fit in memory, said first: their figures are hypothetical."""
    fits = df["fits_in_memory"].astype(bool)
    if fits.all():
        return
    out = sorted({names.get(str(h), str(h)) for h in df.loc[~fits, "hardware"]})
    where = ", ".join(plain(n) for n in out)
    what = "weights + KV cache" if "context" in df else "the weights"
    if not fits.any():
        head = f"**Does not fit** on {where}: {what} exceed the memory in every row."
    else:
        head = f"**{int((~fits).sum()):,} of {len(df):,} rows do not fit** ({where}): {what} "
        head += "exceed the memory there."
    st.error(head + " Those figures are **hypothetical** (as if it fitted).", icon="🚫")


def caption(context: int, fits: pd.Series) -> str:
    """What the decode view shows, and whether some rows do not fit."""
    text = (
        f"LLM decode model at a context of {context:,} tokens per sequence: one batch is one "
        "decode step (latency = time per output token, throughput = tokens/s over the batch). "
        "The activation traffic α and the FLOP convention do not apply here."
    )
    if not bool(fits.all()):
        text += " Rows marked fits = False do not fit in memory: their figures are hypothetical."
    return text


def show_caption(view: str | None, context: int | None, fits: pd.Series) -> None:
    """Under the title: which LLM view the figures are (nothing for other models)."""
    if view == "decode":
        st.caption(caption(context, fits))
    elif view == "tutorial":
        st.caption("Tutorial whole-model view: not the decode page's tokens/s (see LLM view).")
