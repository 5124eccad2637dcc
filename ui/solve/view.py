"""The single-solve page's headline and its pointer to the LLM decode model (streamlit)."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

import engine
from ui.charts.decode_rows import decode_overrides
from ui.core.format import fmt
from ui.core.link_params import DEFAULT_CONTEXT
from ui.core.params import write_number
from ui.core.text import plain
from ui.solve import explain

DECODE_PAGE = "decode"


def show_not_fit(r, hw) -> None:
    """When the weights do not fit, say so first: every figure becomes hypothetical."""
    if not r.fits_in_memory:
        st.error(explain.not_fit_text(r.weight_bytes, hw, plain(hw.name)), icon="🚫")


def show_headline(r, model, hw, crossover: int | None) -> None:
    """The regime with the roofline bound beside it (hypothetical when it does not fit), then
    the explanation."""
    hw_name = plain(hw.name)
    prefix = "Hypothetical: " if not r.fits_in_memory else ""
    st.subheader(prefix + explain.headline(r))
    for line in explain.explain(r, hw_name, crossover):
        st.markdown(line)


def decode_link(query: dict[str, str]) -> str:
    """A relative link to the decode page with this scenario (ids, numbers: no user text)."""
    return f"./{DECODE_PAGE}?{urlencode(query)}"


def show_decode_note(model, hw, batch: int, precision: str, overrides: dict, query: dict) -> None:
    """For a decoder LLM: what the decode model (weights + KV cache per step) gives, beside the
    tutorial whole-model figure, with a link to the decode page at the same scenario (`query`:
    the solve page's link)."""
    if not model.is_decoder_llm:
        return
    opts = decode_overrides(overrides)
    r = engine.decode(model, hw, batch, DEFAULT_CONTEXT, precision=precision, **opts)
    to = {"model": query["model"], "hardware": query["hardware"], "batch": str(batch)}
    to |= {"context": str(DEFAULT_CONTEXT), "precision": precision}
    to |= {k: write_number(v) for k, v in opts.items() if v is not None}
    to |= {k: query[k] for k in ("custom_hw",) if query.get(k)}
    fit = "" if r.fits_in_memory else " (hypothetical: it does not fit)"
    st.info(
        f"**The LLM decode model gives {fmt(r.tpot_s, 's')} per token and "
        f"{fmt(batch / r.tpot_s, 'tokens/s')}** at batch {batch:,} and a context of "
        f"{DEFAULT_CONTEXT:,} tokens{fit}: each step moves the weights and the KV cache once "
        "for the whole batch. The figures above are the tutorial's whole-model view (each "
        f"extra sample moves more weight traffic). [Open the LLM decode page]"
        f"({decode_link(to)}) for TPOT, TTFT and the KV cache.",
        icon="💬",
    )
