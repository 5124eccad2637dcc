"""The shipped grid profiles (data/grids.toml) and ownership defaults (data/ownership.toml),
read once; each figure keeps its source and year."""

from __future__ import annotations

import functools
import tomllib

from engine.catalog.reader import DATA_DIR
from engine.scenarios.site import Grid

GRIDS_FILE = DATA_DIR / "grids.toml"
OWNERSHIP_FILE = DATA_DIR / "ownership.toml"


@functools.cache
def grids() -> dict[str, Grid]:
    """Every shipped grid profile by id (Quebec, Norway, US_Avg, Poland, ...)."""
    table = tomllib.loads(GRIDS_FILE.read_text(encoding="utf-8"))["grids"]
    return {
        gid: Grid(
            carbon_g_per_kwh=g["carbon_g_per_kwh"],
            pue=g["pue"],
            wue_l_per_kwh=g["wue_l_per_kwh"],
            id=gid,
            name=g["name"],
            source=g["source"],
            year=g["year"],
        )
        for gid, g in table.items()
    }


def grid(grid_id: str) -> Grid:
    """One shipped grid profile by id (case-insensitive)."""
    by_lower = {k.lower(): v for k, v in grids().items()}
    found = by_lower.get(str(grid_id).strip().lower())
    if found is None:
        raise ValueError(f"unknown grid {str(grid_id)[:40]!r}; known: {', '.join(grids())}")
    return found


@functools.cache
def ownership_table() -> dict:
    """data/ownership.toml as read: `defaults` (value, year, source, notes) and `unit_price`."""
    return tomllib.loads(OWNERSHIP_FILE.read_text(encoding="utf-8"))


def unit_price(hardware_id: str) -> tuple[float | None, str]:
    """The shipped purchase price (USD) of one accelerator and its source (None, "": none)."""
    entry = ownership_table()["unit_price"].get(hardware_id)
    if entry is None:
        return None, ""
    return float(entry["usd"]), f"{entry['source']} ({entry['year']})"


def ownership_defaults() -> list[dict]:
    """Every shipped ownership default with its value, year and source (for pages and docs)."""
    rows = [
        {"name": name, "value": d["value"], "year": d["year"], "source": d["source"]}
        for name, d in ownership_table()["defaults"].items()
    ]
    rows += [
        {
            "name": f"unit_price_usd[{hw}]",
            "value": p["usd"],
            "year": p["year"],
            "source": p["source"],
        }
        for hw, p in ownership_table()["unit_price"].items()
    ]
    return rows
