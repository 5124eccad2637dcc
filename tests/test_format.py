"""ui.words.format: known answers (the arithmetic in comments) and hypothesis properties: never more
than 4 significant figures, never "None"/"nan", and the text reads back within 0.5 %."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ui.words import i18n
from ui.words.format import (
    MISSING,
    capacity,
    fmt,
    fmt_all,
    fmt_bytes,
    fmt_scaled,
    log_ticks,
    pct,
    sig,
    tick_label,
)

PREFIX = {"f": 1e-15, "p": 1e-12, "n": 1e-9, "µ": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6}
PREFIX |= {"G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
WORD = {"million": 1e6, "billion": 1e9, "trillion": 1e12, "万": 1e4, "亿": 1e8, "万亿": 1e12}
TIME = {"min": 60.0, "h": 3600.0, "d": 86_400.0, "years": 86_400 * 365.25, "年": 86_400 * 365.25}
BINARY = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50, "EiB": 2**60}
SUP = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
NUMBER = re.compile(r"^(-?[\d,]+(?:\.\d+)?)(?:×10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?(?: (.*)|%)?$")


def parse(text: str, unit: str) -> float:
    """Read `fmt`'s text back into SI (the inverse the property tests check against)."""
    mantissa, exponent, rest = NUMBER.match(text).groups()
    value = float(mantissa.replace(",", ""))
    if exponent:
        value *= 10.0 ** int(exponent.translate(SUP))
    rest = rest or ""
    if rest in TIME:
        return value * TIME[rest]
    if rest in BINARY:
        return value * BINARY[rest]
    word = rest.split(" ")[0]
    if word in WORD:
        return value * WORD[word]
    if unit and rest.endswith(unit) and rest != unit:
        return value * PREFIX[rest[: -len(unit)]]
    return value


def significant(text: str) -> int:
    """Significant figures shown: digits without leading zeros (and a whole number's trailing
    zeros, which only hold the place)."""
    digits = NUMBER.match(text).group(1).replace(",", "").lstrip("-")
    if "." in digits:
        return len(digits.replace(".", "").lstrip("0"))
    return len(digits.strip("0")) or 1


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (0.0005426, "s", "543 µs"),  # 0.5426 ms = 542.6 µs -> 3 figures
        (198.972579, "s", "199 s"),
        (2.06e6, "J", "2.06 MJ"),
        (1842.9056, "images/s", "1,843 images/s"),  # whole number < 10,000: all 4 digits
        (80e9, "B", "80 GB"),
        (3.35e12, "B/s", "3.35 TB/s"),
        (312e12, "FLOP/s", "312 TFLOP/s"),
        (0.99996, "s", "1 s"),  # 999.96 ms rounds to 1,000 ms: the next prefix up
        (7200.0, "s", "2 h"),  # 7,200 s / 3,600 s per hour
        (70.6e9, "", "70.6 billion"),
        (72.8, "FLOP/B", "72.8 FLOP/B"),
        (94.91, "%", "94.9%"),
        (1e-20, "s", "1×10⁻²⁰ s"),  # beyond the prefixes: scientific, still 1 figure
        (0, "s", "0 s"),
        (None, "s", MISSING),
        (float("nan"), "B", MISSING),
    ],
)
def test_known_answers(value, unit, shown):
    assert fmt(value, unit) == shown


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (1e12, "", "1 万亿"),  # 10¹² = 1 万亿 (ten thousand × hundred million)
        (1.7e6, "USD", "170 万 USD"),  # 1,700,000 = 170 × 10⁴
        (70.6e9, "", "706 亿"),  # 70,600,000,000 = 706 × 10⁸
        (99_990_000, "tokens", "9,999 万 tokens"),  # below 10⁸: still 万, four digits kept
        (123_456, "tokens", "123,500 tokens"),  # below a million: digits, as in English
        (86_400 * 365.25 * 3, "s", "3 年"),  # 3 years
        (0.0005426, "s", "543 µs"),  # units and digits: the same as in English
    ],
)
def test_large_counts_in_chinese_use_its_words(monkeypatch, value, unit, shown):
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    assert fmt(value, unit) == shown
    assert fmt_all([value], unit) == [shown]


def test_pct_bytes_and_capacity():
    assert pct(0.9491) == "94.9%"  # 0.9491 x 100
    assert pct(None) == MISSING
    assert fmt_bytes(80 * 2**30, binary=True) == "80 GiB"
    assert fmt_bytes(80 * 2**30) == "85.9 GB"  # 85,899,345,920 B / 1e9
    assert fmt_bytes(16.06e9) == "16.1 GB"

    class Spec:
        memory_capacity_bytes = 141e9
        capacity_label = "141 GB"

    assert capacity(Spec()) == "141 GB"
    Spec.capacity_label = ""
    assert capacity(Spec()) == "141 GB"  # falls back to decimal GB


def test_scaled_values_share_the_largest_ones_prefix():
    assert fmt_scaled([7.556e12, 148.4e12], "FLOP/s") == (["7.56", "148"], "TFLOP/s")
    assert fmt_scaled([0.5e-3, 12e-3, None], "s") == (["0.5", "12", MISSING], "ms")
    assert fmt_scaled([1842.9], "images/s") == (["1,843"], "images/s")  # counts: no prefix


def test_log_ticks_read_as_numbers():
    ticks = log_ticks([0.3, 2000])  # decades 0.1 .. 10,000, and 0.5: 0.3 is > 3x below 1
    assert ticks["ticktext"] == ["0.1", "0.5", "1", "10", "100", "1k", "10k"]
    # hours lost, 1.8 .. 350 (lesson 6): 200 is labelled above 100 (350 > 3 x 100), 2 below
    # 10 (1.8 < 10 / 3); one tick more at each end, the nearer to it
    assert log_ticks([1.8, 350])["ticktext"] == ["1", "2", "10", "100", "200", "1k"]
    # batches 1 .. 65,536 (lesson 10): 50k, not 20k too, whose label sat on 10k's at 390 px
    assert log_ticks([1, 65536])["ticktext"] == ["1", "10", "100", "1k", "10k", "50k", "100k"]
    # from 50 to 2,000 the decade ticks do: 100 < 3 x 50 and 2,000 < 3 x 1k
    assert log_ticks([50, 2000])["ticktext"] == ["10", "100", "1k", "10k"]
    short = log_ticks([3, 40])  # under two decades: 1-2-5 steps, all labelled
    assert short["ticktext"] == ["1", "2", "5", "10", "20", "50", "100"]
    assert [tick_label(v) for v in (1e6, 2e9, 0.01)] == ["1M", "2G", "0.01"]
    assert log_ticks([None, float("nan"), -1]) == {}


@given(low=st.floats(1e-3, 1e3), decades=st.floats(2.01, 9.0))
def test_log_ticks_label_each_end_within_a_factor_3_and_add_one_tick_at_most(low, decades):
    high = low * 10**decades
    ticks = log_ticks([low, high])["tickvals"]
    for end in (low, high):
        assert min(max(end / t, t / end) for t in ticks) <= 3 * (1 + 1e-9), (end, ticks)
    off_decade = [t for t in ticks if abs(math.log10(t) - round(math.log10(t))) > 1e-9]
    assert len(off_decade) <= 2  # one at each end at most: no two crowd each other


units = st.sampled_from(["s", "B", "B/s", "FLOP/s", "J", "W", "tokens/s", "FLOP/B", "", "%"])
finite = st.floats(allow_nan=False, allow_infinity=False)  # subnormals and 1e308 included


@given(value=finite, unit=units)
def test_at_most_four_significant_figures_and_no_none(value, unit):
    text = fmt(value, unit)
    assert "None" not in text and "nan" not in text.lower() and "e+" not in text
    assert significant(text) <= 4, text


@given(value=st.floats(min_value=-1e300, max_value=1e300), unit=units)  # parse can't overflow
def test_round_trip_within_half_a_percent(value, unit):
    # 3 significant figures: the worst rounding is 0.005 on a mantissa of 1.005 (< 0.5 %)
    back = parse(fmt(value, unit), unit)
    assert math.isclose(back, value, rel_tol=0.005, abs_tol=1e-300), (value, fmt(value, unit))


@given(value=st.floats(min_value=-1e300, max_value=1e300), unit=units)
def test_chinese_text_reads_back_within_half_a_percent(value, unit):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(i18n, "language", lambda: "zh")
        text = fmt(value, unit)
        assert fmt_all([value], unit) == [text]
    assert math.isclose(parse(text, unit), value, rel_tol=0.005, abs_tol=1e-300), (value, text)


@given(value=st.floats(min_value=1, max_value=1e21))
def test_binary_bytes_round_trip(value):
    back = parse(fmt_bytes(value, binary=True), "B")
    assert math.isclose(back, value, rel_tol=0.005)


@given(value=st.one_of(st.none(), st.just(float("nan")), finite))
def test_sig_never_prints_none_or_nan(value):
    text = sig(value)
    assert text == MISSING if value is None or math.isnan(value) else "nan" not in text


@given(
    values=st.lists(st.one_of(finite, st.none(), st.just(float("nan"))), max_size=30),
    unit=units,
)
def test_fmt_all_is_fmt_on_every_value(values, unit):
    # the numpy fast path of a column must print exactly what fmt prints for each value
    assert fmt_all(values, unit) == [fmt(v, unit) for v in values]


@given(values=st.lists(st.one_of(finite, st.just(float("nan"))), max_size=20), unit=units)
def test_fmt_all_formats_repeats_and_signed_zeros_as_fmt(values, unit):
    # each distinct value is formatted once and its text reused (bit for bit: -0.0 apart)
    column = values * 3 + [0.0, -0.0, float("nan"), -0.0, 5.0, 5.0]
    assert fmt_all(column, unit) == [fmt(v, unit) for v in column]
    assert fmt_all(column, "%") == [fmt(v, "%") for v in column]
