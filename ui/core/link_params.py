"""The link parameters several pages declare alike, each with its reader, writer, default and,
for numbers, the one range its widget allows too (pages assemble them in ui/<page>/link.py).
"""

from __future__ import annotations

import engine
from ui.core import assumptions, custom
from ui.core.params import (
    Param,
    choice,
    listing,
    loose,
    number,
    whole_ranges,
    write_list,
    write_number,
    write_ranges,
)

MAX_BATCH_LIST = 4096  # batch sizes in one list
DEFAULT_CONTEXT = 4096  # tokens; the LLM view's context (the decode page's default)
TOKENS = {"input_tokens": 1024, "output_tokens": 256}  # a request's default shape
# Values a page remembers for the others (ui.core.state.publish(shared=...)).
SHARED_NAMES = ("model", "precision", *assumptions.WHOLE_MODEL, "flop_convention")
SHARED_NAMES += ("custom_hw", "custom_model", "view", "context", "memory_reserve")
VIEWS = {
    "decode": "LLM decode model (weights once per step + KV cache)",
    "tutorial": "Tutorial whole-model view (each extra sample moves α × weights)",
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
    return Param("hardware", reader, write_list, default)


def batch(default: int = 1) -> Param:
    return Param("batch", number(1, engine.MAX_BATCH, whole=True), write_number, default)


def batches(default: list[int] | None = None, max_items: int = MAX_BATCH_LIST) -> Param:
    """A batch list; `1..2000` and `8..512:8` are read and written compactly."""
    reader = whole_ranges(1, engine.MAX_BATCH, max_items=max_items)
    return Param("batches", reader, write_ranges, default, widget="text")


def precision(default: str = "fp16") -> Param:
    return Param("precision", choice(engine.PRECISIONS), default=default)


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
        Param(n, number(low[n], top, whole=True), write_number, default)
        for n, default in TOKENS.items()
    ]


def llm_view() -> list[Param]:
    """The LLM view of Sweep and Compare: `view` (decode | tutorial), `context` (tokens) and
    `memory_reserve` (the decode model's; ui.widgets.llm_view)."""
    return [
        Param("view", choice(tuple(VIEWS)), default="decode"),
        Param("context", number(1, engine.MAX_CONTEXT, whole=True), write_number, DEFAULT_CONTEXT),
        assumptions.param("memory_reserve", assumptions.MEMORY_RESERVE),
    ]
