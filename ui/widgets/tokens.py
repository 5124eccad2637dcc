"""The request shape several pages ask for: input and output tokens per request, side by side.

Each field is bound to `<page>:input_tokens` / `<page>:output_tokens` (ui.core.state).
"""

from __future__ import annotations

import streamlit as st

import engine
from ui.core.state import widget_key


def token_inputs(page: str, tip: str | None = None) -> dict[str, int]:
    """Input and output tokens per request, side by side (`tip`: the fields' help)."""
    tokens = {}
    labels = {"input_tokens": "Input tokens", "output_tokens": "Output tokens"}
    for col, (name, label) in zip(st.columns(2), labels.items(), strict=True):
        key = widget_key(page, name)
        tokens[name] = int(
            col.number_input(label, 1, engine.MAX_TOKENS, step=128, key=key, help=tip)
        )
    return tokens
