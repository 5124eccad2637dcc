"""The single pint registry of Roofline Explorer, used only at the edges.

Catalogue strings ("2.039 TB/s", "80 GiB", "312 TFLOP/s") are parsed once at load time into SI
floats; the solve and the sweeps never build a Quantity. `flop` is its own dimension, so a
FLOP/s figure can never be mistaken for a byte/s one (pint raises DimensionalityError).
Conventions: GB = 1e9 bytes, GiB = 2**30 bytes, all rates decimal (see data/README.md).
"""

from __future__ import annotations

import functools
import math
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pint loads on first use (with its registry, ~1 s), not on `import engine`
    import pint


@functools.cache
def registry() -> pint.UnitRegistry:
    """The one registry, built on first use, so `import engine` stays fast."""
    import pint

    ureg = pint.UnitRegistry()
    ureg.define("flop = [compute] = FLOP")
    return ureg


def quantity(value, unit: str | None = None) -> pint.Quantity:
    """A pint Quantity from text ("3.35 TB/s") or from a magnitude and a unit."""
    return registry().Quantity(value) if unit is None else registry().Quantity(value, unit)


_POWER = re.compile(r"\*\*|\^|[⁰¹²³⁴⁵⁶⁷⁸⁹]")  # exponentiation, incl. pint's "m²" form


# The spellings catalogues write, each with its unit of the SI kind and the factor to it, so that
# a catalogue is read without pint (importing it and building its registry took 0.25 s of the
# 0.4 s a command spent reading the built-in catalogue; a quantity written otherwise goes to
# pint). Exact factors only (powers of ten and of two; a bit is an eighth of a byte), so that a
# number of 12 significant digits or fewer converts to what pint gives: tests/test_units.py checks
# every spelling against pint.
_DECIMAL = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}
PLAIN = (
    {f"{p}B": ("byte", f) for p, f in (_DECIMAL | _BINARY).items()}
    | {f"{p}B/s": ("byte/s", f) for p, f in (_DECIMAL | _BINARY).items()}
    | {f"{p}bit/s": ("byte/s", f / 8.0) for p, f in _DECIMAL.items()}
    | {f"{p}FLOP": ("flop", f) for p, f in _DECIMAL.items()}
    | {f"{p}FLOP/s": ("flop/s", f) for p, f in _DECIMAL.items()}
    | {"W": ("W", 1.0), "kW": ("W", 1e3), "MW": ("W", 1e6)}
    | {"s": ("s", 1.0), "ms": ("s", 1e-3), "us": ("s", 1e-6), "µs": ("s", 1e-6), "ns": ("s", 1e-9)}
)
# an unsigned decimal (ASCII digits) with at most a two-digit exponent, then a spelling
_PLAIN = re.compile(r"(\d*\.?\d*)(?:[eE]([-+]?\d{1,2}))?\s*(\S+)", re.ASCII)


def plain(text: str) -> tuple[float, str] | None:
    """(80.0, "GiB") from "80GiB" or "80 GiB": the number and its spelling, when the number has
    at most 12 significant digits and the spelling is in PLAIN; None for anything else."""
    match = _PLAIN.fullmatch(text.strip())
    if match is None or match[3] not in PLAIN:
        return None
    mantissa, exponent = match[1], match[2] or "0"
    digits = mantissa.replace(".", "").lstrip("0")
    if not any(c.isdigit() for c in mantissa) or len(digits.rstrip("0")) > 12:
        return None
    return float(f"{mantissa}e{exponent}"), match[3]


def tidy(text: str) -> str:
    """A quantity as written, tidied: "80GiB" -> "80 GiB" (pint's short unit form, which is the
    spelling itself for PLAIN's byte counts)."""
    read = plain(text)
    if read is not None and PLAIN[read[1]][0] == "byte":
        return f"{read[0]:g} {read[1]}"
    q = quantity(text.strip())
    return f"{q.magnitude:g} {q.units:~}"


class UnitError(ValueError):
    """A unit-bearing string that cannot be read as the quantity asked for."""


# Datasheet spellings pint does not know: "TFLOPS"/"TOPS" (per second) and "TBps" (bytes/s);
# "GFLOPs" is a rate where a rate is asked for, else a count.
_FLOPS = re.compile(r"(?<![A-Za-z])([kKMGTPE]?)(?:FLOPS|FLOPs|OPS)(?![A-Za-z/])")
_BPS = re.compile(r"(?<![A-Za-z])([kKMGTPE]i?B)ps(?![A-Za-z/])")
SPELLINGS = {  # what the suggestion of an unknown unit picks from, per target unit
    "byte/s": ("TB/s", "GB/s", "TBps", "GBps", "TiB/s", "GiB/s", "MB/s"),
    "byte": ("GB", "GiB", "TB", "TiB", "MB", "MiB"),
    "flop/s": ("TFLOP/s", "TFLOPS", "TOPS", "PFLOP/s", "PFLOPS", "GFLOP/s", "GFLOPS"),
    "flop": ("GFLOP", "TFLOP", "MFLOP", "PFLOP"),
    "s": ("ms", "us", "µs", "ns", "s"),
    "W": ("W", "kW"),
}


def datasheet_spelling(text: str, unit: str = "flop/s") -> str:
    """'3.2 TBps' -> '3.2 TB/s', '400 TFLOPS' / '400 TOPS' -> '400 TFLOP/s'; others unchanged."""
    text = _BPS.sub(r"\1/s", text)
    return _FLOPS.sub(r"\1FLOP/s" if unit == "flop/s" else r"\1FLOP", text)


def _suggestion(text: str, unit: str) -> str:
    """' (did you mean '3.2 TB/s'?)' for a near-miss unit spelling, else a list of spellings."""
    import difflib

    number, unit_text = re.match(r"\s*([-+0-9.eE]*)\s*(.*)", text).groups()
    known, typed = SPELLINGS.get(unit, (unit,)), unit_text.strip()
    score = [  # a spelling that differs only in letter case wins ("GIB" -> "GiB")
        2.0 if typed.lower() == k.lower() else difflib.SequenceMatcher(None, typed, k).ratio()
        for k in known
    ]
    best = max(range(len(known)), key=lambda i: (score[i], -i))  # ties: the first spelling
    if score[best] < 0.5:
        return f"; write e.g. {', '.join(known)}"
    return f" (did you mean {f'{number} {known[best]}'.strip()!r}?)"


def to_si(text: str | float | int, unit: str, *, what: str = "value") -> float:
    """Parse a unit-bearing string into a float in `unit`.

    Args:
        text: e.g. "3.35 TB/s"; a bare number is taken to be in `unit` already.
        unit: the target unit, e.g. "byte/s".
        what: the field's name, used in the error message.

    Returns:
        The magnitude in `unit`, rounded to 12 significant digits (so "4.1 GFLOP" is 4.1e9,
        not 4099999999.9999995).

    Raises:
        UnitError: the text is not a number with units of the right dimension, or not finite.
    """
    if isinstance(text, bool):
        raise UnitError(f"{what}: expected a quantity in {unit}, got {text!r}")
    if isinstance(text, int | float):
        try:
            value = float(text)
        except OverflowError:  # an int beyond float range, e.g. 10**400 from a TOML file
            raise UnitError(f"{what}: the number is beyond floating-point range") from None
    elif isinstance(text, str):
        if len(text) > 100:
            raise UnitError(f"{what}: text longer than 100 characters")
        if _POWER.search(text):  # pint evaluates 9**9**9 exactly: minutes of CPU per request
            raise UnitError(f"{what}: powers (**, ^) are not accepted; write e.g. 1.5e12")
        value = _read(text, unit, what)
    else:
        raise UnitError(f"{what}: expected a quantity in {unit}, got {type(text).__name__}")
    if not math.isfinite(value):
        raise UnitError(f"{what}: {text!r} is not a finite number")
    return float(f"{value:.12g}")


def _read(text: str, unit: str, what: str) -> float:
    """The magnitude in `unit` of a quantity's text: a PLAIN spelling of that kind directly,
    anything else through pint."""
    spelled = datasheet_spelling(text.strip(), unit)
    read = plain(spelled)
    if read is not None and PLAIN[read[1]][0] == unit:
        return read[0] * PLAIN[read[1]][1]
    import pint

    try:
        return float(quantity(spelled).m_as(unit))
    except pint.DimensionalityError:
        raise UnitError(f"{what}: {text!r} is not in units of {unit}") from None
    except (pint.UndefinedUnitError, pint.errors.DefinitionSyntaxError):
        hint = _suggestion(text, unit)
        raise UnitError(f"{what}: {text!r} has an unknown unit{hint}") from None
    except (ValueError, TypeError, SyntaxError, AttributeError, ArithmeticError, KeyError):
        raise UnitError(f"{what}: cannot read {text!r} as a quantity in {unit}") from None


def fmt(value: float, unit: str, target: str, digits: int = 3) -> str:
    """Format an SI float in a display unit: fmt(3.35e12, "byte/s", "TB/s") -> "3.35 TB/s"."""
    magnitude = quantity(value, unit).m_as(target)
    return f"{magnitude:.{digits}g} {target}"
