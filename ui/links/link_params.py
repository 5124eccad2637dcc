"""The link parameters several pages declare alike, each with its reader, writer, default and,
for numbers, the one range its widget allows too (pages assemble them in ui/<page>/link.py).
"""

from __future__ import annotations

from collections.abc import Mapping

import engine
from ui.links import assumptions, custom
from ui.links.params import (
    Param,
    ParamError,
    choice,
    listing,
    loose,
    note,
    number,
    parse_params,
    whole_ranges,
    write_list,
    write_number,
    write_ranges,
)
from ui.words.i18n import N_, _

MAX_BATCH_LIST = 4096  # batch sizes in one list
LEGACY = ("context", "prompt")  # older links' token counts (legacy_tokens)
TOKENS = {"input_tokens": 1024, "output_tokens": 256}  # a request's default shape
# Values a page remembers for the others (ui.links.state.publish(shared=...)).
SHARED_NAMES = ("model", "precision", *assumptions.WHOLE_MODEL, "flop_convention")
SHARED_NAMES += ("custom_hw", "custom_model", "view", "memory_reserve")
VIEWS = {  # the LLM view's labels (translated where shown: ui.widgets.llm_view)
    "decode": N_("Serving model, a decode step (TPOT; weights once per step + KV cache)"),
    "request": N_("Serving model, whole requests (end-to-end latency, output tokens/s)"),
    "tutorial": N_("Tutorial whole-model view (each extra sample moves α × weights)"),
}


def found(spec, text: str) -> str:
    """`spec`'s id, with a note when `text` matched it only case- and punctuation-blind."""
    loose(text, spec)
    return spec.id


def _model_reader(cat: engine.Catalog):
    return choice(
        canon=lambda t: (
            custom.CUSTOM_MODEL_ID if custom.is_custom(t) else found(cat.find_model(t), t)
        )
    )


def hardware_reader(cat: engine.Catalog):
    """A catalogue accelerator (id, alias or name) or the custom one, as its id."""
    return choice(
        canon=lambda t: (
            custom.CUSTOM_HW_ID if custom.is_custom(t) else found(cat.find_hardware(t), t)
        )
    )


def model(cat: engine.Catalog, default: str) -> Param:
    return Param("model", _model_reader(cat), default=default)


def hardware(cat: engine.Catalog, default: str | None, name: str = "hardware") -> Param:
    return Param(name, hardware_reader(cat), default=default)


def hardware_list(cat: engine.Catalog, default: list[str], max_items: int = 8) -> Param:
    reader = listing(hardware_reader(cat), max_items=max_items)
    return Param(name="hardware", read=reader, write=write_list, default=default)


def batch(default: int = 1) -> Param:
    return Param(
        name="batch",
        read=number(1, engine.MAX_BATCH, whole=True),
        write=write_number,
        default=default,
    )


def batches(default: list[int] | None = None, max_items: int = MAX_BATCH_LIST) -> Param:
    """A batch list; `1..2000` and `8..512:8` are read and written compactly."""
    reader = whole_ranges(1, engine.MAX_BATCH, max_items=max_items)
    return Param(name="batches", read=reader, write=write_ranges, default=default, widget="text")


def precision(default: str = "fp16") -> Param:
    return Param("precision", choice(engine.PRECISIONS), default=default)


SAME_KV = "same"  # the KV-cache format: the weight format's default (engine.FORMATS)


def format_reader(formats: Mapping, aliases: Mapping):
    """A number format by name (case-blind). An older name (int4, fp4) is read as the format
    the engine reads it as (engine.FORMAT_ALIASES), with a note beside the field."""

    def canon(text: str) -> str:
        word = text.strip().lower()
        if word in aliases:
            note(_("{old} is read as {new}").format(old=word, new=aliases[word]))
            return aliases[word]
        if word in formats:
            return word
        raise ParamError(
            _("{text} is not one of {options}").format(
                text=repr(text[:40]), options=", ".join(formats)
            )
        )

    return choice(canon=canon)


def number_format(default: str = "fp16") -> Param:
    """`precision` on the serving pages: a number format of the weights and GEMMs."""
    return Param("precision", format_reader(engine.FORMATS, engine.FORMAT_ALIASES), default=default)


def kv_format() -> Param:
    """`kv_precision` on the serving pages: a KV-cache format, or `same` (the weights')."""
    options = {SAME_KV: None, **engine.KV_FORMATS}
    return Param("kv_precision", format_reader(options, engine.KV_FORMAT_ALIASES), default=SAME_KV)


def whole_model() -> list[Param]:
    """The whole-model solve's assumptions with the tutorial's defaults, and the FLOP rule."""
    out = [assumptions.param(n, default) for n, default in assumptions.WHOLE_MODEL.items()]
    return [*out, assumptions.flop_convention()]


def custom_specs() -> list[Param]:
    """`custom_hw` and `custom_model` (the editors keep `<page>:custom_hw` at the spec in use)."""
    return [
        Param("custom_hw", custom.read_custom_hw),
        Param("custom_model", custom.read_custom_model),
    ]


def tokens(top: int = engine.MAX_TOKENS, output_min: int = 1) -> list[Param]:
    """`input_tokens` and `output_tokens` per request (whole numbers)."""
    low = {"input_tokens": 1, "output_tokens": output_min}
    return [
        Param(name=n, read=number(low[n], top, whole=True), write=write_number, default=default)
        for n, default in TOKENS.items()
    ]


def llm_view() -> list[Param]:
    """The LLM view of Sweep and Compare (ui.widgets.llm_view): `view` (decode | request |
    tutorial) and `memory_reserve` (the serving model's); the pages declare the request shape
    (`tokens`) and an older link's `context` (`legacy`) beside it."""
    reserve = assumptions.param("memory_reserve", assumptions.MEMORY_RESERVE)
    return [Param("view", choice(tuple(VIEWS)), default="decode"), reserve]


def legacy(names: tuple[str, ...] = LEGACY) -> list[Param]:
    """An older link's token counts (`context`, `prompt`): read, mapped onto the request shape
    by `legacy_tokens`, never written (link-only)."""
    return [Param(n, number(1, engine.MAX_TOKENS, whole=True), widget="link") for n in names]


def legacy_tokens(raw: Mapping) -> dict[str, int]:
    """Input and output tokens from an older link's `prompt=` and `context=` (the decode view's
    context, before the serving model drew every LLM page): `prompt` is the input tokens;
    `context` is the length the request grows to, so with `prompt` it sets output_tokens =
    context − prompt, and alone it is the input tokens. Links with input_tokens keep theirs."""
    names = ("input_tokens", "output_tokens", *LEGACY)
    given = {k: v for k, v in raw.items() if k in names}
    values, _ = parse_params(given, [*tokens(), *legacy()])
    out = {}
    if "input_tokens" not in values and ("prompt" in values or "context" in values):
        out["input_tokens"] = values.get("prompt", values.get("context"))
    both = "output_tokens" not in values and {"prompt", "context"} <= values.keys()
    if both and values["context"] > values["prompt"]:
        out["output_tokens"] = values["context"] - values["prompt"]
    return out


def read_on_off(text: str) -> bool:
    """`on` or `off` (any case) as True or False."""
    word = text.strip().lower()
    if word not in ("on", "off"):
        raise ParamError(_("{text} is not on or off").format(text=repr(text[:20])))
    return word == "on"


def write_on_off(on: bool) -> str:
    return "on" if on else "off"


def moe_split() -> list[Param]:
    """An MoE model's layout inside the tp devices, as engine.Deployment takes it: `ep`
    (expert-parallel ranks; divides tp) and `attention_dp` (on or off: attention and the
    other non-expert operators data-parallel, each device with its own sequences)."""
    return [
        Param(
            name="ep",
            read=number(1, engine.MAX_DEGREE, whole=True),
            write=write_number,
            default=1,
        ),
        Param(name="attention_dp", read=read_on_off, write=write_on_off, default=False),
    ]
