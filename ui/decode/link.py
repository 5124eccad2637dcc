"""The LLM serving page's share link: each parameter declared once (ui.core.params.Link).

model (or `config.json` with `model_config=`), hardware, tp, pp, batch, input_tokens,
output_tokens, kv_precision, profile, contexts and batches (the curves), tutorial (on/off),
optional overrides of the profile's assumptions (efficiency, memory_reserve,
layer_overhead_us, dispatch_overhead_ms; blank: the profile's figure), precision, custom_hw,
custom_model. The decode page's older links keep working: `prompt=` and `context=` map onto
the request shape (ui.core.link_params.legacy_tokens); the written link uses the new names.
Model: docs/model.md, "Serving model".
"""

from __future__ import annotations

import engine
from ui.core import assumptions
from ui.core import link_params as lp
from ui.core import model_config as serve_config
from ui.core.i18n import _
from ui.core.params import (
    Link,
    Param,
    ParamError,
    choice,
    listing,
    number,
    write_list,
    write_number,
)

PAGE = "decode"
KV_CHOICES = ("same", "fp16", "bf16", "fp8", "int8", "int4")  # same: the weight precision
DEFAULT_CONTEXTS, DEFAULT_BATCHES = [1024, 4096, 16384, 65536], [2**k for k in range(9)]
TOKENS = number(1, engine.MAX_TOKENS, whole=True)
DEGREE = number(1, engine.MAX_DEGREE, whole=True)
OVERRIDES = ("efficiency", "layer_overhead_us", "dispatch_overhead_ms", "memory_reserve")


def read_on_off(text: str) -> bool:
    word = text.strip().lower()
    if word not in ("on", "off"):
        raise ParamError(_("{text} is not on or off").format(text=repr(text[:20])))
    return word == "on"


def model_reader(base: engine.Catalog):
    """A catalogue LLM with shapes (id, alias or name), or `config.json`."""

    def canon(text: str) -> str:
        if text.strip().lower() == serve_config.CONFIG_ID:
            return serve_config.CONFIG_ID
        spec = engine.resolve_llm(text, base)
        if getattr(spec, "arch", None) is None:
            raise ValueError(
                _("{model} has no shapes (the serving model needs them)").format(model=spec.id)
            )
        return lp.found(spec, text)

    return choice(canon=canon)


def declare(cat: engine.Catalog) -> Link:
    """Every link parameter of the page."""
    contexts = listing(TOKENS, max_items=8)
    return Link(
        PAGE,
        [
            Param("model", model_reader(cat), default="Llama-3.1-8B"),
            serve_config.param(),
            lp.hardware(cat, "A100"),
            *(Param(n, DEGREE, write_number, 1) for n in ("tp", "pp")),
            lp.batch(),
            *lp.tokens(),
            Param("kv_precision", choice(KV_CHOICES), default="same"),
            Param("profile", choice(engine.profile_names()), default="tutorial"),
            Param("contexts", lambda t: sorted(contexts(t)), write_list, DEFAULT_CONTEXTS, "text"),
            lp.batches(DEFAULT_BATCHES),
            Param("tutorial", read_on_off, lambda on: "on" if on else "off", False),
            assumptions.param("efficiency"),  # the overrides: blank, the profile's figure
            assumptions.param("memory_reserve"),
            lp.precision(),
            assumptions.param("layer_overhead_us"),
            assumptions.param("dispatch_overhead_ms"),
            *lp.custom_specs(),
            *lp.legacy(),
        ],
    )
