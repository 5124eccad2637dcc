"""Turn one catalogue table (from TOML, a share link or a form) into a validated spec.

Untrusted input: unknown fields, wrong types, unknown units, negative or non-finite values are
all rejected with a CatalogError that names the file, the entry and the field. Unit strings are
read with pint here, once; the specs hold SI floats. Schema: data/README.md.
"""

from __future__ import annotations

import re

from engine.catalog.arch_table import ArchTableError, arch_from_table
from engine.catalog.hardware_table import (
    HardwareTableError,
    capacity_text,
    interconnect_fields,
    network_fields,
    price_fields,
)
from engine.catalog.specs import REQUIRED_PEAKS, HardwareSpec, ModelSpec, check_precision
from engine.catalog.units import UnitError, to_si

MAX_TEXT = 300  # characters in a name, note or source
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._+/-]{0,63}$")

_HW_REQUIRED = (
    "name",
    "memory_bandwidth",
    "memory_capacity",
    "dispatch_overhead",
    "tdp",
    "peak",
    "interconnect",
    "source",
)
_HW_OPTIONAL = ("vendor", "aliases", "retrieved", "notes", "price", "network")
_MODEL_REQUIRED = ("name", "params", "layers", "source")
_MODEL_OPTIONAL = (
    "task",
    "aliases",
    "flops_per_sample",
    "flop_convention",
    "sample",
    "active_params",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
    "context_length",
    "retrieved",
    "notes",
    "arch",
    "published_params",
)


class CatalogError(ValueError):
    """A problem in a catalogue file, located by file, entry and field."""

    def __init__(self, file: str, entry: str, field: str, message: str) -> None:
        self.file, self.entry, self.field, self.message = file, entry, field, message
        where = ": ".join(p for p in (file, ".".join(q for q in (entry, field) if q)) if p)
        super().__init__(f"{where}: {message}" if where else message)


def _check_fields(table: object, entry: str, origin: str, required, optional) -> dict:
    if not isinstance(table, dict):
        raise CatalogError(origin, entry, "", "must be a table of fields")
    if not _ID_RE.match(entry.split(".", 1)[-1]):
        raise CatalogError(
            origin,
            entry,
            "",
            "id must be 1-64 letters, digits or ._+/- starting with a letter or digit",
        )
    for name in table:
        if name not in required and name not in optional:
            known = ", ".join((*required, *optional))
            raise CatalogError(origin, entry, str(name)[:40], f"unknown field (known: {known})")
    for name in required:
        if name not in table:
            raise CatalogError(origin, entry, name, "required field is missing")
    return table


def _text(table: dict, name: str, entry: str, origin: str, default: str = "") -> str:
    value = table.get(name, default)
    if hasattr(value, "isoformat"):  # a TOML date
        value = value.isoformat()
    if not isinstance(value, str):
        raise CatalogError(origin, entry, name, f"must be text, got {type(value).__name__}")
    if len(value) > MAX_TEXT:
        raise CatalogError(origin, entry, name, f"longer than {MAX_TEXT} characters")
    return value.strip()


def _quantity(table: dict, name: str, unit: str, entry: str, origin: str, field: str = "") -> float:
    field = field or name  # where the error points, e.g. "peak.fp16" for the fp16 key
    try:
        value = to_si(table[name], unit, what=name)
    except UnitError as exc:
        raise CatalogError(origin, entry, field, str(exc).split(": ", 1)[-1]) from None
    if value < 0 or (value == 0 and name != "dispatch_overhead"):
        raise CatalogError(origin, entry, field, f"must be positive, got {table[name]!r}")
    return value


def _whole(table: dict, name: str, entry: str, origin: str) -> int | None:
    value = table.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 10**9:
        raise CatalogError(origin, entry, name, f"must be a whole number > 0, got {value!r}")
    return value


def _arch(table: dict, entry: str, origin: str):
    """The `arch` sub-table (decoder LLMs' config.json shapes), or None."""
    if "arch" not in table:
        return None
    try:
        return arch_from_table(table["arch"])
    except ArchTableError as exc:
        field = f"arch.{exc.field}" if exc.field else "arch"
        raise CatalogError(origin, entry, field, exc.message) from None


def _shape(table: dict, name: str, entry: str, origin: str, arch) -> int | None:
    """A flat shape field; when absent, the arch table's value (they must agree if both)."""
    value = _whole(table, name, entry, origin)
    return getattr(arch, name) if value is None and arch is not None else value


def _aliases(table: dict, entry: str, origin: str) -> tuple[str, ...]:
    value = table.get("aliases", [])
    if not isinstance(value, list) or not all(isinstance(a, str) and a for a in value):
        raise CatalogError(origin, entry, "aliases", "must be a list of non-empty strings")
    if len(value) > 20 or any(len(a) > 64 for a in value):
        raise CatalogError(origin, entry, "aliases", "at most 20 aliases of 64 characters")
    return tuple(value)


def _hardware_tables(t: dict, where: str, origin: str) -> dict:
    """The interconnect, network, price and stated-capacity fields (hardware_table.py)."""
    try:
        out = interconnect_fields(t["interconnect"])
        out |= network_fields(t["network"]) if "network" in t else {}
        out |= price_fields(t["price"]) if "price" in t else {}
    except HardwareTableError as exc:
        raise CatalogError(origin, where, exc.field, exc.message) from None
    return out | {"memory_capacity_text": capacity_text(t["memory_capacity"])}


def parse_hardware(entry: str, table: object, *, origin: str = "built-in") -> HardwareSpec:
    """Build a HardwareSpec from a catalogue table (see data/README.md)."""
    where = f"hardware.{entry}"
    t = _check_fields(table, where, origin, _HW_REQUIRED, _HW_OPTIONAL)
    peaks_in = t["peak"]
    if not isinstance(peaks_in, dict) or not peaks_in:
        raise CatalogError(origin, where, "peak", 'must be a table like { fp16 = "312 TFLOP/s" }')
    peaks = {}
    for precision in peaks_in:
        try:
            check_precision(precision)
        except ValueError as exc:
            raise CatalogError(origin, where, f"peak.{precision}"[:40], str(exc)) from None
        field = f"peak.{precision}"[:40]
        peaks[precision] = _quantity(peaks_in, precision, "flop/s", where, origin, field)
    for required in REQUIRED_PEAKS:
        if required not in peaks:
            message = f"peak.{required} is required (the datasheet's dense {required} rate)"
            raise CatalogError(origin, where, f"peak.{required}", message)
    try:
        return HardwareSpec(
            id=entry,
            name=_text(t, "name", where, origin) or entry,
            peak_flop_per_s=peaks,
            memory_bandwidth_bytes_per_s=_quantity(t, "memory_bandwidth", "byte/s", where, origin),
            memory_capacity_bytes=_quantity(t, "memory_capacity", "byte", where, origin),
            dispatch_overhead_s=_quantity(t, "dispatch_overhead", "s", where, origin),
            tdp_w=_quantity(t, "tdp", "W", where, origin),
            source=_text(t, "source", where, origin),
            **_hardware_tables(t, where, origin),
            vendor=_text(t, "vendor", where, origin),
            retrieved=_text(t, "retrieved", where, origin),
            notes=_text(t, "notes", where, origin),
            aliases=_aliases(t, where, origin),
            origin=origin,
        )
    except CatalogError:
        raise  # already names its field (raised while reading the arguments above)
    except ValueError as exc:
        raise CatalogError(origin, where, "", str(exc)) from None


def parse_model(entry: str, table: object, *, origin: str = "built-in") -> ModelSpec:
    """Build a ModelSpec; decoder LLMs without a FLOP figure get 2·P_active per token (mac2)."""
    where = f"models.{entry}"
    t = _check_fields(table, where, origin, _MODEL_REQUIRED, _MODEL_OPTIONAL)
    task = _text(t, "task", where, origin, "other")
    params = _quantity(t, "params", "dimensionless", where, origin)
    active = (
        _quantity(t, "active_params", "dimensionless", where, origin)
        if "active_params" in t
        else None
    )
    if "flops_per_sample" in t:
        flops = _quantity(t, "flops_per_sample", "flop", where, origin)
        convention = _text(t, "flop_convention", where, origin, "")
        if convention not in ("mac1", "mac2"):
            raise CatalogError(
                origin,
                where,
                "flop_convention",
                "must be 'mac1' (1 FLOP per MAC) or 'mac2' (2 FLOPs per MAC)",
            )
        sample = _text(t, "sample", where, origin, "sample")
    elif task == "llm":
        flops, convention = 2.0 * (active or params), "mac2"  # 2·P_active per token (docs/model.md)
        sample = _text(t, "sample", where, origin, "token")
    else:
        raise CatalogError(
            origin,
            where,
            "flops_per_sample",
            'required unless task = "llm" (then 2·params per token)',
        )
    arch = _arch(t, where, origin)
    published = (
        _quantity(t, "published_params", "dimensionless", where, origin)
        if "published_params" in t
        else None
    )
    try:
        return ModelSpec(
            id=entry,
            name=_text(t, "name", where, origin) or entry,
            params=params,
            flops_per_sample=flops,
            flop_convention=convention,
            layers=_whole(t, "layers", where, origin),
            source=_text(t, "source", where, origin),
            task=task,
            sample=sample,
            active_params=active,
            hidden=_shape(t, "hidden", where, origin, arch),
            heads=_shape(t, "heads", where, origin, arch),
            kv_heads=_shape(t, "kv_heads", where, origin, arch),
            head_dim=_shape(t, "head_dim", where, origin, arch),
            context_length=_shape(t, "context_length", where, origin, arch),
            retrieved=_text(t, "retrieved", where, origin),
            notes=_text(t, "notes", where, origin),
            aliases=_aliases(t, where, origin),
            origin=origin,
            arch=arch,
            published_params=published,
        )
    except CatalogError:
        raise  # already names its field (raised while reading the arguments above)
    except ValueError as exc:
        raise CatalogError(origin, where, "", str(exc)) from None
