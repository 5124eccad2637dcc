"""The engine's assumptions as the UI offers them: their ranges, read from the engine's one
registry (`engine.ASSUMPTIONS`: name, unit, range, default, label).

Each range is what a share link accepts, what the assumption's widget allows
(ui.widgets.pickers.number_input takes its bounds from the parameter's reader) and what the
engine accepts, so no value a link accepts is clamped or blanked by a widget or refused by the
engine. Defaults are the engine's (docs/model.md) and always on screen.
"""

from __future__ import annotations

from engine import ASSUMPTIONS, DEFAULTS
from ui.links.params import Param, choice, number, write_number

RANGES = {  # user name (the engine's, in its unit): (lowest, highest)
    a.name: (a.low, a.high) for a in ASSUMPTIONS if a.low is not None
}
# The assumptions that are words (a profile's kernel curves and reference): their options.
WORDS = {a.name: a.choices for a in ASSUMPTIONS if a.choices and a.name != "flop_convention"}
# The whole-model solve's defaults (the tutorial's); None: the accelerator's catalogued figure.
WHOLE_MODEL = {
    "efficiency": DEFAULTS.efficiency,
    "layer_overhead_us": DEFAULTS.layer_overhead_s * 1e6,
    "dispatch_overhead_ms": None,
    "activation_fraction": DEFAULTS.activation_fraction,
}
MEMORY_RESERVE = DEFAULTS.memory_reserve
# The serving assumptions the serving pages let the user override (blank: the profile's value):
# /decode, /plan and /load, under these link names (ui/widgets/overrides.py).
SERVING_OVERRIDES = ("efficiency", "bandwidth_efficiency", "attention_efficiency")
SERVING_OVERRIDES += ("expert_efficiency", "link_efficiency", "link_latency_us")
SERVING_OVERRIDES += ("layer_overhead_us", "dispatch_overhead_ms", "memory_reserve")
SERVING_OVERRIDES += ("dequant_overhead",)
FLOP_CONVENTIONS = ("catalog", "mac2")


def param(name: str, default: float | None = None, widget: str = "value") -> Param:
    """The link parameter of assumption `name`, over its range in RANGES (a word: one of its
    options in WORDS)."""
    if name in WORDS:
        return Param(name=name, read=choice(WORDS[name]), default=default, widget=widget)
    lo, hi = RANGES[name]
    return Param(name=name, read=number(lo, hi), write=write_number, default=default, widget=widget)


def flop_convention() -> Param:
    return Param("flop_convention", choice(FLOP_CONVENTIONS), default=DEFAULTS.flop_convention)
