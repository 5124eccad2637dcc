"""Catalogue quantities read without pint (engine/catalog/units.py `PLAIN`) are pint's numbers.

A catalogue's "3.35 TB/s" or "80GiB" is read by a table of the spellings catalogues write, so
that a command does not import pint and build its registry (0.25 s of each start); everything
else still goes to pint. These tests hold the table to pint: every spelling's factor and short
form, and the converted value of any number of at most 12 significant digits.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.catalog.units import PLAIN, UnitError, plain, quantity, tidy, to_si
from tests.conftest import ROOT


def by_pint(text: str, unit: str) -> float:
    """What to_si gave before the table: pint's magnitude, rounded to 12 significant digits."""
    return float(f"{float(quantity(text).m_as(unit)):.12g}")


@pytest.mark.parametrize("spelling", sorted(PLAIN))
def test_every_spelling_is_pints_unit_of_its_kind_with_pints_factor(spelling):
    kind, factor = PLAIN[spelling]
    q = quantity(f"1 {spelling}")
    assert q.m_as(kind) == pytest.approx(factor, rel=1e-15)
    assert to_si(f"2.5 {spelling}", kind) == by_pint(f"2.5 {spelling}", kind)
    # a stated capacity is shown as pint writes it ("80GiB" -> "80 GiB", "1 TB/s" -> "1 TB / s")
    assert tidy(f"2.5{spelling}") == f"2.5 {q.units:~}"
    assert kind != "byte" or f"{q.units:~}" == spelling


def test_the_catalogues_spellings_are_in_the_table():
    # hardware.toml and models.toml write these (GB/s 66 times, TFLOP/s 138, us 45, ...)
    for spelling in ("GB", "GB/s", "GFLOP", "Gbit/s", "GiB", "PB/s", "PFLOP/s", "TB/s"):
        assert spelling in PLAIN
    for spelling in ("TFLOP/s", "W", "ms", "us"):
        assert spelling in PLAIN
    assert to_si("3.35 TB/s", "byte/s") == 3.35e12
    assert to_si("80GiB", "byte") == 80 * 2**30  # 85,899,345,920 bytes
    assert to_si("400 Gbit/s", "byte/s") == 50e9  # 400e9 bits / 8
    assert to_si("989.4 TFLOPS", "flop/s") == 989.4e12  # a datasheet spelling, rewritten first
    assert to_si("4.1 GFLOP", "flop") == 4.1e9
    assert to_si("8 us", "s") == 8e-6


DIGITS = st.integers(min_value=0, max_value=10**12 - 1)


@given(
    digits=DIGITS,
    point=st.integers(min_value=0, max_value=12),
    exponent=st.one_of(st.none(), st.integers(min_value=-20, max_value=20)),
    spelling=st.sampled_from(sorted(PLAIN)),
    space=st.sampled_from(["", " ", "  "]),
)
def test_any_number_of_twelve_digits_converts_as_pint_does(
    digits, point, exponent, spelling, space
):
    text = str(digits)
    text = text[: len(text) - point] + "." + text[len(text) - point :] if point else text
    text = (text if not text.startswith(".") else "0" + text) + (
        f"e{exponent}" if exponent is not None else ""
    )
    kind = PLAIN[spelling][0]
    assert plain(f"{text}{space}{spelling}") is not None
    assert to_si(f"{text}{space}{spelling}", kind) == by_pint(f"{text} {spelling}", kind)


@pytest.mark.parametrize(
    "text",
    [
        "1234567890123 GB",  # 13 significant digits: pint's own arithmetic
        "1e300 GB",  # an exponent of three digits
        "-5 W",  # a sign
        "5 GB/s/s",
        "5 terabyte/s",
        "5 Gb/s",  # not a spelling of the table (pint reads b as a barn)
        "٣ GB",  # an Arabic-Indic digit: Python's float reads it, pint does not
        "5\u2003GB",  # an em space
        ". GB",
        "GB",
        "",
    ],
)
def test_other_texts_go_to_pint(text):
    assert plain(text) is None


def test_messages_are_unchanged_for_texts_the_table_does_not_read():
    with pytest.raises(UnitError, match=r"'5 GB' is not in units of byte/s"):
        to_si("5 GB", "byte/s")  # a spelling of another kind: pint says why
    with pytest.raises(UnitError, match=r"unknown unit \(did you mean '5 GB/s'\?\)"):
        to_si("5 GB/z", "byte/s")
    with pytest.raises(UnitError, match="not a finite number"):
        to_si("1e308 TB/s", "byte/s")  # a three-digit exponent: pint's path


def test_reading_the_built_in_catalogue_does_not_import_pint():
    script = (
        "import sys; from engine.catalog.reader import load_catalog; load_catalog(); "
        "print('pint' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
