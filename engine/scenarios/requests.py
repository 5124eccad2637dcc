"""The requests a static or grid model is evaluated at, and how a rate search runs.

`Batch`: one static batch (`serve`): B sequences of I input and O output tokens. `BatchGrid`: every
batch size × input × output (`serve_sweep`). `Traffic`: the request shapes a deployment grid is
judged at (`load_grid`: open-loop rates; `load_plan`: a target rate), with the gaps' burstiness.
`RateSearch`: how `max_rate` bisects (its tolerance), confirms its answer on longer runs and the
target traffic it plans replicas for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from engine.checks import MAX_BATCH, MAX_TOKENS, as_list, check_whole, check_whole_numbers
from engine.scenarios.bind import Fields
from engine.scenarios.prefix import KEYWORDS as PREFIX_KEYWORDS
from engine.scenarios.prefix import Prefix, prefix_of
from engine.scenarios.workload import MAX_RATE, MAX_REQUESTS, check_burstiness

CONFIRM_SEEDS = 3  # a max rate is confirmed on this many seeds ...
CONFIRM_FACTOR = 6  # ... of runs this many times longer than the search's (6,000 requests)
MAX_CONFIRM_SEEDS = 10


def whole_axis(values: object, name: str, high: int) -> tuple[int, ...]:
    """One whole number or several, checked, as a tuple of ints."""
    checked = check_whole_numbers(as_list(values, name), name, high=high)
    return tuple(int(x) for x in checked)


def check_target(value: object) -> float | None:
    """Requests/s to plan for: above 0, at most MAX_RATE (None: no plan)."""
    if value is None:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not (ok and np.isfinite(value) and 0 < value <= MAX_RATE):
        message = f"target_rate: expected requests/s above 0 (at most {MAX_RATE:g}), got {value!r}"
        raise ValueError(message[:200])
    return float(value)


def check_rates(values: object) -> tuple[float, ...]:
    """Open-loop rates: numbers of requests/s above 0, at most MAX_RATE."""
    rates = as_list(values, "rates")
    for r in rates:
        ok = isinstance(r, int | float | np.number) and not isinstance(r, bool | np.bool_)
        if not (ok and np.isfinite(r) and 0 < r <= MAX_RATE):
            raise ValueError(
                f"rates: expected numbers of requests/s above 0 (at most {MAX_RATE:g})"
            )
    return tuple(float(r) for r in rates)


@dataclass(frozen=True, slots=True)
class Batch(Fields):
    """A static batch: `batch_size` sequences of `input_tokens` and `output_tokens` each."""

    input_tokens: int
    output_tokens: int
    batch_size: int = 1

    ARG: ClassVar[str] = "batch"

    def __post_init__(self) -> None:
        b = check_whole(self.batch_size, "batch_size", high=MAX_BATCH)
        object.__setattr__(self, "batch_size", b)
        i = check_whole(self.input_tokens, "input_tokens", high=MAX_TOKENS)
        object.__setattr__(self, "input_tokens", i)
        o = check_whole(self.output_tokens, "output_tokens", high=MAX_TOKENS)
        object.__setattr__(self, "output_tokens", o)


@dataclass(frozen=True, slots=True)
class BatchGrid(Fields):
    """Every batch size × input tokens × output tokens (each one value or several)."""

    input_tokens: tuple[int, ...]
    output_tokens: tuple[int, ...]
    batch_sizes: tuple[int, ...] = (1,)

    ARG: ClassVar[str] = "batches"

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "batch_sizes", whole_axis(self.batch_sizes, "batch_sizes", MAX_BATCH)
        )
        object.__setattr__(
            self, "input_tokens", whole_axis(self.input_tokens, "input_tokens", MAX_TOKENS)
        )
        object.__setattr__(
            self, "output_tokens", whole_axis(self.output_tokens, "output_tokens", MAX_TOKENS)
        )


@dataclass(frozen=True, slots=True)
class Traffic(Fields):
    """Request shapes (input × output tokens, each one or several) arriving open-loop with
    gamma gaps of shape `burstiness`, at each of `rates` (`load_grid`) or planned for a
    `target_rate` (`load_plan`)."""

    input_tokens: tuple[int, ...]
    output_tokens: tuple[int, ...]
    rates: tuple[float, ...] | None = None
    target_rate: float | None = None
    burstiness: float = 1.0
    prefix: Prefix | None = None  # a shared prompt prefix (load_grid; engine/scenarios/prefix.py)

    ARG: ClassVar[str] = "traffic"
    EXTRA: ClassVar[tuple[str, ...]] = PREFIX_KEYWORDS

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "input_tokens", whole_axis(self.input_tokens, "input_tokens", MAX_TOKENS)
        )
        object.__setattr__(
            self, "output_tokens", whole_axis(self.output_tokens, "output_tokens", MAX_TOKENS)
        )
        if self.rates is not None:
            object.__setattr__(self, "rates", check_rates(self.rates))
        object.__setattr__(self, "target_rate", check_target(self.target_rate))
        object.__setattr__(self, "burstiness", check_burstiness(self.burstiness))
        if self.prefix is not None and not isinstance(self.prefix, Prefix):
            raise ValueError(f"prefix: expected a Prefix, got {type(self.prefix).__name__}")

    @classmethod
    def from_fields(cls, base, values: dict):
        """The keyword form; `prefix_tokens` and `prefix_share` name the prefix."""
        if not values.keys().isdisjoint(PREFIX_KEYWORDS):
            values = dict(values)
            values["prefix"] = prefix_of(values)
        return super(Traffic, cls).from_fields(base, values)


@dataclass(frozen=True, slots=True)
class RateSearch(Fields):
    """`max_rate`'s search: bisect until the bracket is within `tolerance` of its top, then
    confirm the answer on `confirm_seeds` longer runs of `confirm_requests` requests each
    (None: CONFIRM_FACTOR times the search's runs; `confirm_seeds` 0: no confirmation); plan
    replicas and the cost per 1M output tokens for `target_rate` requests/s (None: no plan)."""

    tolerance: float = 0.02
    target_rate: float | None = None
    confirm_seeds: int = CONFIRM_SEEDS
    confirm_requests: int | None = None

    ARG: ClassVar[str] = "search"

    def __post_init__(self) -> None:
        ok = isinstance(self.tolerance, int | float) and not isinstance(self.tolerance, bool)
        if not (ok and 0.001 <= self.tolerance <= 0.5):
            raise ValueError(
                f"tolerance: expected a fraction from 0.001 to 0.5, got {self.tolerance!r}"
            )
        object.__setattr__(self, "target_rate", check_target(self.target_rate))
        seeds = check_whole(self.confirm_seeds, "confirm_seeds", high=MAX_CONFIRM_SEEDS, low=0)
        object.__setattr__(self, "confirm_seeds", seeds)
        if self.confirm_requests is not None:
            n = check_whole(self.confirm_requests, "confirm_requests", high=MAX_REQUESTS, low=1)
            object.__setattr__(self, "confirm_requests", n)

    def confirm_count(self, search_requests: int) -> int:
        """Requests in each confirmation run of a search whose runs have `search_requests`."""
        if self.confirm_requests is not None:
            return self.confirm_requests
        return min(CONFIRM_FACTOR * search_requests, MAX_REQUESTS)
