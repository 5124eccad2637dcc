"""Read a catalogue `[models."X".arch]` table into an Architecture (schema: data/README.md).

Untrusted input (a team's TOML, an upload): unknown keys, wrong types and values outside the
shapes' sane ranges are refused with an ArchTableError naming the field, which the catalogue
loader reports as `models.X.arch.FIELD`.
"""

from __future__ import annotations

import math
import typing
from dataclasses import MISSING, fields

from engine.catalog.arch import Architecture

MAX_SHAPE = 1_000_000_000  # no shape of a real model comes near a billion
_HINTS = typing.get_type_hints(Architecture)
ARCH_FIELDS = tuple(f.name for f in fields(Architecture))
REQUIRED = tuple(f.name for f in fields(Architecture) if f.default is MISSING)


class ArchTableError(ValueError):
    """A bad field in an arch table; `field` is its key ("" for the table itself)."""

    def __init__(self, field: str, message: str) -> None:
        self.field, self.message = field, message
        super().__init__(f"arch.{field}: {message}" if field else f"arch: {message}")


def _value(name: str, value: object) -> object:
    hint = _HINTS[name]
    if hint is bool:
        if not isinstance(value, bool):
            raise ArchTableError(name, f"must be true or false, got {value!r}"[:80])
        return value
    if hint is str:
        if not isinstance(value, str) or len(value) > 20:
            raise ArchTableError(name, f"must be a short text, got {value!r}"[:80])
        return value
    if hint is float:  # extra_params: a count, possibly written 0.87e9
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not (ok and math.isfinite(value) and 0 <= value < 1e15):
            raise ArchTableError(name, f"must be a number from 0 to 1e15, got {value!r}"[:80])
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SHAPE:
        raise ArchTableError(name, f"must be a whole number from 0 to {MAX_SHAPE:,}"[:80])
    return value


def arch_from_table(table: object) -> Architecture:
    """Build an Architecture from a TOML table; ArchTableError names the offending field."""
    if not isinstance(table, dict):
        raise ArchTableError("", "must be a table of shapes, e.g. { layers = 32, ... }")
    for key in table:
        if key not in ARCH_FIELDS:
            raise ArchTableError(str(key)[:40], f"unknown field (known: {', '.join(ARCH_FIELDS)})")
    for key in REQUIRED:
        if key not in table:
            raise ArchTableError(key, "required field is missing")
    values = {key: _value(key, value) for key, value in table.items()}
    try:
        return Architecture(**values)
    except ValueError as exc:
        message = str(exc)
        named = next((k for k in ARCH_FIELDS if message.startswith(k + " ")), "")
        raise ArchTableError(named, message) from None
