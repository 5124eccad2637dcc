"""The one argument check of every entry point: whole numbers in range, lists of them.

`solve`, `sweep`, `decode`, `serve`, `serve_sweep`, `operators` and the load and training
models check their counts here, so one bad value gets one message everywhere ("batch_size:
expected a whole number from 1 to 1,000,000, got 0"), before any arithmetic. The limits bound
the work a request can cause; none of them is physical.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

MAX_BATCH = 1_000_000  # sequences or samples per batch
MAX_TOKENS = 10_000_000  # tokens per sequence: the longest published context (Llama 4 Scout)
MAX_DEGREE = 1024  # a parallel degree (tp, pp, ...)
MAX_SEQUENCE = 2 * MAX_TOKENS  # tokens a request reaches: input and output, each up to MAX_TOKENS


def _message(name: str, low: int, high: int, got: object) -> str:
    return f"{name}: expected a whole number from {low:,} to {high:,}, got {got!r}"[:200]


def check_whole_numbers(values: object, name: str, *, high: int, low: int = 1) -> np.ndarray:
    """Every value a whole number from `low` to `high`, as float64 (one value or a sequence).

    Accepts Python and numpy integers and whole floats (4, np.int64(4), 4.0); refuses booleans,
    text, None, fractions, NaN/inf and out-of-range values with a ValueError naming `name`, the
    range and the first bad value.
    """
    try:
        raw = np.asarray(values)
    except (ValueError, TypeError, OverflowError):  # ragged or unconvertible input
        raw = np.asarray([None], dtype=object)
    if raw.dtype.kind not in "iuf":  # rejects text, None, booleans, mixtures and huge ints
        raise ValueError(_message(name=name, low=low, high=high, got=values))
    x = raw.astype(float).ravel()
    if x.size == 0:
        raise ValueError(f"{name}: give at least one")
    bad = ~np.isfinite(x) | (x != np.round(x)) | (x < low) | (x > high)
    if bad.any():
        raise ValueError(
            _message(name=name, low=low, high=high, got=raw.ravel()[int(np.argmax(bad))].item())
        )
    return x


def check_whole(value: object, name: str, *, high: int, low: int = 1) -> int:
    """One whole number from `low` to `high` as an int (`check_whole_numbers` for one value)."""
    if type(value) is int and low <= value <= high:  # the common case, without numpy
        return value
    try:
        scalar = np.ndim(value) == 0
    except ValueError:  # a ragged nest of lists
        scalar = False
    if not scalar:
        raise ValueError(_message(name=name, low=low, high=high, got=value))
    return int(check_whole_numbers(value, name, high=high, low=low)[0])


def as_list(value: object, name: str) -> list:
    """One value or an iterable of them, as a non-empty list (ValueError when empty)."""
    single = isinstance(value, str | bytes) or not isinstance(value, Iterable)
    items = [value] if single else list(value)
    if not items:
        raise ValueError(f"{name}: give at least one")
    return items
