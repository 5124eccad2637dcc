"""Share-link parameters: parse an untrusted query string into checked values, and back.

Pure functions, no streamlit: each page declares its parameters as `Param`s; `parse_params`
keeps what is valid, drops what is not with a warning that names the parameter and the reason,
and `to_query` writes the canonical form back so a link always reproduces the page. The names
(`model`, `hardware`, `batch`, `batches`, `precision`, `efficiency`, ...) are a public contract
documented in the README.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

MAX_VALUE_CHARS = 2000  # a longer value is dropped unread
MAX_PARAMS = 40  # more distinct keys than this: the rest are ignored
MAX_LIST_ITEMS = 4096


class ParamError(ValueError):
    """One parameter's value is not acceptable; the message says why (no user text echoed raw)."""


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")


@dataclass(frozen=True)
class Param:
    """One share-link parameter: its URL name, how to read it, and how to write it back."""

    name: str
    read: Callable[[str], object]
    write: Callable[[object], str] = str
    text_widget: bool = False  # the widget holds the written text (e.g. a batch list)


def choice(options: Sequence[str] | Callable[[], Sequence[str]], *, canon=None):
    """A reader accepting one of `options` (case-insensitive); `canon` maps text -> option."""

    def read(text: str) -> str:
        opts = options() if callable(options) else options
        if canon is not None:
            return canon(text)
        for option in opts:
            if option.lower() == text.strip().lower():
                return option
        raise ParamError(f"{_shown(text)} is not one of {', '.join(opts)}")

    return read


def number(lo: float, hi: float, *, whole: bool = False, lo_open: bool = False):
    """A reader accepting a finite number in [lo, hi] ((lo, hi] with lo_open)."""

    def read(text: str) -> float | int:
        try:
            value = float(text.strip())
        except ValueError:
            raise ParamError(f"{_shown(text)} is not a number") from None
        if not math.isfinite(value):
            raise ParamError(f"{_shown(text)} is not a finite number")
        if whole and value != int(value):
            raise ParamError(f"{_shown(text)} is not a whole number")
        if value < lo or value > hi or (lo_open and value == lo):
            low = f"above {lo:g}" if lo_open else f"at least {lo:g}"
            raise ParamError(f"{value:g} is out of range ({low}, at most {hi:g})")
        return int(value) if whole else value

    return read


def listing(
    item: Callable[[str], object],
    *,
    max_items: int = MAX_LIST_ITEMS,
    min_items: int = 1,
    unique: bool = True,
):
    """A reader of a comma-separated list whose items are read by `item`."""

    def read(text: str) -> list:
        parts = [p for p in (s.strip() for s in text.split(",")) if p]
        if len(parts) > max_items:
            raise ParamError(f"more than {max_items} items")
        values = [item(p) for p in parts]
        if unique:
            values = list(dict.fromkeys(values))
        if len(values) < min_items:
            raise ParamError(f"needs at least {min_items} item(s)")
        return values

    return read


def write_list(values: object) -> str:
    return ",".join(_write_scalar(v) for v in values)


def _write_scalar(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def write_number(value: object) -> str:
    return _write_scalar(value)


def parse_params(
    raw: Mapping[str, Sequence[str]], params: Sequence[Param], ignore: Sequence[str] = ()
) -> tuple[dict[str, object], list[str]]:
    """Read the known parameters of a query string; explain everything that was dropped.

    Args:
        raw: parameter name -> every value given for it (repeated keys keep all values).
        params: the parameters this page understands.
        ignore: names accepted silently (e.g. another page's parameters).

    Returns:
        (values by parameter name for the valid ones, warnings in plain text).
    """
    known = {p.name: p for p in params}
    values: dict[str, object] = {}
    warnings: list[str] = []
    for index, (name, given) in enumerate(raw.items()):
        if index >= MAX_PARAMS:
            warnings.append(f"ignored {len(raw) - MAX_PARAMS} more parameters (limit {MAX_PARAMS})")
            break
        if name not in known:
            if name not in ignore:
                warnings.append(f"ignored unknown parameter {_shown(name)}")
            continue
        texts = [given] if isinstance(given, str) else list(given)
        if len(texts) > 1:
            warnings.append(f"parameter {name!r} was given {len(texts)} times; used the last")
        text = texts[-1] if texts else ""
        if len(text) > MAX_VALUE_CHARS:
            warnings.append(f"ignored {name!r}: value longer than {MAX_VALUE_CHARS} characters")
            continue
        try:
            values[name] = known[name].read(text)
        except ParamError as exc:
            warnings.append(f"ignored {name!r}: {exc}")
        except (ValueError, KeyError) as exc:  # e.g. an unknown catalogue id
            warnings.append(f"ignored {name!r}: {str(exc).strip(chr(39))}")
    return values, warnings


def to_query(values: Mapping[str, object], params: Sequence[Param]) -> dict[str, str]:
    """The canonical query string for `values` (only the page's parameters, in its order)."""
    return {p.name: p.write(values[p.name]) for p in params if values.get(p.name) is not None}
