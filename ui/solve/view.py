"""The single-solve page's headline and, for decoder LLMs, the serving model's figure beside
the tutorial's whole-model one, with a link to the serving page (streamlit)."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

import engine
from ui.charts import serve_rows
from ui.links.params import write_number
from ui.solve import explain
from ui.words.format import fmt
from ui.words.i18n import N_, _
from ui.words.text import plain

DECODE_PAGE = "decode"
TABLE = N_("Every figure and assumption (table)")  # the results expander's title


def show_not_fit(r, hw) -> None:
    """When the weights do not fit, say so first: every figure becomes hypothetical."""
    if not r.fits_in_memory:
        st.error(explain.not_fit_text(r.weight_bytes, hw, plain(hw.name)), icon="🚫")


def show_headline(r, model, hw, crossover: int | None) -> None:
    """The regime with the roofline bound beside it (hypothetical when it does not fit), then
    the explanation."""
    hw_name = plain(hw.name)
    head = explain.headline(r)
    if not r.fits_in_memory:
        head = _("Hypothetical: {headline}").format(headline=head)
    st.subheader(head)
    for line in explain.explain(r, hw_name, crossover):
        st.markdown(line)


def decode_link(query: dict[str, str]) -> str:
    """A relative link to the serving page with this scenario (ids, numbers: no user text)."""
    return f"./{DECODE_PAGE}?{urlencode(query)}"


def serving_link(query: dict, tokens: dict, profile, changed: dict) -> dict[str, str]:
    """The serving page's link for the solve page's scenario: the model, accelerator, batch,
    request shape and precision, a built-in profile by name and the edits of its assumptions
    (a custom profile's values are written one by one)."""
    to = {k: query.get(k) for k in ("model", "hardware", "batch", "precision", "custom_hw")}
    to |= {k: str(v) for k, v in tokens.items()}
    values = dict(profile.values()) if profile.origin != "built-in" else {}
    if profile.origin == "built-in":
        to["profile"] = profile.name
    values |= {name: now for name, (_, now) in changed.items()}
    used = {k: v for k, v in values.items() if k in serve_rows.SERVING and v is not None}
    to |= {k: write_number(v) for k, v in used.items()}
    return {k: v for k, v in to.items() if v}


def show_serving_note(sc, opts: dict, changed: dict, query: dict) -> None:
    """For a decoder LLM with shapes: the serving model's figure for the same request beside the
    whole-model one above, which is labelled the tutorial's first-order view; a link opens the
    serving page at the same scenario (`query`: the solve page's link)."""
    if getattr(sc.model, "arch", None) is None:
        return
    dep = engine.Deployment.of(model=sc.model, hardware=sc.hw, precision=sc.precision, **opts)
    r = engine.serve(dep, engine.Batch(batch_size=sc.batch, **sc.tokens)).values
    to = serving_link(query=query, tokens=sc.tokens, profile=sc.profile, changed=changed)
    fit = "" if r["fits_in_memory"] else _(" (hypothetical: weights + KV cache do not fit)")
    text = _(
        "**The serving model gives {tpot} per output token (TPOT), {rate} while decoding and a "
        "TTFT of {ttft}** at batch {batch}, requests of {input} input and {output} output "
        "tokens, profile {profile}{fit}: each decode step moves the weights once for the whole "
        "batch plus every sequence's KV cache, per operator. **The figures above are the "
        "tutorial's first-order whole-model view** (one forward pass of the catalogue's FLOPs; "
        "each extra sample moves α × the weights again), kept as the tutorial publishes them. "
        "[Open the serving page]({link}) for TTFT, TPOT, memory and the operators."
    )
    st.info(
        text.format(
            tpot=fmt(r["tpot_ms"] / 1e3, "s"),
            rate=fmt(r["decode_tokens_per_s"], "tokens/s"),
            ttft=fmt(r["ttft_ms"] / 1e3, "s"),
            batch=f"{sc.batch:,}",
            input=f"{sc.tokens['input_tokens']:,}",
            output=f"{sc.tokens['output_tokens']:,}",
            profile=plain(sc.label),
            fit=fit,
            link=decode_link(to),
        ),
        icon="💬",
    )
