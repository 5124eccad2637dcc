"""The LLM serving page's share link: each parameter declared once (ui.links.params.Link).

model (or `config.json` with `model_config=`), hardware, tp, pp, ep and attention_dp (an MoE
model's expert parallelism and attention DP inside the tp devices), batch, input_tokens,
output_tokens, kv_precision, profile, contexts and batches (the curves), tutorial (on/off),
optional overrides of the profile's assumptions (efficiency, memory_reserve,
layer_overhead_us, dispatch_overhead_ms, bandwidth_efficiency, attention_efficiency,
expert_efficiency, link_efficiency, link_latency_us, dequant_overhead: the planner's and /load's
names; blank: the profile's figure), precision, custom_hw,
custom_model, and the Sensitivity section's target_tpot_ms (50), sensitivity_step_pct (10) and
sensitivity_metric (tpot_ms). The decode page's older links keep working: `prompt=` and
`context=` map onto the request shape (ui.links.link_params.legacy_tokens); the written link
uses the new names.
Model: docs/model.md, "Serving model".
"""

from __future__ import annotations

import engine
from ui.links import assumptions
from ui.links import link_params as lp
from ui.links.params import (
    Link,
    Param,
    ParamError,
    choice,
    listing,
    number,
    write_list,
    write_number,
)
from ui.widgets import model_config as serve_config
from ui.words.i18n import _

PAGE = "decode"
# the overrides /decode declared first: their place in its links is kept
EARLIER = ("efficiency", "memory_reserve", "layer_overhead_us", "dispatch_overhead_ms")
DEFAULT_CONTEXTS, DEFAULT_BATCHES = [1024, 4096, 16384, 65536], [2**k for k in range(9)]
TOKENS = number(1, engine.MAX_TOKENS, whole=True)
DEGREE = number(1, engine.MAX_DEGREE, whole=True)
OVERRIDES = assumptions.SERVING_OVERRIDES  # of the profile's assumptions, as on /plan and /load


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
            *(Param(name=n, read=DEGREE, write=write_number, default=1) for n in ("tp", "pp")),
            *lp.moe_split(),
            lp.batch(),
            *lp.tokens(),
            lp.kv_format(),
            Param("profile", choice(engine.profile_names()), default=engine.DEFAULT_PROFILE),
            Param(
                name="contexts",
                read=lambda t: sorted(contexts(t)),
                write=write_list,
                default=DEFAULT_CONTEXTS,
                widget="text",
            ),
            lp.batches(DEFAULT_BATCHES),
            Param(
                name="tutorial",
                read=read_on_off,
                write=lambda on: "on" if on else "off",
                default=False,
            ),
            assumptions.param("efficiency"),  # the overrides: blank, the profile's figure
            assumptions.param("memory_reserve"),
            lp.number_format(),
            assumptions.param("layer_overhead_us"),
            assumptions.param("dispatch_overhead_ms"),
            *(assumptions.param(n) for n in OVERRIDES if n not in EARLIER),
            *lp.custom_specs(),
            *lp.legacy(),
            *sensitivity_params(),
        ],
    )


SENSITIVITY_METRICS = ("tpot_ms", "ttft_ms", "e2e_latency_ms", "output_tokens_per_s")


def sensitivity_params() -> list[Param]:
    """The Sensitivity section's parameters (ui/widgets/sensitivity.py): the ITL target of the
    synthesis in ms, the perturbation in percent and the result the tornado shows."""
    return [
        Param("target_tpot_ms", number(0.01, 1e6), write=write_number, default=50.0),
        Param("sensitivity_step_pct", number(0.1, 50.0), write=write_number, default=10.0),
        Param("sensitivity_metric", choice(SENSITIVITY_METRICS), default="tpot_ms"),
    ]
