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
    weight_stream_fields,
)
from engine.catalog.specs import (
    FP4_PEAK_ALIASES,
    FP4_PEAKS,
    REQUIRED_PEAKS,
    HardwareSpec,
    ModelSpec,
    check_fp4_peak,
    check_precision,
)
from engine.catalog.units import UnitError, to_si

MAX_TEXT = 300  # characters in a name, note or source
FP4_PEAK_KEYS = frozenset((*FP4_PEAKS, *FP4_PEAK_ALIASES))  # `peak` keys read as 4-bit peaks
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
_HW_OPTIONAL = (
    "vendor",
    "aliases",
    "retrieved",
    "notes",
    "price",
    "network",
    "weight_streaming",
)
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
        raise CatalogError(file=origin, entry=entry, field="", message="must be a table of fields")
    if not _ID_RE.match(entry.split(".", 1)[-1]):
        raise CatalogError(
            file=origin,
            entry=entry,
            field="",
            message="id must be 1-64 letters, digits or ._+/- starting with a letter or digit",
        )
    for name in table:
        if name not in required and name not in optional:
            known = ", ".join((*required, *optional))
            raise CatalogError(
                file=origin,
                entry=entry,
                field=str(name)[:40],
                message=f"unknown field (known: {known})",
            )
    for name in required:
        if name not in table:
            raise CatalogError(
                file=origin, entry=entry, field=name, message="required field is missing"
            )
    return table


def _text(table: dict, name: str, entry: str, origin: str, default: str = "") -> str:
    value = table.get(name, default)
    if hasattr(value, "isoformat"):  # a TOML date
        value = value.isoformat()
    if not isinstance(value, str):
        raise CatalogError(
            file=origin,
            entry=entry,
            field=name,
            message=f"must be text, got {type(value).__name__}",
        )
    if len(value) > MAX_TEXT:
        raise CatalogError(
            file=origin, entry=entry, field=name, message=f"longer than {MAX_TEXT} characters"
        )
    return value.strip()


def _quantity(table: dict, name: str, unit: str, entry: str, origin: str, field: str = "") -> float:
    field = field or name  # where the error points, e.g. "peak.fp16" for the fp16 key
    try:
        value = to_si(table[name], unit, what=name)
    except UnitError as exc:
        raise CatalogError(
            file=origin, entry=entry, field=field, message=str(exc).split(": ", 1)[-1]
        ) from None
    if value < 0 or (value == 0 and name != "dispatch_overhead"):
        raise CatalogError(
            file=origin, entry=entry, field=field, message=f"must be positive, got {table[name]!r}"
        )
    return value


def _whole(table: dict, name: str, entry: str, origin: str) -> int | None:
    value = table.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 10**9:
        raise CatalogError(
            file=origin,
            entry=entry,
            field=name,
            message=f"must be a whole number > 0, got {value!r}",
        )
    return value


def _arch(table: dict, entry: str, origin: str):
    """The `arch` sub-table (decoder LLMs' config.json shapes), or None."""
    if "arch" not in table:
        return None
    try:
        return arch_from_table(table["arch"])
    except ArchTableError as exc:
        field = f"arch.{exc.field}" if exc.field else "arch"
        raise CatalogError(file=origin, entry=entry, field=field, message=exc.message) from None


def _shape(table: dict, name: str, entry: str, origin: str, arch) -> int | None:
    """A flat shape field; when absent, the arch table's value (they must agree if both)."""
    value = _whole(table=table, name=name, entry=entry, origin=origin)
    return getattr(arch, name) if value is None and arch is not None else value


def _aliases(table: dict, entry: str, origin: str) -> tuple[str, ...]:
    value = table.get("aliases", [])
    if not isinstance(value, list) or not all(isinstance(a, str) and a for a in value):
        raise CatalogError(
            file=origin, entry=entry, field="aliases", message="must be a list of non-empty strings"
        )
    if len(value) > 20 or any(len(a) > 64 for a in value):
        raise CatalogError(
            file=origin, entry=entry, field="aliases", message="at most 20 aliases of 64 characters"
        )
    return tuple(value)


def _hardware_tables(t: dict, where: str, origin: str) -> dict:
    """The interconnect, network, price and stated-capacity fields (hardware_table.py)."""
    try:
        out = interconnect_fields(t["interconnect"])
        out |= network_fields(t["network"]) if "network" in t else {}
        out |= price_fields(t["price"]) if "price" in t else {}
        if "weight_streaming" in t:
            out |= weight_stream_fields(t["weight_streaming"])
    except HardwareTableError as exc:
        raise CatalogError(file=origin, entry=where, field=exc.field, message=exc.message) from None
    return out | {"memory_capacity_text": capacity_text(t["memory_capacity"])}


def parse_hardware(entry: str, table: object, *, origin: str = "built-in") -> HardwareSpec:
    """Build a HardwareSpec from a catalogue table (see data/README.md)."""
    where = f"hardware.{entry}"
    t = _check_fields(
        table=table, entry=where, origin=origin, required=_HW_REQUIRED, optional=_HW_OPTIONAL
    )
    peaks_in = t["peak"]
    if not isinstance(peaks_in, dict) or not peaks_in:
        raise CatalogError(
            file=origin,
            entry=where,
            field="peak",
            message='must be a table like { fp16 = "312 TFLOP/s" }',
        )
    peaks, fp4_peaks = {}, {}
    for precision in peaks_in:
        key = str(precision).strip().lower()
        try:
            into = fp4_peaks if key in FP4_PEAK_KEYS else peaks
            canonical = check_fp4_peak(key) if into is fp4_peaks else check_precision(precision)
        except ValueError as exc:
            raise CatalogError(
                file=origin, entry=where, field=f"peak.{precision}"[:40], message=str(exc)
            ) from None
        if canonical in into:  # e.g. fp4 and nvfp4 both given (fp4 is nvfp4's other name)
            message = f"peak.{precision} repeats peak.{canonical}"
            raise CatalogError(file=origin, entry=where, field=f"peak.{precision}", message=message)
        field = f"peak.{precision}"[:40]
        into[canonical] = _quantity(
            table=peaks_in, name=precision, unit="flop/s", entry=where, origin=origin, field=field
        )
    for required in REQUIRED_PEAKS:
        if required not in peaks:
            message = f"peak.{required} is required (the datasheet's dense {required} rate)"
            raise CatalogError(file=origin, entry=where, field=f"peak.{required}", message=message)
    try:
        return HardwareSpec(
            id=entry,
            name=_text(table=t, name="name", entry=where, origin=origin) or entry,
            peak_flop_per_s=peaks,
            fp4_peak_flop_per_s=fp4_peaks,
            memory_bandwidth_bytes_per_s=_quantity(
                table=t, name="memory_bandwidth", unit="byte/s", entry=where, origin=origin
            ),
            memory_capacity_bytes=_quantity(
                table=t, name="memory_capacity", unit="byte", entry=where, origin=origin
            ),
            dispatch_overhead_s=_quantity(
                table=t, name="dispatch_overhead", unit="s", entry=where, origin=origin
            ),
            tdp_w=_quantity(table=t, name="tdp", unit="W", entry=where, origin=origin),
            source=_text(table=t, name="source", entry=where, origin=origin),
            **_hardware_tables(t, where, origin),
            vendor=_text(table=t, name="vendor", entry=where, origin=origin),
            retrieved=_text(table=t, name="retrieved", entry=where, origin=origin),
            notes=_text(table=t, name="notes", entry=where, origin=origin),
            aliases=_aliases(t, where, origin),
            origin=origin,
        )
    except CatalogError:
        raise  # already names its field (raised while reading the arguments above)
    except ValueError as exc:
        raise CatalogError(file=origin, entry=where, field="", message=str(exc)) from None


def parse_model(entry: str, table: object, *, origin: str = "built-in") -> ModelSpec:
    """Build a ModelSpec; decoder LLMs without a FLOP figure get 2·P_active per token (mac2)."""
    where = f"models.{entry}"
    t = _check_fields(
        table=table, entry=where, origin=origin, required=_MODEL_REQUIRED, optional=_MODEL_OPTIONAL
    )
    task = _text(table=t, name="task", entry=where, origin=origin, default="other")
    params = _quantity(table=t, name="params", unit="dimensionless", entry=where, origin=origin)
    active = (
        _quantity(table=t, name="active_params", unit="dimensionless", entry=where, origin=origin)
        if "active_params" in t
        else None
    )
    if "flops_per_sample" in t:
        flops = _quantity(table=t, name="flops_per_sample", unit="flop", entry=where, origin=origin)
        convention = _text(table=t, name="flop_convention", entry=where, origin=origin, default="")
        if convention not in ("mac1", "mac2"):
            raise CatalogError(
                file=origin,
                entry=where,
                field="flop_convention",
                message="must be 'mac1' (1 FLOP per MAC) or 'mac2' (2 FLOPs per MAC)",
            )
        sample = _text(table=t, name="sample", entry=where, origin=origin, default="sample")
    elif task == "llm":
        flops, convention = 2.0 * (active or params), "mac2"  # 2·P_active per token (docs/model.md)
        sample = _text(table=t, name="sample", entry=where, origin=origin, default="token")
    else:
        raise CatalogError(
            file=origin,
            entry=where,
            field="flops_per_sample",
            message='required unless task = "llm" (then 2·params per token)',
        )
    arch = _arch(t, where, origin)
    published = (
        _quantity(
            table=t, name="published_params", unit="dimensionless", entry=where, origin=origin
        )
        if "published_params" in t
        else None
    )
    try:
        return ModelSpec(
            id=entry,
            name=_text(table=t, name="name", entry=where, origin=origin) or entry,
            params=params,
            flops_per_sample=flops,
            flop_convention=convention,
            layers=_whole(table=t, name="layers", entry=where, origin=origin),
            source=_text(table=t, name="source", entry=where, origin=origin),
            task=task,
            sample=sample,
            active_params=active,
            hidden=_shape(table=t, name="hidden", entry=where, origin=origin, arch=arch),
            heads=_shape(table=t, name="heads", entry=where, origin=origin, arch=arch),
            kv_heads=_shape(table=t, name="kv_heads", entry=where, origin=origin, arch=arch),
            head_dim=_shape(table=t, name="head_dim", entry=where, origin=origin, arch=arch),
            context_length=_shape(
                table=t, name="context_length", entry=where, origin=origin, arch=arch
            ),
            retrieved=_text(table=t, name="retrieved", entry=where, origin=origin),
            notes=_text(table=t, name="notes", entry=where, origin=origin),
            aliases=_aliases(t, where, origin),
            origin=origin,
            arch=arch,
            published_params=published,
        )
    except CatalogError:
        raise  # already names its field (raised while reading the arguments above)
    except ValueError as exc:
        raise CatalogError(file=origin, entry=where, field="", message=str(exc)) from None
