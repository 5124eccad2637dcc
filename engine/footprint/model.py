"""Energy, carbon, water and the total cost of ownership of accelerators running at a site.

    power per device = TDP × (idle + (1 − idle) × utilisation)        (idle = 0.3 of TDP)
    IT energy        = devices × power per device × hours
    energy           = IT energy × PUE                                 (the facility's meter)
    carbon           = energy × grid intensity
    water            = IT energy × WUE                                 (site water only)
    capex            = devices × unit price × infrastructure multiplier
    owned cost       = capex × hours ÷ (years × 8,760 h) + energy × electricity price
                       + capex × maintenance share × hours ÷ 8,760 h + carbon × carbon price
    per GPU-hour     = owned cost ÷ (devices × hours); per 1M tokens = owned cost ÷ tokens × 10⁶
    rented cost      = devices × hours × list price per accelerator-hour (the catalogue's, as
                       the planner prices USD per 1M output tokens: engine/load/plan.py)

The idle share is the engine's one constant (engine/roofline/solve.py IDLE_POWER_FRACTION).
docs/model.md, "Footprint and cost of ownership".
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.catalog.reader import Catalog
from engine.catalog.resolve import resolve_hardware
from engine.footprint.data import grid as shipped_grid
from engine.footprint.data import unit_price
from engine.report.result import Result
from engine.roofline.solve import IDLE_POWER_FRACTION
from engine.scenarios.site import Grid, Ownership, Usage

HOURS_PER_YEAR = 8760.0
POWER_FORMULA = f"TDP × ({IDLE_POWER_FRACTION:g} + {1 - IDLE_POWER_FRACTION:g} × utilisation)"


class FootprintResult(Result):
    """Energy, carbon and water of one Usage at one Grid; `as_dict()` is the CLI's JSON."""


class TcoResult(Result):
    """Owned and rented cost of one Usage; `as_dict()` is the CLI's JSON."""


def _grid(grid: Grid | str) -> Grid:
    return grid if isinstance(grid, Grid) else shipped_grid(grid)


def footprint(
    usage: Usage,
    grid: Grid | str = "US_Avg",
    *,
    carbon_usd_per_tco2e: float = 0.0,
    catalog: Catalog | None = None,
) -> FootprintResult:
    """Energy (MWh), carbon (tCO2e) and site water (m³) of `usage` at `grid` (a Grid or a
    shipped grid's id), and the carbon's cost at `carbon_usd_per_tco2e`.

    Raises:
        ValueError: an unknown grid or accelerator, a negative carbon price, or an accelerator
            without a TDP in the catalogue.
    """
    g = _grid(grid)
    price = Ownership(carbon_usd_per_tco2e=carbon_usd_per_tco2e).carbon_usd_per_tco2e
    hw = resolve_hardware(usage.hardware, catalog)
    if not hw.tdp_w:
        raise ValueError(f"{hw.id} has no TDP in the catalogue: its power is unknown")
    share = IDLE_POWER_FRACTION + (1 - IDLE_POWER_FRACTION) * usage.utilisation
    power_w = hw.tdp_w * share
    it_kwh = usage.devices * power_w * usage.hours / 1e3
    kwh = it_kwh * g.pue
    carbon_t = kwh * g.carbon_g_per_kwh / 1e6
    values = {
        "hardware": hw.id,
        "devices": usage.devices,
        "hours": usage.hours,
        "utilisation": usage.utilisation,
        "tdp_w": hw.tdp_w,
        "power_per_device_w": power_w,
        "it_energy_mwh": it_kwh / 1e3,
        "energy_mwh": kwh / 1e3,
        "grid": g.id,
        "grid_name": g.name,
        "carbon_g_per_kwh": g.carbon_g_per_kwh,
        "pue": g.pue,
        "wue_l_per_kwh": g.wue_l_per_kwh,
        "carbon_tco2e": carbon_t,
        "water_m3": it_kwh * g.wue_l_per_kwh / 1e3,
        "carbon_usd_per_tco2e": price,
        "carbon_cost_usd": carbon_t * price,
        "grid_source": g.source,
        "grid_year": g.year,
    }
    assumptions = {"idle_power_fraction": IDLE_POWER_FRACTION, "power_formula": POWER_FORMULA}
    return FootprintResult(values=values, assumptions=assumptions, warnings=())


def tco(
    usage: Usage,
    ownership: Ownership | None = None,
    grid: Grid | str = "US_Avg",
    *,
    rental_usd_per_hour: float | None = None,
    catalog: Catalog | None = None,
) -> TcoResult:
    """What `usage` costs owned (amortised capex, power incl. PUE, maintenance, carbon) and
    rented (devices × hours × the catalogue's list price, or `rental_usd_per_hour`), in all,
    per GPU-hour and per 1M tokens (when `usage.tokens` is given).

    Raises:
        ValueError: no unit price for the accelerator (give `Ownership.unit_price_usd`), or a
            bad value (the message names it).
    """
    own = ownership or Ownership()
    fp = footprint(usage, grid, carbon_usd_per_tco2e=own.carbon_usd_per_tco2e, catalog=catalog)
    hw = resolve_hardware(usage.hardware, catalog)
    price, price_source = unit_price(hw.id)
    if own.unit_price_usd is not None:
        price, price_source = own.unit_price_usd, "given"
    if price is None:
        raise ValueError(
            f"no shipped unit price for {hw.id}: give unit_price_usd (CLI: --unit-price-usd)"
        )
    rent = hw.price_per_hour_usd if rental_usd_per_hour is None else rental_usd_per_hour
    if rent is not None and not (isinstance(rent, int | float) and 0 <= rent < 1e6):
        raise ValueError(f"rental_usd_per_hour: must be a number from 0 to 1e6, got {rent!r}")
    gpu_hours = usage.devices * usage.hours
    capex = usage.devices * price * own.infrastructure_multiplier
    amortised = capex * usage.hours / (own.years * HOURS_PER_YEAR)
    power = fp["energy_mwh"] * 1e3 * own.electricity_usd_per_kwh
    maintenance = capex * own.maintenance_per_year * usage.hours / HOURS_PER_YEAR
    total = amortised + power + maintenance + fp["carbon_cost_usd"]
    rented = None if rent is None else gpu_hours * rent
    values = {
        "hardware": hw.id,
        "devices": usage.devices,
        "hours": usage.hours,
        "gpu_hours": gpu_hours,
        "unit_price_usd": price,
        "unit_price_source": price_source,
        "infrastructure_multiplier": own.infrastructure_multiplier,
        "years": own.years,
        "capex_usd": capex,
        "amortised_capex_usd": amortised,
        "energy_mwh": fp["energy_mwh"],
        "electricity_usd_per_kwh": own.electricity_usd_per_kwh,
        "power_usd": power,
        "maintenance_per_year": own.maintenance_per_year,
        "maintenance_usd": maintenance,
        "carbon_tco2e": fp["carbon_tco2e"],
        "carbon_usd_per_tco2e": own.carbon_usd_per_tco2e,
        "carbon_usd": fp["carbon_cost_usd"],
        "total_usd": total,
        "usd_per_gpu_hour": total / gpu_hours,
        "tokens": usage.tokens,
        "usd_per_million_tokens": _per_million(total, usage.tokens),
        "rental_usd_per_gpu_hour": rent,
        "rental_usd": rented,
        "rental_usd_per_million_tokens": _per_million(rented, usage.tokens),
        "grid": fp["grid"],
    }
    return TcoResult(values=values, assumptions=fp.assumptions, warnings=())


def _per_million(usd: float | None, tokens: float | None) -> float | None:
    return None if usd is None or tokens is None else usd / tokens * 1e6


def train_usage(result: Result) -> Usage:
    """The Usage of a training run (engine.train's result): its GPUs, busy for the time to
    train its token budget (gpu_hours ÷ gpus), producing the budget's tokens."""
    r = result
    gpus = int(r["gpus"])
    return Usage(
        hardware=r["hardware"],
        devices=gpus,
        hours=r["gpu_hours"] / gpus,
        utilisation=1.0,
        tokens=r["token_budget"],
    )


def plan_usage(row: Mapping[str, object], hours: float = HOURS_PER_YEAR) -> Usage:
    """The Usage of one planned deployment (a row of engine.load_plan with a target rate):
    its GPUs for `hours`, busy the share target ÷ (replicas × max rate) of the time,
    producing target rate × output tokens × 3,600 tokens an hour."""
    gpus, target = row.get("gpus"), row.get("target_rate_per_s")
    ok = all(isinstance(v, int | float) and v == v and v > 0 for v in (gpus, target))
    if not ok:
        raise ValueError("the planned deployment has no GPUs or no target rate: nothing to count")
    busy = float(target) / (float(row["replicas"]) * float(row["max_rate_per_s"]))
    tokens = float(target) * float(row["output_tokens"]) * 3600.0 * hours
    return Usage(
        hardware=str(row["hardware"]),
        devices=int(gpus),
        hours=hours,
        utilisation=min(busy, 1.0),
        tokens=tokens,
    )
