"""The LLM view of the batch-sweep and comparison pages: its inputs, link values and notes.

For a decoder LLM these pages use the decode model by default (ui/charts/decode_rows.py) and
offer the tutorial's whole-model view as a labelled choice; the context and the memory reserve
apply to the decode view only. Link parameters: ui.core.link_params.llm_view.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import engine
from ui.core.link_params import VIEWS
from ui.core.params import Link
from ui.core.text import plain
from ui.widgets.pickers import number_input


def reserve_input(link: Link, *, disabled: bool = False, where=None) -> float:
    """The usable-memory reserve: the fraction of capacity held back (runtime, fragmentation)."""
    return number_input(
        link,
        "memory_reserve",
        "Memory reserve (fraction of capacity held back)",
        where=where,
        step=0.05,
        format="%.2f",
        disabled=disabled,
        help=f"Default {engine.DEFAULTS.memory_reserve:g}: the share of capacity the runtime "
        "keeps (vLLM's gpu_memory_utilization 0.9 leaves 0.1). Applies to the decode model's "
        "fit, max batch and max context.",
    )


def view_inputs(link: Link, model) -> tuple[str | None, int | None, dict]:
    """For a decoder LLM: the view, the context and the decode-only assumptions (the reserve);
    (None, None, {}) for other models."""
    if not model.is_decoder_llm:
        return None, None, {}
    view = st.radio(
        "LLM view",
        list(VIEWS),
        key=link.key("view"),
        format_func=VIEWS.get,
        help="The decode model gives the LLM decode page's numbers; the tutorial view "
        "reproduces the tutorial's whole-model figure.",
    )
    decode = view == "decode"
    context = number_input(
        link,
        "context",
        "Context (tokens per sequence)",
        step=1024,
        disabled=not decode,
        help="Tokens in each sequence's KV cache at the decode step (decode view).",
    )
    reserve = reserve_input(link, disabled=not decode)
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
