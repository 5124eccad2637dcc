"""The catalogue page's share link: each parameter declared once (ui.links.params.Link).

q (the search text), task and vendor (comma lists), custom_hw and custom_model.
"""

from __future__ import annotations

import engine
from ui.catalogue.frames import vendor_of
from ui.catalogue.search import search_text
from ui.links import link_params as lp
from ui.links.params import Link, Param, choice, listing, write_list

PAGE = "catalogue"


def vendors(cat: engine.Catalog) -> list[str]:
    """The vendor filter's options: every vendor in the catalogue, and Custom."""
    return sorted({vendor_of(h) for h in cat.hardware.values()} | {"Custom"})


def declare(cat: engine.Catalog) -> Link:
    """Every link parameter of the page."""
    return Link(
        PAGE,
        [
            Param("q", search_text, default=""),
            Param("task", listing(choice(engine.TASKS)), write_list),
            Param("vendor", listing(choice(vendors(cat)), max_items=50), write_list),
            *lp.custom_specs(),
        ],
    )
