"""The single-solve page's share link: each parameter declared once (ui.links.params.Link).

model, hardware, batch, precision, the whole-model assumptions (efficiency, layer_overhead_us,
dispatch_overhead_ms, activation_fraction, flop_convention), custom_hw, custom_model, profile
(and a custom profile's other values), input_tokens and output_tokens (LLMs only).
"""

from __future__ import annotations

import engine
from ui.core import profiles
from ui.links import link_params as lp
from ui.links.params import Link

PAGE = "solve"


def declare(cat: engine.Catalog, custom: engine.Profile | None = None) -> Link:
    """Every link parameter of the page (`custom`: the custom profile a link carried)."""
    return Link(
        PAGE,
        [
            lp.model(cat, "ResNet-50"),
            lp.hardware(cat, "A100"),
            lp.batch(),
            lp.precision(),
            *lp.whole_model(),
            *lp.custom_specs(),
            *profiles.params(custom, default=profiles.TUTORIAL),
            *lp.tokens(),
        ],
    )
