"""The LLM view of the batch-sweep and comparison pages: its inputs, link values and notes.

For a decoder LLM with shapes these pages draw the serving model's rows by default
(ui/charts/serve_rows.py: a decode step, or whole requests) and offer the tutorial's whole-model
view as a labelled choice. One request shape (input and output tokens) and the memory reserve
apply to the serving views (on /compare the deployments use the same request shape). Link
parameters: ui.links.link_params.llm_view and tokens.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import engine
from ui.charts import serve_rows
from ui.core import frame
from ui.links.link_params import VIEWS
from ui.links.params import Link
from ui.links.state import drawn_index
from ui.widgets.pickers import number_input
from ui.widgets.tokens import token_inputs
from ui.words.i18n import _
from ui.words.text import plain


def serving(model) -> bool:
    """Whether the serving model can run the model (a decoder LLM with an architecture)."""
    return getattr(model, "arch", None) is not None


def reserve_input(link: Link, *, disabled: bool = False, where=None) -> float:
    """The usable-memory reserve: the fraction of capacity held back (runtime, fragmentation)."""
    return number_input(
        link,
        "memory_reserve",
        _("Memory reserve (fraction of capacity held back)"),
        where=where,
        step=0.05,
        format="%.2f",
        disabled=disabled,
        help=_(
            "Default {default}: the share of capacity the runtime keeps (vLLM's "
            "gpu_memory_utilization 0.9 leaves 0.1). Applies to the serving model's fit and max "
            "batch."
        ).format(default=f"{engine.DEFAULTS.memory_reserve:g}"),
    )


def view_inputs(link: Link, model) -> tuple[str | None, dict, dict]:
    """For a decoder LLM with shapes: the view, the request shape and the serving-only
    assumptions (the reserve); (None, {}, {}) for other models."""
    if not serving(model):
        return None, {}, {}
    view = st.radio(
        _("LLM view"),
        list(VIEWS),
        drawn_index(link.key("view"), list(VIEWS)),  # first paint: the linked view
        key=link.key("view"),
        format_func=lambda v: _(VIEWS[v]),
        help=_(
            "The serving views give the numbers of /decode, /plan and the CLI's serve; the "
            "tutorial view reproduces the tutorial's whole-model figure."
        ),
    )
    tip = _("The request shape of the serving views (and of deployments).")
    tokens = token_inputs(link, tip)
    reserve = reserve_input(link, disabled=view == "tutorial")
    return view, tokens, {"memory_reserve": reserve}


def link_values(view: str | None, extra: dict) -> dict:
    """The share-link values of the LLM view (None for other models: not in the link)."""
    return {"view": view, "memory_reserve": extra.get("memory_reserve")}


def show_fit(df: pd.DataFrame, names: dict[str, str], serving_view: bool) -> None:
    """Rows that do not fit in memory, said first: their figures are hypothetical."""
    fits = df["fits_in_memory"].astype(bool)
    if fits.all():
        return
    out = sorted({names.get(str(h), str(h)) for h in df.loc[~fits, "hardware"]})
    where = ", ".join(plain(n) for n in out)
    what = _("weights + KV cache") if serving_view else _("the weights")
    if not fits.any():
        head = _("**Does not fit** on {where}: {what} exceed the memory in every row.").format(
            where=where, what=what
        )
    else:
        head = _(
            "**{failed} of {rows} rows do not fit** ({where}): {what} exceed the memory there."
        ).format(failed=f"{int((~fits).sum()):,}", rows=f"{len(df):,}", where=where, what=what)
    st.error(head + _(" Those figures are **hypothetical** (as if it fitted)."), icon="🚫")


def show_caption(view: str | None, tokens: dict, profile: str) -> None:
    """Under the title: which LLM view the figures are (nothing for other models)."""
    if view in serve_rows.VIEW_COLUMNS:
        st.caption(serve_rows.caption(view, tokens, profile))
    elif view == "tutorial":
        st.caption(
            _(
                "Tutorial whole-model view: each extra sample moves α × the weights again (a "
                "vision rule), not the serving model's tokens/s (see LLM view)."
            )
        )


def stop_without_decode_step(view: str | None, tokens: dict, page: str, query: dict) -> None:
    """In the decode view, a request of one output token has no decode step: say so, keep the
    share link, and draw nothing more (the charts would be empty)."""
    reason = serve_rows.no_decode_step(view, tokens)
    if reason is not None:
        st.warning(reason, icon="⚠️")
        frame.share_link(page, query)
        st.stop()
