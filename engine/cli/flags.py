"""The CLI's assumption flags, built from the one registry (engine/assumptions.py).

Each assumption's flag is its user name with dashes (`--layer-overhead-us`), typed and with its
unit, range and default in the help; the engine checks the value (exit 2 when out of range).
The tutorial's commands (solve, sweep, decode) take the tutorial's five; the serving commands
take every assumption, and `serve`, `ops` and `load` the MoE layout flags (`add_split_flags`).
"""

from __future__ import annotations

import argparse

from engine.assumptions import BY_NAME, REGISTRY, make_assumptions
from engine.catalog.formats import FORMAT_CHOICES, KV_FORMAT_CHOICES

TUTORIAL_ASSUMPTIONS = tuple(a.name for a in REGISTRY if a.models in ("tutorial", "both"))
TUTORIAL_ASSUMPTIONS = tuple(
    n
    for n in TUTORIAL_ASSUMPTIONS
    if n
    in (
        "efficiency",
        "layer_overhead_us",
        "dispatch_overhead_ms",
        "activation_fraction",
        "flop_convention",
    )
)


def assumption_flag(p: argparse.ArgumentParser, name: str) -> None:
    """One assumption's flag: its name with dashes, unit, range and default in the help."""
    a = BY_NAME[name]
    default = a.none_means or f"{a.default}"
    if a.choices:
        p.add_argument(
            f"--{name.replace('_', '-')}",
            choices=list(a.choices),
            help=f"{a.label} (default {default})",
        )
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


def add_format_flags(p: argparse.ArgumentParser) -> None:
    """--precision (the weights' and GEMMs' number format) and --kv-precision (the KV cache's)."""
    p.add_argument(
        "--precision",
        default="fp16",
        choices=FORMAT_CHOICES,
        help="number format of the weights and GEMMs (list formats; int4 is read as w4a16)",
    )
    p.add_argument(
        "--kv-precision",
        choices=KV_FORMAT_CHOICES,
        help="KV-cache format (default: the weight format's; list formats)",
    )


def add_split_flags(p: argparse.ArgumentParser) -> None:
    """`--ep` and `--attention-dp on|off`: an MoE model's expert parallelism and attention data
    parallelism inside the tp devices (engine.Deployment's `ep` and `attention_dp`)."""
    p.add_argument(
        "--ep",
        type=int,
        default=1,
        help="expert-parallel ranks among the tp devices (MoE; divides tp; default 1)",
    )
    p.add_argument(
        "--attention-dp",
        choices=["on", "off"],
        default="off",
        help="attention data-parallel over the tp devices, each with its own batch (default off)",
    )


def split_args(args: argparse.Namespace) -> dict:
    """The Deployment keywords of `add_split_flags`."""
    return {"ep": args.ep, "attention_dp": args.attention_dp == "on"}
