"""The accelerator catalogue's sub-tables: interconnect, network, price, capacity as stated.

Pure functions from a TOML value to HardwareSpec keyword arguments, with no defaults: an
interconnect is a full table or the explicit word "none" (a single device); a network (the
inter-node link per device, optional) is a full table; a price is a
table whose `usd_per_hour` is a number or "none" (no public list price). Problems raise
HardwareTableError naming the sub-field; engine/catalog/parse.py adds the file and entry. Schema:
data/README.md.
"""

from __future__ import annotations

import math

from engine.catalog.units import UnitError, tidy, to_si

NONE = "none"
MAX_TEXT = 300
LINK_FIELDS = (
    "name",
    "bandwidth",
    "latency",
    "devices_per_node",
    "source",
    "notes",
    "peer_to_peer",
    "switch_reduction",
)
LINK_FLAGS = ("peer_to_peer", "switch_reduction")  # optional booleans, false when absent
PRICE_FIELDS = ("usd_per_hour", "source", "date", "notes")
NETWORK_FIELDS = ("name", "bandwidth", "latency", "source", "notes")
STREAM_FIELDS = ("name", "bandwidth", "source", "notes")
_STREAM_EXAMPLE = (
    'must be a table like { name = "MemoryX", bandwidth = "1.2 TB/s", source = "https://..." } '
    "(weights streamed from external memory when they do not fit in the device's memory)"
)
_LINK_EXAMPLE = (
    'must be "none" (a single device) or a table like { name = "NVLink 4", bandwidth = '
    '"450 GB/s", latency = "2 us", devices_per_node = 8, source = "https://..." }'
)
_NETWORK_EXAMPLE = (
    'must be a table like { name = "InfiniBand NDR", bandwidth = "400 Gbit/s", latency = '
    '"2.7 us", source = "https://..." } (per device, per direction)'
)
_PRICE_EXAMPLE = (
    'must be a table like { usd_per_hour = 2.5, source = "https://...", date = 2025-06-01 }'
    ' (usd_per_hour = "none" when there is no public list price)'
)


class HardwareTableError(ValueError):
    """A problem in a hardware sub-table; `field` is e.g. "interconnect.bandwidth"."""

    def __init__(self, field: str, message: str) -> None:
        self.field, self.message = field, message
        super().__init__(f"{field}: {message}")


def _table(value: object, name: str, known: tuple[str, ...], example: str) -> dict:
    if not isinstance(value, dict):
        raise HardwareTableError(name, example)
    for key in value:
        if key not in known:
            field = f"{name}.{str(key)[:30]}"
            raise HardwareTableError(field, f"unknown field (known: {', '.join(known)})")
    return value


def _text(table: dict, name: str, field: str, required: bool = True) -> str:
    if name not in table:
        if required:
            raise HardwareTableError(f"{field}.{name}", "required field is missing")
        return ""
    value = table[name]
    if hasattr(value, "isoformat"):  # a TOML date
        value = value.isoformat()
    if not isinstance(value, str):
        raise HardwareTableError(f"{field}.{name}", f"must be text, got {type(value).__name__}")
    if len(value) > MAX_TEXT:
        raise HardwareTableError(f"{field}.{name}", f"longer than {MAX_TEXT} characters")
    return value.strip()


def _positive(table: dict, name: str, unit: str, owner: str = "interconnect") -> float:
    field = f"{owner}.{name}"
    if name not in table:
        raise HardwareTableError(field, "required field is missing")
    try:
        value = to_si(table[name], unit, what=name)
    except UnitError as exc:
        raise HardwareTableError(field, str(exc).split(": ", 1)[-1]) from None
    if value <= 0:
        raise HardwareTableError(field, f"must be positive, got {table[name]!r}")
    return value


def interconnect_fields(value: object) -> dict:
    """HardwareSpec's interconnect_* fields and devices_per_node from the `interconnect` value."""
    if value == NONE:
        return dict(
            interconnect_name=NONE,
            interconnect_bandwidth_bytes_per_s=0.0,
            interconnect_latency_s=0.0,
            devices_per_node=1,
            interconnect_source="",
            interconnect_notes="a single device (no device-to-device link)",
        )
    link = _table(value=value, name="interconnect", known=LINK_FIELDS, example=_LINK_EXAMPLE)
    if "devices_per_node" not in link:
        raise HardwareTableError("interconnect.devices_per_node", "required field is missing")
    n = link["devices_per_node"]
    if isinstance(n, bool) or not isinstance(n, int) or not 0 < n <= 100_000:
        message = f"must be a whole number > 0, got {n!r}"
        raise HardwareTableError("interconnect.devices_per_node", message)
    for flag in LINK_FLAGS:
        if not isinstance(link.get(flag, False), bool):
            raise HardwareTableError(f"interconnect.{flag}", "must be true or false")
    return dict(
        interconnect_name=_text(link, "name", "interconnect") or NONE,
        interconnect_bandwidth_bytes_per_s=_positive(link, "bandwidth", "byte/s"),
        interconnect_latency_s=_positive(link, "latency", "s"),
        devices_per_node=n,
        interconnect_source=_text(link, "source", "interconnect"),
        interconnect_notes=_text(link, "notes", "interconnect", required=False),
        interconnect_peer_to_peer=link.get("peer_to_peer", False),
        interconnect_switch_reduction=link.get("switch_reduction", False),
    )


def network_fields(value: object) -> dict:
    """HardwareSpec's network_* fields from the optional `network` table: the inter-node link
    of one device (its share of the node's NICs), per direction, and the latency per hop."""
    net = _table(value=value, name="network", known=NETWORK_FIELDS, example=_NETWORK_EXAMPLE)
    return dict(
        network_name=_text(net, "name", "network"),
        network_bandwidth_bytes_per_s=_positive(
            table=net, name="bandwidth", unit="byte/s", owner="network"
        ),
        network_latency_s=_positive(table=net, name="latency", unit="s", owner="network"),
        network_source=_text(net, "source", "network"),
        network_notes=_text(net, "notes", "network", required=False),
    )


def weight_stream_fields(value: object) -> dict:
    """HardwareSpec's weight_stream_* fields from the optional `weight_streaming` table: where
    a model's weights come from when they exceed the device's own memory (Cerebras' MemoryX
    into the wafer's SRAM), and the injection bandwidth they arrive at."""
    t = _table(value=value, name="weight_streaming", known=STREAM_FIELDS, example=_STREAM_EXAMPLE)
    return dict(
        weight_stream_name=_text(t, "name", "weight_streaming"),
        weight_stream_bandwidth_bytes_per_s=_positive(
            table=t, name="bandwidth", unit="byte/s", owner="weight_streaming"
        ),
        weight_stream_source=_text(t, "source", "weight_streaming"),
        weight_stream_notes=_text(t, "notes", "weight_streaming", required=False),
    )


def price_fields(value: object) -> dict:
    """HardwareSpec's price_* fields from the optional `price` table."""
    price = _table(value=value, name="price", known=PRICE_FIELDS, example=_PRICE_EXAMPLE)
    if "usd_per_hour" not in price:
        raise HardwareTableError("price.usd_per_hour", 'required: a number, or "none"')
    usd = price["usd_per_hour"]
    notes = _text(price, "notes", "price", required=False)
    if usd == NONE:
        source = _text(price, "source", "price", required=False)
        date = _text(price, "date", "price", required=False)
        return dict(
            price_per_hour_usd=None, price_source=source, price_date=date, price_notes=notes
        )
    ok = isinstance(usd, int | float) and not isinstance(usd, bool)
    if not (ok and math.isfinite(usd) and 0 < usd < 1e6):
        message = f'must be a number of USD per accelerator-hour > 0, or "none"; got {usd!r}'
        raise HardwareTableError("price.usd_per_hour", message)
    return dict(
        price_per_hour_usd=float(usd),
        price_source=_text(price, "source", "price"),
        price_date=_text(price, "date", "price"),
        price_notes=notes,
    )


def capacity_text(value: object) -> str:
    """The capacity as the catalogue states it, tidied ("80GiB" -> "80 GiB"); "" for a number."""
    if not isinstance(value, str):
        return ""
    return tidy(value)  # already read once by the caller, so it parses
