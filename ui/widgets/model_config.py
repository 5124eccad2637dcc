"""The model picker of the pages that take a decoder LLM by its shapes (/load, /train): the
catalogue's LLMs with shapes, a pasted or uploaded config.json (ui.core.model_config), and any
entries of the page's own (e.g. GPT shapes). Bound to `<page>:model` and `<page>:model_config`.
"""

from __future__ import annotations

from types import SimpleNamespace

import streamlit as st

from ui.core import model_config as mc
from ui.core.i18n import _
from ui.core.params import Link
from ui.core.text import plain
from ui.widgets.pickers import select_entry


def llm_entries(cat, extra: dict[str, str] | None = None) -> dict:
    """The picker's entries: catalogue LLMs with shapes, config.json, then `extra` (id: name)."""
    out = {key: m for key, m in cat.models.items() if getattr(m, "arch", None) is not None}
    out[mc.CONFIG_ID] = SimpleNamespace(name=mc.CONFIG_NAME)
    return out | {key: SimpleNamespace(name=name) for key, name in (extra or {}).items()}


def config_input(link: Link) -> tuple[object | None, str]:
    """The pasted or uploaded config.json: (its ModelSpec or None, the compact text for the
    link). A problem is shown under the field, naming the config.json field."""
    text = st.text_area(
        _("config.json (paste)"),
        key=link.key("model_config"),
        max_chars=mc.MAX_PASTE_CHARS,
        placeholder='{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, ...}',
    )
    upload = st.file_uploader(
        _("or upload config.json (at most {n} bytes)").format(n=f"{mc.MAX_UPLOAD_BYTES:,}"),
        type=["json"],
        key=link.key("model_config.file"),
    )
    try:
        if upload is not None:
            text = mc.read_upload(upload.getvalue())
        if not (text or "").strip():
            st.info(_("Paste or upload a Hugging Face config.json to use a custom model."))
            return None, ""
        spec = mc.model(text)
        st.caption(plain(mc.summary(spec)))
        return spec, mc.compact(text)
    except ValueError as exc:
        st.error(plain(exc), icon="🚫")
        return None, ""


def select_llm(link: Link, cat, extra: dict[str, str] | None = None) -> tuple[str, object, str]:
    """The model picker and, for config.json, its field: (the chosen id, the ModelSpec of a
    catalogue LLM or a valid config.json, else None; the config.json's compact text or "")."""
    entries = llm_entries(cat, extra)
    model_id = select_entry(link, "model", _("Model (decoder LLMs)"), entries)
    if model_id == mc.CONFIG_ID:
        spec, text = config_input(link)
        return model_id, spec, text
    return model_id, cat.models.get(model_id), ""
