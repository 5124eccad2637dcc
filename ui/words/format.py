"""The one number formatter of the UI: metrics, tables, hover text, chart labels, explanations.

Values come in SI base units (seconds, bytes, FLOP/s, joules, ...) as the engine keeps them,
and leave as text with an SI prefix chosen for them, three significant figures (four for a
whole number below 10,000, so 1,843 stays 1,843), thousands separators and "—" for a missing
value: `fmt(0.0005426, "s")` -> "543 µs", `fmt(2.06e6, "J")` -> "2.06 MJ",
`fmt(1842.9056, "images/s")` -> "1,843 images/s". Sizes and rates of bytes are decimal
(GB = 1e9 B), binary only when asked (`fmt_bytes(..., binary=True)`), as docs/model.md and
data/README.md state. No pint; numpy only for whole columns (`fmt_all`).

Digits, separators and unit symbols are the same in every language; the words for large
counts and for years are the reader's (ui.words.i18n): `fmt(1.7e6, "USD")` is "1.7 million
USD" in English and "170 万 USD" in Chinese, whose words group by ten thousands (万 = 10⁴,
亿 = 10⁸, 万亿 = 10¹²).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ui.words import i18n
from ui.words.i18n import N_, _

MISSING = "—"
DIGITS = 3  # significant figures; whole numbers below 10,000 keep all their digits (<= 4)
PREFIXES = {-15: "f", -12: "p", -9: "n", -6: "µ", -3: "m", 0: "", 3: "k", 6: "M", 9: "G"}
PREFIXES |= {12: "T", 15: "P", 18: "E"}
# Units that take an SI prefix (the prefix goes in front: "ms", "kB", "TFLOP/s").
PREFIXED = {"s", "B", "B/s", "FLOP", "FLOP/s", "OP/s", "J", "W", "Hz", "B/token"}
# Counts and ratios: no prefix on the unit; from a million up a value gets a word instead, by
# the sizes its language groups digits by: (from, the word's size, the word; shown through _()).
SCALES = {
    "en": ((1e12, 1e12, N_("trillion")), (1e9, 1e9, N_("billion")), (1e6, 1e6, N_("million"))),
    "zh": (  # 万亿, 亿, 万: the catalogue's words for these sizes
        (1e12, 1e12, N_("trillion")),
        (1e8, 1e8, N_("hundred million")),
        (1e6, 1e4, N_("ten thousand")),
    ),
}
YEARS = N_("years")  # durations past 1,000 days
BINARY = ((2**60, "EiB"), (2**50, "PiB"), (2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"))
BINARY += ((2**10, "KiB"),)
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def missing(value: object) -> bool:
    """True for None, NaN, pandas' NA/NaT and anything that is not a real number."""
    if value is None or isinstance(value, bool):
        return value is None
    try:
        number = float(value)  # numpy scalars, Decimal, int, float
    except (TypeError, ValueError):
        return True
    return math.isnan(number)


def _round(value: float, places: int) -> float:
    """Round half to even at `places` decimals, the same float steps as numpy in `fmt_all`."""
    return round(value * 10.0**places) / 10.0**places


def sig(value: float, digits: int = DIGITS) -> str:
    """A plain number with `digits` significant figures (whole numbers < 10,000 kept whole),
    thousands separators and no exponent between 1e-4 and 1e15: 1842.9 -> '1,843'."""
    if missing(value):
        return MISSING
    value = float(value)
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    if not -4 <= exponent < 15:
        mantissa, power = f"{value:.{digits - 1}e}".split("e")  # safe for subnormals too
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}×10{str(int(power)).translate(SUPERSCRIPT)}"
    keep = max(digits, min(exponent + 1, 4))  # 1,843 stays whole; 12,345 -> 12,350
    rounded = _round(value, keep - 1 - exponent)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) > exponent:  # 999.7 -> 1,000
        exponent += 1
        keep = max(digits, min(exponent + 1, 4))
        rounded = _round(value, keep - 1 - exponent)
    decimals = max(0, keep - 1 - exponent)
    text = f"{rounded:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _prefixed(value: float, unit: str, digits: int) -> str:
    """`value` scaled to the SI prefix that puts it in [1, 1000) ('543 µs', '3.35 TB/s')."""
    exponent = 3 * math.floor(math.log10(abs(value)) / 3)
    if not min(PREFIXES) <= exponent <= max(PREFIXES):
        return f"{sig(value, digits)} {unit}"  # beyond f..E: '1×10⁻²⁰ s'
    if abs(_round(value / 10.0**exponent, digits - 3)) >= 1000 and exponent < max(PREFIXES):
        exponent += 3  # 999.96 ms rounds to 1,000 ms: show 1 s instead
    return f"{sig(value / 10.0**exponent, digits)} {PREFIXES[exponent]}{unit}"


def _seconds(value: float, digits: int) -> str:
    """Durations: ns/µs/ms/s below 1,000 s; minutes, hours and days above."""
    for size, name in ((86_400 * 1000, None), (86_400, "d"), (3_600, "h"), (60, "min")):
        if abs(value) >= 1000 and abs(value) >= size:
            if name is None:
                return f"{sig(value / 86_400 / 365.25, digits)} {_(YEARS)}"
            return f"{sig(value / size, digits)} {name}"
    return _prefixed(value, "s", digits)


def _count(value: float, unit: str, digits: int) -> str:
    """Counts and ratios: '1,843 tokens/s', '70.6 billion' ('706 亿'), '0.543 FLOP/B'."""
    for start, size, word in SCALES.get(i18n.language(), SCALES["en"]):
        if abs(value) >= start and abs(value) < 1e15:
            text = f"{sig(value / size, digits)} {_(word)}"
            break
    else:
        text = sig(value, digits)
    return f"{text} {unit}" if unit else text


def fmt(value: object, unit: str = "", *, digits: int = DIGITS) -> str:
    """A number for people, with its unit.

    Args:
        value: the quantity in SI base units (s, B, B/s, FLOP, FLOP/s, J, W), or a count or
            ratio (tokens/s, FLOP/B, ×, samples); None or NaN shows as "—".
        unit: "s", "B", "B/s", "FLOP", "FLOP/s", "J", "W" take an SI prefix; "%" is a
            percentage already (use `pct` for a fraction); any other unit (or "") is a count.
        digits: significant figures (3; whole numbers below 10,000 keep up to 4).

    Returns:
        e.g. "543 µs", "2.06 MJ", "80 GB", "312 TFLOP/s", "1,843 images/s", "—".
    """
    if missing(value):
        return MISSING
    value = float(value)
    if math.isinf(value):
        return f"{sig(value)} {unit}".strip()
    if unit == "%":
        return f"{sig(value, digits)}%"
    if value == 0:
        return f"0 {unit}".strip()
    if unit == "s":
        return _seconds(value, digits)
    if unit in PREFIXED:
        return _prefixed(value, unit, digits)
    return _count(value, unit, digits)


def fmt_scaled(values: Iterable[object], unit: str) -> tuple[list[str], str]:
    """Several values in one prefixed unit, the largest's: ([7.56e12, 148e12], "FLOP/s") ->
    (["7.56", "148"], "TFLOP/s"), for a label that carries the unit ("Achieved / roof (TFLOP/s)").
    """
    values = [None if missing(v) else float(v) for v in values]
    largest = max((abs(v) for v in values if v is not None and v != 0), default=1.0)
    exponent = 3 * math.floor(math.log10(largest) / 3) if unit in PREFIXED else 0
    exponent = min(max(exponent, min(PREFIXES)), max(PREFIXES))
    texts = [MISSING if v is None else sig(v / 10.0**exponent) for v in values]
    return texts, f"{PREFIXES[exponent]}{unit}"


def pct(fraction: object, *, digits: int = DIGITS) -> str:
    """A fraction as a percentage: 0.9491 -> '94.9%'; None -> '—'."""
    return MISSING if missing(fraction) else fmt(float(fraction) * 100, "%", digits=digits)


def fmt_bytes(value: object, binary: bool = False, *, digits: int = DIGITS) -> str:
    """Bytes in decimal units (kB, MB, GB: powers of 1000) or binary ones (KiB, MiB, GiB)."""
    if missing(value) or not binary or float(value) == 0:
        return fmt(value, "B", digits=digits)
    number = float(value)
    for size, name in BINARY:
        if abs(number) >= size:
            return f"{sig(number / size, digits)} {name}"
    return f"{sig(number, digits)} B"


def capacity(spec) -> str:
    """An accelerator's memory capacity as its catalogue states it ("80 GiB", "141 GB")."""
    label = getattr(spec, "capacity_label", None)
    return label if isinstance(label, str) and label else fmt_bytes(spec.memory_capacity_bytes)


def fmt_all(values: Iterable[object], unit: str = "", *, digits: int = DIGITS) -> list[str]:
    """`fmt` over a column (hover text, table cells), the same text as `fmt` per value.

    The common case (finite numbers in a prefixed unit or a count below a million, seconds
    below 1,000 s) takes the exponents, prefixes and decimals with numpy: ~10x faster, which a
    2,000-row sweep table and its hover text need on every rerun."""
    try:
        x = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        return [fmt(v, unit, digits=digits) for v in values]
    mag = np.abs(x)
    easy = np.isfinite(x) & (x != 0)
    low, high = (1e-15, 1000 if unit == "s" else 1e21) if unit in PREFIXED else (1e-4, 1e6)
    easy &= (mag >= low) & (mag < high)
    if unit == "%" or (unit not in PREFIXED and not easy.all()) or digits > 4:
        return _each(x, unit, digits)
    texts = np.empty(len(x), dtype=object)
    texts[~easy] = _each(x[~easy], unit, digits)  # zeros, NaN, extremes
    texts[easy] = _fast(x[easy], unit, digits)
    return texts.tolist()


def _each(x: np.ndarray, unit: str, digits: int) -> list[str]:
    """`fmt` of every value, each distinct one (bit for bit: -0.0 and NaNs apart) formatted
    once: a run's timeline repeats the same few counts thousands of times."""
    distinct, back = np.unique(np.ascontiguousarray(x).view(np.int64), return_inverse=True)
    texts = [fmt(v, unit, digits=digits) for v in distinct.view(np.float64)]
    return [texts[i] for i in back.ravel()]


def _fast(x: np.ndarray, unit: str, digits: int) -> list[str]:
    """`fmt` of finite non-zero values in range, with numpy doing the arithmetic."""
    exponent = np.floor(np.log10(np.abs(x)))
    shift = np.clip(3 * np.floor(exponent / 3), -15, 18) if unit in PREFIXED else exponent * 0
    for _pass in range(2):  # a second pass when rounding reaches the next power (999.7 -> 1,000)
        scaled = x / 10.0**shift
        top = np.floor(np.log10(np.abs(scaled)))
        places = np.maximum(digits, np.minimum(top + 1, 4)) - 1 - top  # < 0: 12,345 -> 12,340
        rounded = np.round(scaled * 10.0**places) / 10.0**places
        grown = np.floor(np.log10(np.abs(rounded))) > top
        if unit in PREFIXED:
            grown &= np.abs(rounded) >= 1000
            shift = np.where(grown & (shift < 18), shift + 3, shift)
        else:  # 9,999.6 -> 10,000: the figures of the next power
            again = np.maximum(digits, np.minimum(top + 2, 4)) - 2 - top
            places = np.where(grown, again, places)
            rounded = np.where(grown, np.round(scaled * 10.0**places) / 10.0**places, rounded)
            break
        if not grown.any():
            break
    suffix = [f" {PREFIXES[int(e)]}{unit}" if unit in PREFIXED else f" {unit}" for e in shift]
    out = []
    decimals = np.maximum(0, places).astype(int).tolist()
    for value, places, tail in zip(rounded.tolist(), decimals, suffix, strict=True):
        text = f"{value:,.{places}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        out.append((text + tail).rstrip())
    return out


def tick_label(value: float) -> str:
    """A log-axis tick read as a number: 1, 10, 100, 1k, 10k, 1M, 0.1, 0.01."""
    if value >= 1000:
        exponent = 3 * math.floor(math.log10(value) / 3)
        exponent = min(exponent, max(PREFIXES))
        return f"{sig(value / 10**exponent)}{PREFIXES[exponent]}"
    return sig(value)


def log_ticks(values: Iterable[float], *, extra: Iterable[float] = ()) -> dict:
    """Plotly log-axis settings with a labelled tick at every decade the data spans.

    Spans under two decades also get 2 and 5 ticks, so a short axis is never unlabelled; on a
    longer one the data's first and last decades get their 2 and 5 ticks within the data when
    the data runs more than a factor 3 past its last decade tick (350 h: 100 and 200), so no
    end of the data is more than a factor 3 from a labelled tick.

    Args:
        values: the data on the axis (non-positive and missing values are ignored).
        extra: more values the axis must cover (e.g. a budget line).

    Returns:
        {"tickvals": [...], "ticktext": [...]}: merge it into a layout axis dict.
    """
    finite = [float(v) for v in (*values, *extra) if not missing(v) and 0 < float(v) < math.inf]
    if not finite:
        return {}
    low, high = min(finite), max(finite)
    lo, hi = math.floor(math.log10(low)), math.ceil(math.log10(high))
    hi = max(hi, lo + 1)
    if hi - lo <= 2:
        ticks = [m * 10.0**e for e in range(lo, hi + 1) for m in (1, 2, 5)]
        ticks = [t for t in ticks if t <= 10.0**hi]
    else:
        ticks = [10.0**e for e in range(lo, hi + 1)]
        top, bottom = 10.0 ** math.floor(math.log10(high)), 10.0**lo
        # one more tick at an end, the one nearest the data's end (two were 0.4 decades
        # apart, '10k' over '20k' on a phone's chart of 1 to 65,536)
        if high > 3 * top:  # e.g. data to 350: 200; to 65,536: 50k
            ticks += [5 * top if 5 * top <= high else 2 * top]
        if bottom < low < 10 * bottom / 3:  # e.g. data from 1.8 (not from 1, a tick): 2
            ticks += [2 * bottom if 2 * bottom >= low else 5 * bottom]
        ticks = sorted(ticks)
    return {"tickvals": ticks, "ticktext": [tick_label(t) for t in ticks]}
