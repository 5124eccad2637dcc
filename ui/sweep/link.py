"""The batch-sweep page's share link: each parameter declared once (ui.links.params.Link).

model, hardware, batches (`1..2000`, `8..512:8`), budget_ms (optional latency budget), the
precision and whole-model assumptions, custom_hw, custom_model, the LLM view (view,
input_tokens, output_tokens, memory_reserve; an older link's context is read as the request
shape), profile (and a custom profile's other values).
"""

from __future__ import annotations

import engine
from ui.core import profiles
from ui.links import link_params as lp
from ui.links.params import Link, Param, number, write_number

PAGE = "sweep"
DEFAULT_BATCHES = [2**k for k in range(9)]  # 1, 2, 4, ..., 256


def declare(cat: engine.Catalog, custom: engine.Profile | None = None) -> Link:
    """Every link parameter of the page (`custom`: the custom profile a link carried)."""
    return Link(
        PAGE,
        [
            lp.model(cat, "ResNet-50"),
            lp.hardware(cat, "A100"),
            lp.batches(DEFAULT_BATCHES),
            Param("budget_ms", number(0.001, 1e6), write_number),  # blank: no budget
            lp.precision(),
            *lp.whole_model(),
            *lp.custom_specs(),
            *lp.llm_view(),
            *lp.tokens(),
            *lp.legacy(("context",)),
            *profiles.params(custom, skip=profiles.LLM_VIEW, default=profiles.TUTORIAL),
        ],
    )
