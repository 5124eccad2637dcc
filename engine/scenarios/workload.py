"""A workload: the requests a server sees, how they arrive and how long they are.

Arrivals (how benchmark clients drive a server):

- `OpenLoop(rate_per_s, burstiness)`: requests arrive on their own schedule (MIN_RATE to
  MAX_RATE per second), independent of the server: Poisson (exponential gaps), or gamma gaps
  with vLLM benchmark_serving's `--burstiness` b (shape b, scale 1/(rate·b): b = 1 is Poisson,
  b < 1 burstier; coefficient of variation 1/√b),
  https://github.com/vllm-project/vllm/blob/main/vllm/benchmarks/serve.py. A rate of None is
  one a search or a sweep sets.
- `ClosedLoop(clients)`: N clients, each sending its next request the moment its previous one
  finishes (AIPerf's and vLLM's `--max-concurrency`, trtllm-bench's `--concurrency`).
- `MaxThroughput()`: every request queued at time 0, the server's limits and KV pool deciding the
  batch (trtllm-bench throughput, vLLM's offline benchmark_throughput).
- `Replay(trace)`: the arrival times and lengths of an uploaded trace (engine/scenarios/trace.py).

Lengths are fixed, or drawn uniformly from whole numbers in [⌊mean·(1−r)⌋, ⌈mean·(1+r)⌉] (at
least 1): vLLM's random dataset with `--random-range-ratio` r. Everything is drawn from one numpy
Generator seeded with `seed` (engine/load/workload.py), so a workload is reproducible.

The measured window: the first and last WARMUP of the requests (at least N for N clients) are
excluded, so statistics describe the steady state, not the ramp-up or the drain.

The keyword form (`rate=`, `burstiness=`, `concurrency=` a number or "max", `trace=`) maps onto
`arrivals` in `Workload.from_fields`, the one place that reads those names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from engine.checks import MAX_TOKENS, check_whole
from engine.scenarios.bind import Fields, check_known, construct
from engine.scenarios.prefix import KEYWORDS as PREFIX_KEYWORDS
from engine.scenarios.prefix import Prefix, prefix_of
from engine.scenarios.trace import MAX_ARRIVAL_S, MAX_TRACE_ROWS, Trace

MODES = ("open", "closed", "max", "trace")
MAX_REQUESTS = MAX_TRACE_ROWS  # 100,000 requests per run
MAX_RATE = 1e6  # requests per second
# Slower, the arrivals of MAX_REQUESTS requests pass a trace's limit, MAX_ARRIVAL_S (1e9 s),
# past which float seconds (spaced 1.2e-7 s there, 0.125 s at 1e15 s) no longer resolve steps
# of milliseconds: at 1e-15 requests/s every latency came out 0.
MIN_RATE = MAX_REQUESTS / MAX_ARRIVAL_S  # 1e-4 requests per second, one every 2.8 hours
MAX_SEED = 2**32 - 1
BURSTINESS_RANGE = (0.01, 100.0)
WARMUP = 0.1  # fraction of the requests excluded at each end
MAX_TURNS = 100  # turns per multi-turn session


def check_fraction(
    value: object, name: str, low: float, high: float, *, closed: bool = True
) -> float:
    """A finite number from `low` to `high` (`high` excluded unless `closed`)."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    inside = ok and math.isfinite(value) and low <= value
    inside = inside and (value <= high if closed else value < high)
    if not inside:
        top = f"{high:g}" + ("" if closed else " (excluded)")
        raise ValueError(f"{name}: expected a number from {low:g} to {top}, got {value!r}"[:200])
    return float(value)


def check_burstiness(value: object) -> float:
    """vLLM's burstiness b, the gamma shape of the gaps (1: Poisson)."""
    low, high = BURSTINESS_RANGE
    return check_fraction(value, "burstiness", low=low, high=high)


def check_rate(value: object) -> float:
    """Requests per second: from MIN_RATE to MAX_RATE."""
    rate = check_fraction(value, "rate", low=0.0, high=MAX_RATE)
    if rate <= 0:
        raise ValueError("rate: expected a number of requests per second above 0")
    if rate < MIN_RATE:
        raise ValueError(
            f"rate: expected at least {MIN_RATE:g} requests per second (one every "
            f"{1 / MIN_RATE / 3600:.1f} hours; slower, arrival times pass "
            f"{MAX_ARRIVAL_S:,.0f} s, where the clock no longer resolves a step), got {rate!r}"
        )
    return rate


@dataclass(frozen=True, slots=True)
class OpenLoop:
    """Requests at `rate_per_s` (None: set by a search or sweep), Poisson or gamma gaps."""

    rate_per_s: float | None = None
    burstiness: float = 1.0
    mode: ClassVar[str] = "open"

    def __post_init__(self) -> None:
        if self.rate_per_s is not None:
            object.__setattr__(self, "rate_per_s", check_rate(self.rate_per_s))
        object.__setattr__(self, "burstiness", check_burstiness(self.burstiness))


@dataclass(frozen=True, slots=True)
class ClosedLoop:
    """`clients` clients, each sending its next request when its previous one finishes."""

    clients: int
    mode: ClassVar[str] = "closed"

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "clients", check_whole(self.clients, "concurrency", high=MAX_REQUESTS)
        )


@dataclass(frozen=True, slots=True)
class MaxThroughput:
    """Every request queued at time 0: the server's limits decide the batch."""

    mode: ClassVar[str] = "max"


@dataclass(frozen=True, slots=True)
class Replay:
    """The arrival times and lengths of a trace."""

    trace: Trace
    mode: ClassVar[str] = "trace"

    def __post_init__(self) -> None:
        if not isinstance(self.trace, Trace):
            raise ValueError("trace: expected a Trace (engine.parse_trace)")


Arrivals = OpenLoop | ClosedLoop | MaxThroughput | Replay
ARRIVAL_KEYWORDS = ("rate", "concurrency", "trace")


def margin(requests: int, clients: int | None = None) -> int:
    """Requests excluded at each end of the run: WARMUP of them, and at least the clients (a
    closed loop is in its steady state only once every client has sent a second request)."""
    return max(math.floor(WARMUP * requests), clients or 0)


@dataclass(frozen=True, slots=True)
class Workload(Fields):
    """Requests of `input_tokens` and `output_tokens` (means; ± `length_spread`), arriving as
    `arrivals` says, `requests` of them, everything drawn from `seed`. With a `Replay`, the
    trace gives the count and lengths (its means are recorded)."""

    input_tokens: float | None = None
    output_tokens: float | None = None
    arrivals: Arrivals | None = None  # required: None is refused with what to give
    requests: int = 2000
    length_spread: float = 0.0
    seed: int = 0
    prefix: Prefix | None = None  # a shared prompt prefix (engine/scenarios/prefix.py)
    session_turns: int = 1  # requests per multi-turn session (1: none; engine/load/workload.py)

    ARG: ClassVar[str] = "workload"
    EXTRA: ClassVar[tuple[str, ...]] = (
        "rate",
        "burstiness",
        "concurrency",
        "trace",
        *PREFIX_KEYWORDS,
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "seed", check_whole(self.seed, "seed", high=MAX_SEED, low=0))
        spread = check_fraction(
            self.length_spread, "length_spread", low=0.0, high=1.0, closed=False
        )
        object.__setattr__(self, "length_spread", spread)
        if self.prefix is not None and not isinstance(self.prefix, Prefix):
            raise ValueError(f"prefix: expected a Prefix, got {type(self.prefix).__name__}")
        turns = check_whole(self.session_turns, "session_turns", high=MAX_TURNS)
        object.__setattr__(self, "session_turns", turns)
        if self.arrivals is None:
            raise ValueError(
                "give exactly one of rate (requests/s, open loop), concurrency (clients, or "
                "'max' for a max-throughput run) or trace; got none"
            )
        if not isinstance(self.arrivals, Arrivals):
            raise ValueError(
                "arrivals: expected OpenLoop, ClosedLoop, MaxThroughput or Replay, got "
                f"{type(self.arrivals).__name__}"
            )
        if isinstance(self.arrivals, Replay):
            trace = self.arrivals.trace
            object.__setattr__(self, "requests", len(trace))
            object.__setattr__(self, "input_tokens", float(trace.input_tokens.mean()))
            object.__setattr__(self, "output_tokens", float(trace.output_tokens.mean()))
            return
        n = check_whole(self.requests, "requests", high=MAX_REQUESTS)
        object.__setattr__(self, "requests", n)
        for name in ("input_tokens", "output_tokens"):
            value = getattr(self, name)
            if value is None:
                raise ValueError(f"Workload: give {name}")
            object.__setattr__(self, name, check_whole(value, name, high=MAX_TOKENS))
        if isinstance(self.arrivals, ClosedLoop):
            c = self.arrivals.clients
            if n < 2 * c + 1:
                raise ValueError(
                    f"requests: {n:,} requests leave none to measure with {c:,} clients (the "
                    f"first and last {margin(n, c):,} are warm-up and drain): give at least "
                    f"{2 * c + 1:,} requests, or fewer clients"
                )

    @classmethod
    def from_fields(cls, base: Workload | None, values: dict[str, Any]) -> Workload:
        """The keyword form: `rate` (and `burstiness`), `concurrency` (a number or "max") or
        `trace` name the arrivals; the other keywords are fields."""
        check_known(cls, values)
        values = dict(values)
        if not values.keys().isdisjoint(PREFIX_KEYWORDS):
            values["prefix"] = prefix_of(values)
        given = [k for k in ARRIVAL_KEYWORDS if values.get(k) is not None]
        if len(given) > 1 or (given and values.get("arrivals") is not None):
            named = ", ".join(given + (["arrivals"] if values.get("arrivals") else []))
            raise ValueError(
                "give exactly one of rate (requests/s, open loop), concurrency (clients, or "
                f"'max' for a max-throughput run) or trace; got {named}"
            )
        rate, clients = values.pop("rate", None), values.pop("concurrency", None)
        trace, burstiness = values.pop("trace", None), values.pop("burstiness", None)
        before = values.get("arrivals") or (base.arrivals if base is not None else None)
        if rate is not None:
            b = burstiness if burstiness is not None else _burstiness_of(before)
            arrivals = OpenLoop(rate_per_s=rate, burstiness=b)
        else:
            arrivals = _clients(clients) if clients is not None else before
            arrivals = Replay(trace) if trace is not None else arrivals
            if burstiness is not None:
                arrivals = _with_burstiness(arrivals, burstiness)
        if arrivals is not None:
            values["arrivals"] = arrivals
        if base is None:
            return construct(cls, values)
        return replace(base, **values) if values else base

    @property
    def mode(self) -> str:
        return self.arrivals.mode

    @property
    def rate_per_s(self) -> float | None:
        return self.arrivals.rate_per_s if isinstance(self.arrivals, OpenLoop) else None

    @property
    def burstiness(self) -> float:
        return self.arrivals.burstiness if isinstance(self.arrivals, OpenLoop) else 1.0

    @property
    def concurrency(self) -> int | None:
        return self.arrivals.clients if isinstance(self.arrivals, ClosedLoop) else None

    @property
    def trace(self) -> Trace | None:
        return self.arrivals.trace if isinstance(self.arrivals, Replay) else None

    def at_rate(self, rate_per_s: float) -> Workload:
        """The same requests arriving open-loop at `rate_per_s` (the burstiness kept)."""
        return replace(self, arrivals=OpenLoop(rate_per_s, _burstiness_of(self.arrivals)))

    def as_dict(self) -> dict[str, object]:
        """The workload as a run's result records it (JSON keys)."""
        return {
            "mode": self.mode,
            "requests": self.requests,
            "rate_per_s": self.rate_per_s,
            "concurrency": self.concurrency,
            "burstiness": self.burstiness if self.mode == "open" else None,
            "length_spread": self.length_spread,
            "seed": self.seed,
            "trace": None if self.trace is None else self.trace.label,
            "prefix_tokens": self.prefix.tokens if self.prefix else None,
            "prefix_share": self.prefix.share if self.prefix else None,
            "session_turns": self.session_turns,
        }


def _burstiness_of(arrivals: object) -> float:
    return arrivals.burstiness if isinstance(arrivals, OpenLoop) else 1.0


def _clients(value: object) -> Arrivals:
    if isinstance(value, str) and value.strip().lower() == "max":
        return MaxThroughput()
    return ClosedLoop(value)


def _with_burstiness(arrivals: object, burstiness: object) -> Arrivals | None:
    """`burstiness` applied to open-loop arrivals (alone: open-loop arrivals whose rate a search
    or sweep sets); the keyword form passes its default of 1 with every mode, which changes
    nothing for closed-loop, max-throughput or trace arrivals."""
    if arrivals is None or isinstance(arrivals, OpenLoop):
        rate = arrivals.rate_per_s if arrivals is not None else None
        return OpenLoop(rate_per_s=rate, burstiness=burstiness)
    if check_burstiness(burstiness) != 1.0:
        raise ValueError(
            f"burstiness: applies to open-loop arrivals (a rate), not to {arrivals.mode} ones"
        )
    return arrivals
