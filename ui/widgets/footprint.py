"""The "Footprint and cost of ownership" section of the training planner (the planned run) and
the serving planner (the planned deployment): a grid picker, the grid's figures and the
ownership defaults as editable fields (each a link parameter, declared by `params()`), and one
table of engine.footprint and engine.tco with its CSV. Every default shows in its field or in
the table's sources; a blank override field means the grid's own figure."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pandas as pd
import streamlit as st

import engine
from ui.core.downloads import download_csv
from ui.core.frame import source_md
from ui.links.params import Link, Param, choice, number, write_number
from ui.widgets.pickers import number_input, select_entry
from ui.words.data_text import said
from ui.words.format import fmt
from ui.words.i18n import N_, _
from ui.words.text import plain

OWN = engine.Ownership()
GRID_FIELDS = {  # link name: (label, the Grid's field)
    "carbon_g_per_kwh": (N_("Grid intensity (gCO2e/kWh)"), "carbon_g_per_kwh"),
    "pue": (N_("PUE (facility ÷ IT energy)"), "pue"),
    "wue_l_per_kwh": (N_("Site WUE (L/kWh of IT energy)"), "wue_l_per_kwh"),
}
OWN_FIELDS = {  # link name: (label, step)
    "unit_price_usd": (N_("Unit price per GPU (USD)"), 1000.0),
    "years": (N_("Written off over (years)"), 1.0),
    "infrastructure_multiplier": (N_("Infrastructure multiplier (servers, network)"), 0.1),
    "maintenance_per_year": (N_("Maintenance per year (share of capex)"), 0.01),
    "electricity_usd_per_kwh": (N_("Electricity (USD/kWh)"), 0.01),
}
CARBON_PRICES = (50.0, 100.0)  # the chapter's "$50/t" and "$100+/t"


def power_formula() -> str:
    """engine.POWER_FORMULA in the reader's language (the same idle share, engine's constant)."""
    idle = engine.IDLE_POWER_FRACTION
    return _("TDP × ({idle} + {busy} × utilisation)").format(idle=f"{idle:g}", busy=f"{1 - idle:g}")


def params() -> list[Param]:
    """The section's link parameters (a page adds them to its Link)."""
    return [
        Param("grid", choice(tuple(engine.grids())), default="US_Avg"),
        Param("carbon_g_per_kwh", number(0, 5000), write_number),
        Param("pue", number(1, 5), write_number),
        Param("wue_l_per_kwh", number(0, 100), write_number),
        Param("carbon_price", number(0, 100_000), write_number, default=0.0),
        Param("unit_price_usd", number(0, 1e9), write_number),
        Param("years", number(0.1, 50), write_number, default=OWN.years),
        Param(
            "infrastructure_multiplier",
            number(1, 10),
            write_number,
            default=OWN.infrastructure_multiplier,
        ),
        Param("maintenance_per_year", number(0, 1), write_number, default=OWN.maintenance_per_year),
        Param(
            "electricity_usd_per_kwh",
            number(0, 10),
            write_number,
            default=OWN.electricity_usd_per_kwh,
        ),
    ]


def _inputs(link: Link) -> tuple[engine.Grid, engine.Ownership]:
    """The grid (its figures overridden where a field is filled) and the ownership."""
    names = {gid: SimpleNamespace(name=said(g.name)) for gid, g in engine.grids().items()}
    gid = select_entry(link=link, name="grid", label=_("Grid (site)"), entries=names)
    shipped = engine.grids()[gid]
    cols = st.columns(len(GRID_FIELDS) + 1)
    given = {}
    for col, (name, (label, field)) in zip(cols, GRID_FIELDS.items(), strict=False):
        text = _("{label}; blank: the grid's {value}").format(
            label=_(label), value=fmt(getattr(shipped, field))
        )
        value = number_input(link, name, text, where=col, value=None, step=0.01)
        if value is not None:
            given[field] = float(value)
    with cols[-1]:
        price = number_input(link, "carbon_price", _("Carbon price (USD/tCO2e)"), step=10.0)
    cols = st.columns(len(OWN_FIELDS))
    own = {}
    for col, (name, (label, step)) in zip(cols, OWN_FIELDS.items(), strict=True):
        options = {"value": None} if name == "unit_price_usd" else {}
        value = number_input(link, name, _(label), where=col, step=step, **options)
        if value is not None:
            own[name] = float(value)
    grid = dataclasses.replace(shipped, **given) if given else shipped
    return grid, engine.Ownership(carbon_usd_per_tco2e=float(price or 0.0), **own)


def _has_price(hardware: str) -> bool:
    """Whether data/ownership.toml ships a purchase price for `hardware`."""
    return any(d["name"] == f"unit_price_usd[{hardware}]" for d in engine.ownership_defaults())


def section(
    link: Link, usage: engine.Usage | None, what: str, *, key: str, rental: float | None = None
) -> None:
    """The section for `usage` (`what`: one sentence saying what it counts, or why nothing is
    counted when `usage` is None; its fields are drawn either way, so a link reaches them);
    `rental`: the page's price per accelerator-hour (None: the catalogue's list price)."""
    st.subheader(_("Footprint and cost of ownership"))
    st.caption(what)
    grid, own = _inputs(link)
    if usage is None:
        return
    try:
        fp = engine.footprint(usage, grid, carbon_usd_per_tco2e=own.carbon_usd_per_tco2e)
    except ValueError:  # an accelerator without a TDP (a team's entry)
        st.error(
            _("{hardware} has no TDP in the catalogue: its power is unknown.").format(
                hardware=plain(usage.hardware)
            ),
            icon="🚫",
        )
        return
    cost = None
    if own.unit_price_usd is not None or _has_price(usage.hardware):
        cost = engine.tco(usage, own, grid, rental_usd_per_hour=rental).as_dict()
    else:
        st.info(
            _(
                "No purchase price is shipped for {hardware}: enter the unit price per GPU to "
                "count the cost of owning it."
            ).format(hardware=plain(usage.hardware)),
            icon="💵",
        )
    rows = table_rows(fp.as_dict(), cost)
    shown = pd.DataFrame(
        {_("Quantity"): [_(r[0]) for r in rows], _("Value"): [fmt(r[2], r[3]) for r in rows]}
    )
    st.dataframe(shown, hide_index=True, key=f"{key}_footprint")
    raw = {name: value for _label, name, value, _unit in rows}
    raw |= {"grid": grid.id, "hardware": usage.hardware, "power_formula": engine.POWER_FORMULA}
    download_csv(pd.DataFrame([raw]), f"{key}_footprint_tco.csv", f"{key}:footprint_csv")
    _sources(grid, given_price=own.unit_price_usd is not None)


ROWS = (  # label, the value's name (with its unit, as in the CSV), the unit shown
    (N_("GPUs"), "devices", ""),
    (N_("Hours"), "hours", "h"),
    (N_("Busy share of the time"), "utilisation", ""),
    (N_("Power per GPU"), "power_per_device_w", "W"),
    (N_("IT energy"), "it_energy_mwh", "MWh"),
    (N_("Energy at the meter (× PUE)"), "energy_mwh", "MWh"),
    (N_("Carbon"), "carbon_tco2e", "tCO2e"),
    (N_("Site water"), "water_m3", "m³"),
    (N_("Carbon cost at the price given"), "carbon_cost_usd", "USD"),
    (N_("Carbon cost at 50 USD/tCO2e"), "carbon_cost_at_50_usd", "USD"),
    (N_("Carbon cost at 100 USD/tCO2e"), "carbon_cost_at_100_usd", "USD"),
    (N_("Capex (GPUs × price × multiplier)"), "capex_usd", "USD"),
    (N_("Capex written off in these hours"), "amortised_capex_usd", "USD"),
    (N_("Power"), "power_usd", "USD"),
    (N_("Maintenance"), "maintenance_usd", "USD"),
    (N_("Owned: total"), "total_usd", "USD"),
    (N_("Owned: per GPU-hour"), "usd_per_gpu_hour", "USD"),
    (N_("Owned: per 1M tokens"), "usd_per_million_tokens", "USD"),
    (N_("Rented: total (list price)"), "rental_usd", "USD"),
    (N_("Rented: per GPU-hour"), "rental_usd_per_gpu_hour", "USD"),
    (N_("Rented: per 1M tokens"), "rental_usd_per_million_tokens", "USD"),
)


def table_rows(fp: dict, cost: dict | None) -> list[tuple[str, str, object, str]]:
    """(label, CSV name with its unit, value, display unit) for each quantity shown (the
    footprint's only when `cost` is None)."""
    values = fp | (cost or {})
    for price in CARBON_PRICES:  # the chapter's prices, beside the one given
        values[f"carbon_cost_at_{price:g}_usd"] = fp["carbon_tco2e"] * price
    return [(label, name, values[name], unit) for label, name, unit in ROWS if name in values]


def _sources(grid: engine.Grid, given_price: bool) -> None:
    grid_src = source_md(said(grid.name), grid.source) if grid.source else _("entered")
    parts = [_("Grid: {grid} ({year})").format(grid=grid_src, year=grid.year or "—")]
    for d in engine.ownership_defaults():
        name, _sep, hardware = d["name"].partition("[")
        label = _(OWN_FIELDS[name][0]) + (f" {hardware.rstrip(']')}" if hardware else "")
        parts.append(source_md(f"{label} = {d['value']:g} ({d['year']})", d["source"]))
    if given_price:
        parts.append(_("unit price: entered"))
    st.caption(
        _(
            "Power per GPU: {formula}. Site water counts the cooling at the site (The Green "
            "Grid's WUE), not the water of the power plants. Sources: {sources}. Model: "
            "docs/model.md, 'Footprint and cost of ownership'."
        ).format(formula=power_formula(), sources=" · ".join(parts))
    )
