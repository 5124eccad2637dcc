"""A run of pure decode steps in the simulator: its lines, read from per-batch-size tables.

Between two events the simulator's m decoding sequences take k identical-shaped steps whose
attention keys grow by one per sequence per step; engine/serving/step.py `decode_run_s` prices
the run in closed form from `Lines` (the decode lines of m sequences, duck-typing its
`DecodeLines`). To stop at a time (an arrival, an edge of the measured window) the simulator
needs the fewest steps lasting at least that long: the step time is convex in the step, so
`quadratic_steps` with the slopes at the run's start and end brackets it (`Lines.first`).
"""

from __future__ import annotations

import math


class Lines:
    """The decode lines of m sequences, read from the simulator's tables (duck-types
    engine/serving/step.py's DecodeLines for `decode_run_s`)."""

    __slots__ = ("attention", "fixed")

    def __init__(self, fixed: float, att: list, m: int):
        self.fixed = fixed
        self.attention = [
            Line(
                count=c[m],
                compute0=c0[m],
                memory0=m0[m],
                compute_per_key=ck[m],
                memory_per_key=mk[m],
            )
            for c, c0, m0, ck, mk in att
        ]

    def first(self, keys, slopes) -> tuple[float, float, float]:
        """(first step's seconds, the step time's slope at the start, its largest slope)."""
        tau, low, high = self.fixed, 0.0, 0.0
        for line, x, s in zip(self.attention, keys, slopes, strict=True):
            g = line.compute0 + line.compute_per_key * x
            mem = line.memory0 + line.memory_per_key * x
            gs, ms = line.compute_per_key * s, line.memory_per_key * s
            tau += line.count * max(g, mem)
            low += line.count * (gs if (g, gs) > (mem, ms) else ms)
            high += line.count * max(gs, ms)
        return tau, low, high


class Line:
    __slots__ = ("compute0", "compute_per_key", "count", "memory0", "memory_per_key")

    def __init__(self, count, compute0, memory0, compute_per_key, memory_per_key):
        self.count, self.compute0, self.memory0 = count, compute0, memory0
        self.compute_per_key, self.memory_per_key = compute_per_key, memory_per_key


def quadratic_steps(tau0: float, slope: float, span: float) -> int:
    """The fewest steps k ≥ 1 with k·τ0 + slope·k(k−1)/2 ≥ span (steps of τ0, τ0 + slope, …):
    the root of (slope/2)·k² + (τ0 − slope/2)·k − span, written without cancellation."""
    b = tau0 - slope / 2.0
    root = 2.0 * span / (b + math.sqrt(b * b + 2.0 * slope * span))
    k = max(math.ceil(root), 1)
    if k > 1 and (k - 1) * (tau0 + slope * (k - 2) / 2.0) >= span:  # rounding
        k -= 1
    return k
