"""The hardware-comparison page's share link: each parameter declared once (ui.links.params.Link).

model, hardware (2–8, comma list), baseline, batches, the precision and whole-model
assumptions, custom_hw, custom_model, the LLM view (view, memory_reserve), profile (and a
custom profile's other values), deployments (`8xH100/tp8,4xMI300X/tp4`), ep and attention_dp
(an MoE model's expert parallelism and attention DP, for every deployment), input_tokens and
output_tokens (the request of the serving views and the deployments; decoder LLMs with shapes
only; an older link's context is read as the request shape).
"""

from __future__ import annotations

import engine
from ui.compare.deployments import read_deployments, write_deployments
from ui.core import profiles
from ui.links import link_params as lp
from ui.links.params import Link, Param

PAGE = "compare"
DEFAULT_BATCHES = [1, 8, 64, 256]
DEFAULT_DEPLOYMENTS = "8xH100/tp8,4xMI300X/tp4"


def declare(cat: engine.Catalog, custom: engine.Profile | None = None) -> Link:
    """Every link parameter of the page (`custom`: the custom profile a link carried)."""
    deployments = read_deployments(cat)  # checked against the model on the page
    return Link(
        PAGE,
        [
            lp.model(cat, "ResNet-50"),
            lp.hardware_list(cat, ["A100", "H100"], max_items=8),
            lp.hardware(cat, None, "baseline"),  # none: the first accelerator chosen
            lp.batches(DEFAULT_BATCHES),
            lp.precision(),
            *lp.whole_model(),
            *lp.custom_specs(),
            *lp.llm_view(),
            *profiles.params(custom, skip=profiles.LLM_VIEW, default=profiles.TUTORIAL),
            Param(
                name="deployments",
                read=deployments,
                write=write_deployments,
                default=deployments(DEFAULT_DEPLOYMENTS),
                widget="text",
            ),
            *lp.moe_split(),
            *lp.tokens(),
            *lp.legacy(("context",)),
        ],
    )
