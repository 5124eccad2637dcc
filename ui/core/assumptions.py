"""The engine's assumptions as the UI offers them: ONE table of ranges, read by every page.

Each range is what a share link accepts and, the same numbers, what the assumption's widget
allows (ui.widgets.pickers.number_input takes its bounds from the parameter's reader), so no
value a link accepts is clamped or blanked by a widget. The ranges are the UI's (tighter than
the engine's checks where a widget needs a floor, e.g. efficiency ≥ 0.01); the engine will
later publish its own registry of assumption ranges, and this table should then read it.
Defaults are the engine's (docs/model.md) and always on screen.
"""

from __future__ import annotations

from engine import DEFAULTS
from ui.core.params import Param, choice, number, write_number

RANGES = {  # user name (the engine's, in its unit): (lowest, highest)
    "efficiency": (0.01, 1.0),
    "layer_overhead_us": (0.0, 1e6),
    "dispatch_overhead_ms": (0.0, 1e4),
    "activation_fraction": (0.0, 1e3),
    "memory_reserve": (0.0, 0.95),
    "bandwidth_efficiency": (0.01, 1.0),
    "attention_efficiency": (0.01, 1.0),
    "expert_efficiency": (0.01, 1.0),
    "link_efficiency": (0.01, 1.0),
    "link_latency_us": (0.0, 1e6),
}
# The whole-model solve's defaults (the tutorial's); None: the accelerator's catalogued figure.
WHOLE_MODEL = {
    "efficiency": DEFAULTS.efficiency,
    "layer_overhead_us": DEFAULTS.layer_overhead_s * 1e6,
    "dispatch_overhead_ms": None,
    "activation_fraction": DEFAULTS.activation_fraction,
}
MEMORY_RESERVE = DEFAULTS.memory_reserve
FLOP_CONVENTIONS = ("catalog", "mac2")


def param(name: str, default: float | None = None, widget: str = "value") -> Param:
    """The link parameter of assumption `name`, over its range in RANGES."""
    lo, hi = RANGES[name]
    return Param(name, number(lo, hi), write_number, default, widget)


def flop_convention() -> Param:
    return Param("flop_convention", choice(FLOP_CONVENTIONS), default=DEFAULTS.flop_convention)
