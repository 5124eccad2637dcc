"""A custom model from a Hugging Face config.json, carried in the share link (`model_config=`),
and the model picker of the pages that take a decoder LLM by its shapes (/decode, /load, /train).

The pure half (`compact`, `model`, `param`, `llm_reader`, `summary`, `read_upload`) reads the
text; the widget half (`select_llm`, `config_input`) draws the picker with the catalogue's LLMs
with shapes, the pasted or uploaded config.json and any entries of the page's own (e.g. GPT
shapes), bound to `<page>:model` and `<page>:model_config`.

The pasted or uploaded text is untrusted: it is capped in size, read by
`engine.model_from_config` (which names the offending config.json field and refuses a key given
twice), a leading byte order mark dropped (as the CSV uploads drop it), and reduced to the
fields the engine reads, written as compact JSON, so the link stays short and reproduces the
same shapes exactly. The text is never rendered as markup: errors go through ui.words.text.plain.
"""

from __future__ import annotations

import functools
import json
from types import SimpleNamespace

import streamlit as st

import engine
from ui.links.params import MAX_VALUE_CHARS, Link, Param, ParamError, choice
from ui.widgets.pickers import select_entry
from ui.words.i18n import N_, _
from ui.words.text import plain

CONFIG_ID = "config.json"  # the model picker's entry (and the link's `model=` value) for it
CONFIG_NAME = N_("Custom model (config.json)")  # shown through _()
MAX_PASTE_CHARS = 100_000  # a config.json is a few kB (Llama 3.1 70B: 0.9 kB)
MAX_UPLOAD_BYTES = engine.MAX_UPLOAD_BYTES  # the one upload limit (engine/files.py)


def _arch(config: dict):
    return engine.model_from_config(config, id=CONFIG_ID, name=CONFIG_NAME).arch


def _minimal(config: dict, arch) -> dict:
    """`config` without the keys whose removal leaves the shapes unchanged: first every key the
    engine does not read (engine.config_fields, linear in the keys), then, greedily in order,
    the few read ones whose value is the family's default."""
    config = engine.config_fields(config)
    out = dict(config)
    for key in list(config):
        if key in ("architectures", "text_config"):
            continue
        trial = {k: v for k, v in out.items() if k != key}
        try:
            if _arch(trial) == arch:
                out = trial
        except ValueError:
            pass  # the key is needed
    if isinstance(out.get("text_config"), dict):
        text = dict(out["text_config"])
        for key in list(text):
            trial = out | {"text_config": {k: v for k, v in text.items() if k != key}}
            try:
                if _arch(trial) == arch:
                    text = trial["text_config"]
                    out = trial
            except ValueError:
                pass
    return out


@functools.lru_cache(maxsize=32)
def compact(text: str) -> str:
    """The config.json's shape fields as compact JSON (what `model_config=` holds).

    Raises:
        ValueError: not a config.json the engine reads (the message names the field), or too
            long for a share link even when compacted.
    """
    if len(text) > MAX_PASTE_CHARS:
        raise ValueError(
            _("config.json: longer than {limit} characters").format(limit=f"{MAX_PASTE_CHARS:,}")
        )
    text = text.removeprefix("\ufeff")
    try:
        config = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(
            _("config.json: not valid JSON ({reason})").format(reason=str(exc)[:80])
        ) from None
    if not isinstance(config, dict):
        raise ValueError(
            _("config.json: must be a JSON object, got {kind}").format(kind=type(config).__name__)
        )
    arch = _arch(text)  # the engine reads the text itself: a key given twice is refused by name
    out = json.dumps(_minimal(config, arch), separators=(",", ":"), ensure_ascii=False)
    if len(out) > MAX_VALUE_CHARS:
        raise ValueError(
            _(
                "config.json: its shape fields take {n} characters, more than a share link "
                "holds ({limit})"
            ).format(n=f"{len(out):,}", limit=f"{MAX_VALUE_CHARS:,}")
        )
    return out


@functools.lru_cache(maxsize=32)
def model(text: str):
    """The ModelSpec of a compact (or full) config.json text; ValueError if it is not valid."""
    return engine.model_from_config(compact(text), id=CONFIG_ID, name=CONFIG_NAME)


def read_param(text: str) -> str:
    """The `model_config=` reader: the compact form, or ParamError with the engine's reason."""
    try:
        return compact(text)
    except ValueError as exc:
        raise ParamError(str(exc)[:200]) from None


def param() -> Param:
    return Param("model_config", read_param, str, widget="text")


def read_upload(data: bytes) -> str:
    """An uploaded file's text (UTF-8, a byte order mark dropped; at most MAX_UPLOAD_BYTES), or
    ValueError."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(
            _("config.json: {n} bytes, larger than the limit of {limit} bytes").format(
                n=f"{len(data):,}", limit=f"{MAX_UPLOAD_BYTES:,}"
            )
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(_("config.json: not UTF-8 text")) from None
    if not text.strip():
        raise ValueError(_("config.json: the uploaded file is empty"))
    return text


def summary(spec) -> str:
    """One line about the shapes read (numbers only, no user text)."""
    a = spec.arch
    moe = ""
    if a.experts:
        moe = _(", {experts} experts ({per_token} per token)").format(
            experts=a.experts, per_token=a.experts_per_token
        )
    ffn = _(", FFN {width}").format(width=f"{a.intermediate:,}") if a.intermediate else ""
    return _(
        "{layers} layers, hidden {hidden}, {heads} heads ({kv_heads} KV){ffn}, vocabulary "
        "{vocab}{moe}: {params} billion parameters"
    ).format(
        layers=a.layers,
        hidden=f"{a.hidden:,}",
        heads=a.heads,
        kv_heads=a.kv_heads,
        ffn=ffn,
        vocab=f"{a.vocab:,}",
        moe=moe,
        params=f"{spec.params / 1e9:,.2f}",
    )


def llm_reader(cat: engine.Catalog, extra: tuple[str, ...] = ()):
    """The `model=` reader: a catalogue LLM with shapes (id, alias or name) as its id,
    `config.json`, or one of `extra` (a page's other entries, e.g. GPT shapes)."""

    def canon(text: str) -> str:
        for special in (CONFIG_ID, *extra):
            if text.strip().lower() == special.lower():
                return special
        spec = engine.resolve_llm(text, cat)
        if getattr(spec, "arch", None) is None:
            raise ValueError(
                _("{model} has no shapes (this page needs a decoder LLM's)").format(model=spec.id)
            )
        return spec.id

    return choice(canon=canon)


def llm_entries(cat, extra: dict[str, str] | None = None) -> dict:
    """The picker's entries: catalogue LLMs with shapes, config.json (its name translated), then
    `extra` (id: name, as shown)."""
    out = {key: m for key, m in cat.models.items() if getattr(m, "arch", None) is not None}
    out[CONFIG_ID] = SimpleNamespace(name=_(CONFIG_NAME))
    return out | {key: SimpleNamespace(name=name) for key, name in (extra or {}).items()}


def config_input(link: Link) -> tuple[object | None, str]:
    """The pasted or uploaded config.json: (its ModelSpec or None, the compact text for the
    link). A problem is shown under the field, naming the config.json field."""
    text = st.text_area(
        _("config.json (paste)"),
        key=link.key("model_config"),
        max_chars=MAX_PASTE_CHARS,
        placeholder='{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, ...}',
    )
    upload = st.file_uploader(
        _("or upload config.json (at most {n} bytes)").format(n=f"{MAX_UPLOAD_BYTES:,}"),
        type=["json"],
        key=link.key("model_config.file"),
        max_upload_size=engine.MAX_UPLOAD_MB,
    )
    try:
        if upload is not None:
            text = read_upload(upload.getvalue())
        if not (text or "").strip():
            st.info(_("Paste or upload a Hugging Face config.json to use a custom model."))
            return None, ""
        spec = model(text)
        st.caption(plain(summary(spec)))
        return spec, compact(text)
    except ValueError as exc:
        st.error(plain(exc), icon="🚫")
        return None, ""


def select_llm(link: Link, cat, extra: dict[str, str] | None = None) -> tuple[str, object, str]:
    """The model picker and, for config.json, its field: (the chosen id, the ModelSpec of a
    catalogue LLM or a valid config.json, else None; the config.json's compact text or "")."""
    entries = llm_entries(cat, extra)
    model_id = select_entry(
        link=link, name="model", label=_("Model (decoder LLMs)"), entries=entries
    )
    if model_id == CONFIG_ID:
        spec, text = config_input(link)
        return model_id, spec, text
    return model_id, cat.models.get(model_id), ""
