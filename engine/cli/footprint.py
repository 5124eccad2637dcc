"""`python -m engine footprint|tco`: energy, carbon and water of accelerators at a site, and
what owning them costs beside renting them.

Both take `--hardware`, `--gpus`, `--hours` (or `--days`), `--utilisation` and a grid
(`--grid ID`, a shipped profile of data/grids.toml, with `--carbon-g-per-kwh`, `--pue` and
`--wue-l-per-kwh` overriding its figures) and `--carbon-usd-per-tco2e`; `tco` also the
ownership flags (`--unit-price-usd`, `--years`, `--infrastructure-multiplier`,
`--maintenance-per-year`, `--electricity-usd-per-kwh`), `--rental-usd-per-hour` and `--tokens`
(for USD per 1M tokens), and refuses `--wue-l-per-kwh` (water has no price in it). JSON keys:
FootprintResult / TcoResult `as_dict()` (README, a contract). docs/model.md, "Footprint and
cost of ownership".
"""

from __future__ import annotations

import argparse
import dataclasses

from engine.catalog.reader import Catalog
from engine.cli.output import json_text, table_text
from engine.footprint.data import grid, grids
from engine.footprint.model import footprint, tco
from engine.report.export import write_csv
from engine.scenarios.site import Ownership, Usage

GRID_FLAGS = ("carbon_g_per_kwh", "pue", "wue_l_per_kwh")
OWN_FLAGS = (
    "unit_price_usd",
    "years",
    "infrastructure_multiplier",
    "maintenance_per_year",
    "electricity_usd_per_kwh",
)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hardware", required=True, help="an accelerator id (its TDP is read)")
    p.add_argument("--gpus", type=int, required=True, help="accelerators in all")
    p.add_argument("--hours", type=float, help="hours they run (or --days)")
    p.add_argument("--days", type=float, help="days they run (24 h each)")
    p.add_argument("--utilisation", type=float, default=1.0, help="busy share 0-1 (default 1)")
    p.add_argument("--grid", default="US_Avg", help=f"one of {', '.join(grids())} (default US_Avg)")
    for name in GRID_FLAGS:
        p.add_argument(f"--{name.replace('_', '-')}", type=float, help="(default: the grid's)")
    p.add_argument("--carbon-usd-per-tco2e", type=float, default=0.0, help="(default 0)")
    p.add_argument("--format", choices=["json", "csv", "table"], default="table")


def add_footprint_commands(sub) -> None:
    """Register `footprint` and `tco` on `sub` (argparse subparsers)."""
    _common(sub.add_parser("footprint", help="energy, carbon and water at a site"))
    p = sub.add_parser("tco", help="cost of owning accelerators, beside renting them")
    _common(p)
    defaults = Ownership()
    for name in OWN_FLAGS:
        default = getattr(defaults, name)
        shown = "the shipped price" if default is None else f"{default:g}"
        p.add_argument(f"--{name.replace('_', '-')}", type=float, help=f"(default {shown})")
    p.add_argument("--rental-usd-per-hour", type=float, help="(default: the catalogue's)")
    p.add_argument("--tokens", type=float, help="tokens produced in the hours (for USD per 1M)")


def _usage(args: argparse.Namespace) -> Usage:
    if (args.hours is None) == (args.days is None):
        raise ValueError("give one of --hours or --days")
    hours = args.hours if args.days is None else args.days * 24.0
    tokens = getattr(args, "tokens", None)
    return Usage(
        hardware=args.hardware,
        devices=args.gpus,
        hours=hours,
        utilisation=args.utilisation,
        tokens=tokens,
    )


def _grid(args: argparse.Namespace):
    given = {n: getattr(args, n) for n in GRID_FLAGS if getattr(args, n) is not None}
    return dataclasses.replace(grid(args.grid), **given) if given else grid(args.grid)


def _out(result, fmt: str) -> str:
    d = result.as_dict()
    if fmt == "json":
        return json_text(d)
    flat = {k: v for k, v in d.items() if k not in ("assumptions", "warnings")}
    flat |= d["assumptions"]
    if fmt == "csv":
        import pandas as pd

        return write_csv(pd.DataFrame([flat])).rstrip("\n")
    return table_text(flat)


def cmd_footprint(args: argparse.Namespace, catalog: Catalog) -> str:
    r = footprint(
        _usage(args),
        _grid(args),
        carbon_usd_per_tco2e=args.carbon_usd_per_tco2e,
        catalog=catalog,
    )
    return _out(r, args.format)


def cmd_tco(args: argparse.Namespace, catalog: Catalog) -> str:
    if args.wue_l_per_kwh is not None:  # shared with footprint; the cost has no water term
        raise ValueError(
            "--wue-l-per-kwh: tco prices energy and carbon, not water; `footprint` reports the "
            "water used"
        )
    given = {n: getattr(args, n) for n in OWN_FLAGS if getattr(args, n) is not None}
    own = Ownership(carbon_usd_per_tco2e=args.carbon_usd_per_tco2e, **given)
    r = tco(
        _usage(args),
        own,
        _grid(args),
        rental_usd_per_hour=args.rental_usd_per_hour,
        catalog=catalog,
    )
    return _out(r, args.format)
