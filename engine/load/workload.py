"""Drawing a workload's requests: their lengths and arrival times, seeded.

A Workload (engine/scenarios/workload.py) says how requests arrive and how long they are; this
module draws them. Lengths are fixed, or uniform on whole numbers in [⌊mean·(1−r)⌋, ⌈mean·(1+r)⌉]
(at least 1): vLLM's random dataset with `--random-range-ratio` r,
https://github.com/vllm-project/vllm/blob/main/vllm/benchmarks/datasets.py. Open-loop gaps are
exponential (burstiness 1) or gamma with shape b and scale 1/(rate·b) (vLLM benchmark_serving's
`--burstiness`). Everything comes from one numpy Generator seeded with the workload's `seed`.
Multi-turn sessions (`session_turns` T > 1): the requests are interleaved sessions of T turns,
and a later turn's prompt holds its session's previous prompt and answer before its own
message (`previous_turns`, `with_history`); engine/load/prefix.py caches that history.
"""

from __future__ import annotations

import math

import numpy as np

from engine.scenarios.workload import Workload


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


SESSIONS_AT_ONCE = 32  # sessions interleaved: a session's turns come this many requests apart


def previous_turns(w: Workload) -> np.ndarray:
    """Each request's previous turn in its session (−1: the first). T turns per session, W =
    min(SESSIONS_AT_ONCE, ⌈N/T⌉) sessions interleaved at a time: in each run of W·T requests,
    the j-th is turn ⌊j/W⌋ of session j mod W, so a session's turns come W requests apart (at
    a rate λ, W/λ seconds: the user's time to read and reply)."""
    n = w.requests
    if w.session_turns <= 1 or w.trace is not None:
        return np.full(n, -1, dtype=np.int64)
    width = min(SESSIONS_AT_ONCE, math.ceil(n / w.session_turns))
    index = np.arange(n, dtype=np.int64)
    turn = index % (width * w.session_turns) // width
    return np.where(turn > 0, index - width, -1)


def trace_previous(session: np.ndarray | None, n: int) -> np.ndarray:
    """A trace's previous turns: each row's previous row of the same session (-1: none)."""
    previous = np.full(n, -1, dtype=np.int64)
    if session is None:
        return previous
    last: dict[int, int] = {}
    for i, s in enumerate(session.tolist()):
        if s >= 0:
            previous[i] = last.get(s, -1)
            last[s] = i
    return previous


def with_history(n_in: np.ndarray, n_out: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """Input tokens with the conversation so far: turn k's prompt is its own message after
    the previous turn's prompt and answer (previous turns come first in the order)."""
    out = n_in.copy()
    for i in np.flatnonzero(previous >= 0):
        p = previous[i]
        out[i] += out[p] + n_out[p]
    return out


def draw(w: Workload) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """(arrival times or None for closed/max, input tokens, output tokens), seeded; with
    multi-turn sessions, each later turn's input holds its session's history."""
    if w.trace is not None:
        return w.trace.arrival_s, w.trace.input_tokens, w.trace.output_tokens
    rng = np.random.default_rng(w.seed)
    n_in = lengths(mean=w.input_tokens, spread=w.length_spread, n=w.requests, rng=rng)
    n_out = lengths(mean=w.output_tokens, spread=w.length_spread, n=w.requests, rng=rng)
    if w.session_turns > 1:
        n_in = with_history(n_in, n_out, previous_turns(w))
    if w.mode != "open":
        return None, n_in, n_out
    return arrivals(rate=w.rate_per_s, burstiness=w.burstiness, n=w.requests, rng=rng), n_in, n_out
