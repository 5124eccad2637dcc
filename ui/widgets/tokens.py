"""The request shape several pages ask for: input and output tokens per request, side by side.

Each field is bound to `<page>:input_tokens` / `<page>:output_tokens` (ui.links.state), over the
range its link parameter declares (ui.links.link_params.tokens).
"""

from __future__ import annotations

import streamlit as st

from ui.links.params import Link
from ui.widgets.pickers import number_input
from ui.words.i18n import N_, _

LABELS = {"input_tokens": N_("Input tokens"), "output_tokens": N_("Output tokens")}


def token_inputs(link: Link, tip: str | None = None, steps=(128, 128)) -> dict[str, int]:
    """Input and output tokens per request, side by side (`tip`: the fields' help)."""
    tokens = {}
    for col, (name, label), step in zip(st.columns(2), LABELS.items(), steps, strict=True):
        tokens[name] = int(number_input(link, name, _(label), where=col, step=step, help=tip))
    return tokens
