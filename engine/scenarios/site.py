"""Where and how long accelerators run, and what owning them costs: the scenarios of
engine.footprint and engine.tco (docs/model.md, "Footprint and cost of ownership").

`Grid` is a site's electricity and facility: carbon intensity (gCO2e per kWh), PUE (facility
energy / IT energy) and site WUE (litres per kWh of IT energy), with its source and year
(data/grids.toml holds the shipped ones). `Usage` is what runs there: `devices` accelerators of
one kind for `hours`, busy a share `utilisation` of the time, producing `tokens` (None: not a
token workload). `Ownership` is buying them instead of renting: the unit price per accelerator
(None: the shipped default for that accelerator), the years it is written off over, the
multiplier for the servers, network and facility around it, maintenance as a share of capex per
year, the electricity price and a carbon price. Each class checks itself with the message users
see. Imports the root's checks only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_DEVICES = 10_000_000
MAX_HOURS = 1_000_000.0  # about 114 years
MAX_PRICE_USD = 1e9


def _number(name: str, value: object, bounds: tuple[float, float], open_low: bool = False) -> float:
    """A finite number in [low, high] (or (low, high] when `open_low`), as a float."""
    low, high = bounds
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value > high or value < low or (open_low and value == low):
        bound = f"above {low:g}" if open_low else f"at least {low:g}"
        raise ValueError(f"{name}: must be a number {bound} and at most {high:g}, got {value!r}")
    return float(value)


@dataclass(frozen=True, slots=True)
class Grid:
    """A site's grid and facility: carbon_g_per_kwh (gCO2e/kWh), pue (≥ 1), wue_l_per_kwh (L per
    kWh of IT energy, site water only), the source and year of the figures, an id and a name."""

    carbon_g_per_kwh: float
    pue: float
    wue_l_per_kwh: float
    id: str = "custom"
    name: str = "custom"
    source: str = ""
    year: int | None = None

    def __post_init__(self) -> None:
        _set(self, "carbon_g_per_kwh", _number("carbon_g_per_kwh", self.carbon_g_per_kwh, (0, 5e3)))
        _set(self, "pue", _number("pue", self.pue, (1.0, 5.0)))
        _set(self, "wue_l_per_kwh", _number("wue_l_per_kwh", self.wue_l_per_kwh, (0, 100.0)))


@dataclass(frozen=True, slots=True)
class Usage:
    """`devices` accelerators of kind `hardware` (an id) for `hours`, busy a share `utilisation`
    (0 to 1) of the time, producing `tokens` in those hours (None: not counted)."""

    hardware: str
    devices: int
    hours: float
    utilisation: float = 1.0
    tokens: float | None = None

    def __post_init__(self) -> None:
        d = self.devices
        if not (isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= MAX_DEVICES):
            raise ValueError(
                f"devices: must be a whole number from 1 to {MAX_DEVICES:,}, got {d!r}"
            )
        _set(self, "hours", _number("hours", self.hours, (0, MAX_HOURS), open_low=True))
        _set(self, "utilisation", _number("utilisation", self.utilisation, (0, 1)))
        if self.tokens is not None:
            _set(self, "tokens", _number("tokens", self.tokens, (0, 1e30), open_low=True))


@dataclass(frozen=True, slots=True)
class Ownership:
    """Owning the accelerators: unit_price_usd per accelerator (None: the shipped default for
    the hardware), written off over `years`, × `infrastructure_multiplier` for the servers,
    network and facility around it, maintenance a share of capex per year, electricity USD per
    kWh and a carbon price in USD per tCO2e."""

    unit_price_usd: float | None = None
    years: float = 3.0
    infrastructure_multiplier: float = 1.5
    maintenance_per_year: float = 0.05
    electricity_usd_per_kwh: float = 0.07
    carbon_usd_per_tco2e: float = 0.0

    def __post_init__(self) -> None:
        if self.unit_price_usd is not None:
            price = _number("unit_price_usd", self.unit_price_usd, (0, MAX_PRICE_USD))
            _set(self, "unit_price_usd", price)
        _set(self, "years", _number("years", self.years, (0, 50), open_low=True))
        mult = _number("infrastructure_multiplier", self.infrastructure_multiplier, (1, 10))
        _set(self, "infrastructure_multiplier", mult)
        _set(
            self,
            "maintenance_per_year",
            _number("maintenance_per_year", self.maintenance_per_year, (0, 1)),
        )
        price = _number("electricity_usd_per_kwh", self.electricity_usd_per_kwh, (0, 10))
        _set(self, "electricity_usd_per_kwh", price)
        carbon = _number("carbon_usd_per_tco2e", self.carbon_usd_per_tco2e, (0, 1e5))
        _set(self, "carbon_usd_per_tco2e", carbon)


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)
