"""Bring your own model: a Hugging Face config.json read into an Architecture and a ModelSpec.

The input is untrusted: its size is capped, it must be a JSON object whose keys each appear
once (json keeps the last of two silently; here a key given twice is refused by name), every
shape is checked for type and range, and unknown architectures are refused, each with a message
that names the config.json field and echoes at most 40 characters of its value. A UTF-8 byte
order mark is dropped, as the CSV readers drop it. Keys a family leaves out take the defaults of
that family's configuration class in transformers (e.g. Gemma 3's vocabulary of 262,208). Only
the text decoder is read; a vision tower is not counted. Field mapping: data/README.md ("arch").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from engine.catalog.arch import Architecture, active_param_count, param_count
from engine.catalog.hf_families import FAMILIES, GEMMA3_TEXT_DEFAULTS, TEXT_CONFIG, Fields
from engine.catalog.specs import ModelSpec
from engine.files import MAX_UPLOAD_BYTES, echo, read_bounded, repeated

MAX_CONFIG_BYTES = MAX_UPLOAD_BYTES  # a config.json is a few kB; larger is refused unread


class RepeatedKeyError(ValueError):
    """A JSON object that gives a key twice (json.loads would keep the last value)."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """json's object_pairs_hook: the object, or RepeatedKeyError naming a key given twice."""
    twice = repeated(key for key, _value in pairs)
    if twice:
        raise RepeatedKeyError(
            f"config.json: the key {echo(twice[0])} is given twice in one object "
            "(give each key once)"
        )
    return dict(pairs)


def _read_text(path: Path) -> str:
    data = read_bounded(path, MAX_CONFIG_BYTES, "config.json")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"config.json: cannot read {str(path)[:80]} (not UTF-8 text)") from None


def read_config(source: str | Path | Mapping) -> dict:
    """A config.json as a dict, from a dict, a JSON text or a file path (at most 1 MB).

    A string that starts with '{' or '[' (after any byte order mark) is JSON text; any other
    string is a path.

    Raises:
        ValueError: too large, not JSON, not an object, or a key given twice (RepeatedKeyError).
    """
    if isinstance(source, Mapping):
        data = dict(source)
    else:
        text = source.removeprefix("\ufeff") if isinstance(source, str) else None
        if text is None or text.lstrip()[:1] not in ("{", "["):
            text = _read_text(Path(source))
        if len(text) > MAX_CONFIG_BYTES:
            raise ValueError(f"config.json: larger than {MAX_CONFIG_BYTES:,} bytes")
        try:
            data = json.loads(text, object_pairs_hook=_unique_keys)
        except RepeatedKeyError:
            raise
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"config.json: not valid JSON ({str(exc)[:120]})") from None
    if not isinstance(data, dict):
        raise ValueError(f"config.json: must be a JSON object, got {type(data).__name__}")
    return data


def architecture_from_config(source: str | Path | Mapping) -> Architecture:
    """The decoder's Architecture from a config.json (see read_config for `source`)."""
    return _architecture(read_config(source))


class _Reads(dict):
    """A config table that records the keys its reader asks for (nested tables too)."""

    def __init__(self, data: Mapping):
        super().__init__(data)
        self.seen: set[str] = set()
        self.nested: dict[str, _Reads] = {}

    def get(self, key, default=None):
        self.seen.add(key)
        value = super().get(key, default)
        if isinstance(value, dict) and key in self:
            value = self.nested.setdefault(key, _Reads(value))
        return value

    def __getitem__(self, key):
        return self.get(key)

    def __contains__(self, key) -> bool:
        self.seen.add(key)
        return super().__contains__(key)

    def kept(self) -> dict:
        """The entries read, in the file's order (nested tables reduced the same way)."""
        return {
            k: self.nested[k].kept() if k in self.nested else dict.__getitem__(self, k)
            for k in self
            if k in self.seen
        }


def config_fields(source: str | Path | Mapping) -> dict:
    """The entries of a config.json that the reader reads: the same Architecture from a
    fraction of the text (a share link holds it). One read with the keys recorded, checked
    by a second read: linear in the number of keys, whatever else the file holds.

    Raises:
        ValueError: as `architecture_from_config`, naming the config.json field.
    """
    config = read_config(source)
    reads = _Reads(config)
    arch = _architecture(reads)
    kept = reads.kept()
    return kept if _architecture(kept) == arch else config  # the check never fails in tests


def _architecture(config: Mapping) -> Architecture:
    names = config.get("architectures")
    if not (isinstance(names, list) and names and isinstance(names[0], str)):
        raise ValueError(
            "config.json: 'architectures' is missing (a list like ['LlamaForCausalLM'])"
        )
    family = names[0]
    if family not in FAMILIES:
        known = ", ".join(sorted(FAMILIES))
        raise ValueError(
            f"config.json: architecture {echo(family)} is not supported (known: {known})"
        )
    fields = Fields(config)
    if family in TEXT_CONFIG:
        text = config.get("text_config")
        if not isinstance(text, dict):
            raise ValueError("config.json: 'text_config' is missing (the decoder's shapes)")
        defaults = GEMMA3_TEXT_DEFAULTS if family.startswith("Gemma3") else {}
        fields = Fields(text, "text_config.", defaults)
    try:
        return Architecture(**FAMILIES[family](fields))
    except ValueError as exc:
        message = str(exc)
        raise ValueError(
            message if message.startswith("config.json") else f"config.json: {message}"
        ) from None


def model_from_config(
    source: str | Path | Mapping, *, id: str | None = None, name: str | None = None
) -> ModelSpec:
    """A decoder-LLM ModelSpec from a Hugging Face config.json (a path, JSON text or dict).

    Parameters are counted from the shapes (`published_params` stays None); FLOPs per token
    are 2·active parameters (mac2). Raises ValueError naming the offending config.json field.
    """
    arch = architecture_from_config(source)
    total = param_count(arch)
    active = active_param_count(arch) if arch.is_moe else None
    label = id or "config.json"
    return ModelSpec(
        id=label,
        name=name or label,
        params=total,
        flops_per_sample=2.0 * (active or total),
        flop_convention="mac2",
        layers=arch.layers,
        source="config.json",
        task="llm",
        sample="token",
        active_params=active,
        hidden=arch.hidden,
        heads=arch.heads,
        kv_heads=arch.kv_heads,
        head_dim=arch.head_dim,
        context_length=arch.context_length,
        notes="Shapes from a config.json; parameters counted from them (text decoder only).",
        origin="config.json",
        arch=arch,
    )
