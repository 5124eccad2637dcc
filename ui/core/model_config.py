"""A custom model from a Hugging Face config.json, carried in the share link (`model_config=`):
the pure half, shared by every page that takes one (/decode, /load, /train; the widgets are
ui/widgets/model_config.py and /decode's inputs).

The pasted or uploaded text is untrusted: it is capped in size, read by
`engine.model_from_config` (which names the offending config.json field), and reduced to the
fields the engine reads, written as compact JSON, so the link stays short and reproduces the
same shapes exactly. The text is never rendered as markup: errors go through ui.core.text.plain.
"""

from __future__ import annotations

import functools
import json

import engine
from ui.core.i18n import N_, _
from ui.core.params import MAX_VALUE_CHARS, Param, ParamError, choice

CONFIG_ID = "config.json"  # the model picker's entry (and the link's `model=` value) for it
CONFIG_NAME = N_("Custom model (config.json)")  # shown through _()
MAX_PASTE_CHARS = 100_000  # a config.json is a few kB (Llama 3.1 70B: 0.9 kB)
MAX_UPLOAD_BYTES = 1_000_000


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
    arch = _arch(config)
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
    """An uploaded file's text (UTF-8, at most MAX_UPLOAD_BYTES), or ValueError."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(
            _("config.json: {n} bytes, larger than the limit of {limit} bytes").format(
                n=f"{len(data):,}", limit=f"{MAX_UPLOAD_BYTES:,}"
            )
        )
    try:
        text = data.decode("utf-8")
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
