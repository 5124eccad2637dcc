"""From what a caller names to specs: catalogue ids (case- and punctuation-blind) or spec objects.

Every entry point resolves its model and accelerator here, against the catalogue it is given
or the default one (the built-in files plus ROOFLINE_CATALOG's), so an unknown id is refused
with the same message (listing the closest ids) everywhere.
"""

from __future__ import annotations

import functools
import os

from engine.catalog.reader import ENV_VAR, Catalog, load_catalog
from engine.catalog.specs import HardwareSpec, ModelSpec


@functools.lru_cache(maxsize=8)
def _catalog_for(env_value: str) -> Catalog:
    return load_catalog()


def default_catalog() -> Catalog:
    """The built-in catalogue plus ROOFLINE_CATALOG's files, cached per value of that variable."""
    return _catalog_for(os.environ.get(ENV_VAR, ""))


def resolve_model(model: str | ModelSpec, catalog: Catalog | None = None) -> ModelSpec:
    if isinstance(model, ModelSpec):
        return model
    return (catalog or default_catalog()).find_model(model)


def resolve_hardware(hardware: str | HardwareSpec, catalog: Catalog | None = None) -> HardwareSpec:
    if isinstance(hardware, HardwareSpec):
        return hardware
    return (catalog or default_catalog()).find_hardware(hardware)


def resolve_pair(model, hardware, catalog: Catalog | None = None) -> tuple[ModelSpec, HardwareSpec]:
    """`resolve_model` and `resolve_hardware` at once, remembering what ids resolved to (per
    catalogue object; an unknown id raises, so it is refused with its message every time)."""
    if type(model) is not str or type(hardware) is not str:
        return resolve_model(model, catalog), resolve_hardware(hardware, catalog)
    return _pair(catalog or default_catalog(), model, hardware)


@functools.lru_cache(maxsize=4096)
def _pair(catalog: Catalog, model: str, hardware: str) -> tuple[ModelSpec, HardwareSpec]:
    return catalog.find_model(model), catalog.find_hardware(hardware)
