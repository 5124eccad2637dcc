"""The CLI's assumption flags, built from the one registry (engine/assumptions.py).

Each assumption's flag is its user name with dashes (`--layer-overhead-us`), typed and with its
unit, range and default in the help; the engine checks the value (exit 2 when out of range).
The tutorial's commands (solve, sweep, decode) take the tutorial's five; the serving commands
take every assumption.
"""

from __future__ import annotations

import argparse

from engine.assumptions import BY_NAME, REGISTRY, make_assumptions

TUTORIAL_ASSUMPTIONS = tuple(a.name for a in REGISTRY if a.models in ("tutorial", "both"))
TUTORIAL_ASSUMPTIONS = tuple(n for n in TUTORIAL_ASSUMPTIONS if n in (
    "efficiency", "layer_overhead_us", "dispatch_overhead_ms", "activation_fraction",
    "flop_convention"))  # fmt: skip


def assumption_flag(p: argparse.ArgumentParser, name: str) -> None:
    """One assumption's flag: its name with dashes, unit, range and default in the help."""
    a = BY_NAME[name]
    default = a.none_means or f"{a.default}"
    if a.choices:
        p.add_argument(f"--{name.replace('_', '-')}", choices=list(a.choices),
                       help=f"{a.label} (default {default})")  # fmt: skip
        return
    unit = f" {a.unit}" if a.unit else ""
    text = f"{a.label}: {a.low:g} to {a.high:g}{unit} (default {default})"
    p.add_argument(f"--{name.replace('_', '-')}", type=float, help=text)


def add_assumption_flags(p: argparse.ArgumentParser) -> None:
    """The tutorial's assumption flags shared by every solving command (docs/model.md)."""
    for name in TUTORIAL_ASSUMPTIONS:
        assumption_flag(p, name)


def assumptions_from(args: argparse.Namespace):
    return make_assumptions(**{name: getattr(args, name) for name in TUTORIAL_ASSUMPTIONS})


def add_serving_flags(p: argparse.ArgumentParser) -> None:
    """Every other assumption's flag (from the registry), skipping those already added."""
    for a in REGISTRY:
        if f"--{a.name.replace('_', '-')}" not in p._option_string_actions:
            assumption_flag(p, a.name)
