"""The requests a server sees: how they arrive and how long they are.

Modes (how benchmark clients drive a server):

- "open": requests arrive on their own schedule at `rate` per second, independent of the
  server: Poisson (exponential gaps), or gamma gaps with vLLM benchmark_serving's
  `--burstiness` b (shape b, scale 1/(rate·b): b = 1 is Poisson, b < 1 burstier; coefficient of
  variation 1/√b), https://github.com/vllm-project/vllm/blob/main/vllm/benchmarks/serve.py.
- "closed": N clients, each sending its next request the moment its previous one finishes
  (AIPerf's and vLLM's `--max-concurrency`, trtllm-bench's `--concurrency`).
- "max": every request queued at time 0, the server's limits and KV pool deciding the batch
  (trtllm-bench throughput, vLLM's offline benchmark_throughput).
- "trace": the arrival times and lengths of an uploaded trace (engine/load/trace.py).

Lengths are fixed, or drawn uniformly from whole numbers in [⌊mean·(1−r)⌋, ⌈mean·(1+r)⌉]
(at least 1): vLLM's random dataset with `--random-range-ratio` r,
https://github.com/vllm-project/vllm/blob/main/vllm/benchmarks/datasets.py. Everything is drawn
from one numpy Generator seeded with `seed`, so a workload is reproducible.

The measured window: the first and last `warmup` fraction of the requests (at least N for N
clients) are excluded, so statistics describe the steady state, not the ramp-up or the drain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.checks import MAX_TOKENS, check_whole
from engine.load.trace import MAX_TRACE_ROWS, Trace

MODES = ("open", "closed", "max", "trace")
MAX_REQUESTS = MAX_TRACE_ROWS  # 100,000 requests per run
MAX_RATE = 1e6  # requests per second
MAX_SEED = 2**32 - 1
BURSTINESS_RANGE = (0.01, 100.0)
WARMUP = 0.1  # fraction of the requests excluded at each end


@dataclass(frozen=True, slots=True)
class Workload:
    """A checked workload; `as_dict()` records it in the result."""

    mode: str
    requests: int
    input_tokens: float  # mean (a trace: its mean)
    output_tokens: float
    rate_per_s: float | None = None
    concurrency: int | None = None
    burstiness: float = 1.0
    length_spread: float = 0.0
    seed: int = 0
    trace: Trace | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "requests": self.requests,
            "rate_per_s": self.rate_per_s,
            "concurrency": self.concurrency,
            "burstiness": self.burstiness if self.mode == "open" else None,
            "length_spread": self.length_spread,
            "seed": self.seed,
            "trace": None if self.trace is None else self.trace.label,
        }


def _fraction(value: object, name: str, low: float, high: float, *, closed: bool = True) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    inside = ok and math.isfinite(value) and low <= value and (value <= high if closed
                                                                 else value < high)  # fmt: skip
    if not inside:
        top = f"{high:g}" + ("" if closed else " (excluded)")
        raise ValueError(f"{name}: expected a number from {low:g} to {top}, got {value!r}"[:200])
    return float(value)


def check_burstiness(value: object) -> float:
    """vLLM's burstiness b, the gamma shape of the gaps (1: Poisson)."""
    return _fraction(value, "burstiness", *BURSTINESS_RANGE)


def make_workload(*, input_tokens, output_tokens, rate=None, concurrency=None, requests=2000,
                  seed=0, burstiness=1.0, length_spread=0.0, trace=None) -> Workload:  # fmt: skip
    """Check the arguments and name the mode: a rate (open loop), a concurrency (N clients, or
    "max"), or a trace. Bounds keep one run's work bounded; the messages say how to narrow."""
    seed = check_whole(seed, "seed", high=MAX_SEED, low=0)
    given = [n for n, v in (("rate", rate), ("concurrency", concurrency), ("trace", trace))
             if v is not None]  # fmt: skip
    if len(given) != 1:
        raise ValueError(
            "give exactly one of rate (requests/s, open loop), concurrency (clients, or 'max' "
            f"for a max-throughput run) or trace; got {', '.join(given) or 'none'}"
        )
    spread = _fraction(length_spread, "length_spread", 0.0, 1.0, closed=False)
    if trace is not None:
        if not isinstance(trace, Trace):
            raise ValueError("trace: expected a Trace (engine.load.trace.parse_trace)")
        return Workload("trace", len(trace), float(trace.input_tokens.mean()),
                        float(trace.output_tokens.mean()), seed=seed, trace=trace)  # fmt: skip
    n = check_whole(requests, "requests", high=MAX_REQUESTS)
    i = check_whole(input_tokens, "input_tokens", high=MAX_TOKENS)
    o = check_whole(output_tokens, "output_tokens", high=MAX_TOKENS)
    if rate is not None:
        r = _fraction(rate, "rate", 0.0, MAX_RATE)
        if r <= 0:
            raise ValueError("rate: expected a number of requests per second above 0")
        b = check_burstiness(burstiness)
        return Workload("open", n, i, o, rate_per_s=r, burstiness=b, length_spread=spread,
                        seed=seed)  # fmt: skip
    if isinstance(concurrency, str) and concurrency.strip().lower() == "max":
        return Workload("max", n, i, o, length_spread=spread, seed=seed)
    c = check_whole(concurrency, "concurrency", high=MAX_REQUESTS)
    if n < 2 * c + 1:
        raise ValueError(
            f"requests: {n:,} requests leave none to measure with {c:,} clients (the first and "
            f"last {margin(n, c):,} are warm-up and drain): give at least {2 * c + 1:,} "
            "requests, or fewer clients"
        )
    return Workload("closed", n, i, o, concurrency=c, length_spread=spread, seed=seed)


def margin(requests: int, clients: int | None = None) -> int:
    """Requests excluded at each end of the run: WARMUP of them, and at least the clients (a
    closed loop is in its steady state only once every client has sent a second request)."""
    return max(math.floor(WARMUP * requests), clients or 0)


def lengths(mean: float, spread: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """n whole lengths: the mean, or uniform on [⌊mean(1−r)⌋, ⌈mean(1+r)⌉] (at least 1)."""
    if spread == 0:
        return np.full(n, int(mean), dtype=np.int64)
    low = max(1, math.floor(mean * (1 - spread)))
    high = max(low, math.ceil(mean * (1 + spread)))
    return rng.integers(low, high + 1, size=n, dtype=np.int64)


def arrivals(rate: float, burstiness: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """n arrival times from 0: the cumulative sum of exponential (burstiness 1) or gamma gaps,
    the first request arriving at 0."""
    if burstiness == 1.0:
        gaps = rng.exponential(1.0 / rate, size=n)
    else:
        gaps = rng.gamma(burstiness, 1.0 / (rate * burstiness), size=n)
    gaps[0] = 0.0
    return np.cumsum(gaps)


def draw(w: Workload) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """(arrival times or None for closed/max, input tokens, output tokens), seeded."""
    if w.trace is not None:
        return w.trace.arrival_s, w.trace.input_tokens, w.trace.output_tokens
    rng = np.random.default_rng(w.seed)
    n_in = lengths(w.input_tokens, w.length_spread, w.requests, rng)
    n_out = lengths(w.output_tokens, w.length_spread, w.requests, rng)
    if w.mode != "open":
        return None, n_in, n_out
    return arrivals(w.rate_per_s, w.burstiness, w.requests, rng), n_in, n_out
