"""Sums over the decode steps of a request in closed form, with no loop over the steps.

A decode step at context c costs a line in x = min(c, w) (w: the attention window, INF for
global attention), or the larger of two such lines: an operator's roofline is the max of its
compute and memory times (engine/serving/decode_step.py, which sums its steps here). Summed over
the whole numbers c in [a, b] each is an arithmetic series up to the window and a constant after
it; the max splits where its two lines cross (docs/model.md, "Serving model"). Floats or numpy
arrays throughout (`xp`: engine/arrays.py).
"""

from __future__ import annotations

import math

INF = float("inf")


def _pos_line_sum(d0, d1, p, q, xp):
    """Σ max(0, d0 + d1·c) over the whole numbers c in [p, q] (empty when q < p)."""
    root = -d0 / xp.where(d1 == 0, 1.0, d1)
    root = xp.minimum(xp.maximum(root, p - 1.0), q + 1.0)
    lo = xp.where(d1 > 0, xp.maximum(p, xp.floor(root) + 1.0), p)
    hi = xp.where(d1 < 0, xp.minimum(q, xp.ceil(root) - 1.0), q)
    hi = xp.where((d1 == 0) & (d0 <= 0), lo - 1.0, hi)
    n = xp.maximum(hi - lo + 1.0, 0.0)
    return n * d0 + d1 * (lo + hi) * n / 2.0


def step_sums(g0, g1, m0, m1, a, b, w, xp):
    """Over the whole numbers c in [a, b], with x = min(c, w): (Σ max(g0 + g1·x, m0 + m1·x),
    how many c, Σ x). Any line v0 + v1·x then sums to v0·count + v1·Σx."""
    hi = xp.minimum(b, w)
    n = xp.maximum(hi - a + 1.0, 0.0)  # steps while the window fills
    flat = xp.maximum(b - xp.maximum(a, w + 1.0) + 1.0, 0.0)  # steps at a full window
    x_full = xp.minimum(w, b)
    ramp = (a + hi) * n / 2.0  # Σ c over the first n steps
    rising = n * m0 + m1 * ramp + _pos_line_sum(d0=g0 - m0, d1=g1 - m1, p=a, q=hi, xp=xp)
    total = rising + flat * xp.maximum(g0 + g1 * x_full, m0 + m1 * x_full)
    return total, n + flat, ramp + flat * x_full


def run_sum(g0: float, g1: float, m0: float, m1: float, n: float) -> float:
    """Σ max(g0 + g1·t, m0 + m1·t) over t = 0 … n−1, for Python floats: `step_sums` over a run
    of n steps with no window (a continuous-batching decode run), without its array-ready
    generality. Equal to step_sums(g0, g1, m0, m1, 0, n − 1, INF)[0]."""
    if n <= 0:
        return 0.0
    total = n * m0 + m1 * n * (n - 1.0) / 2.0  # the memory line, then the compute line's excess
    d0, d1 = g0 - m0, g1 - m1
    if d1 == 0:
        return total + n * max(d0, 0.0)
    root = -d0 / d1  # the excess d0 + d1·t is positive above the root (d1 > 0) or below it
    if d1 > 0:
        lo, hi = max(0.0, math.floor(root) + 1.0), n - 1.0
    else:
        lo, hi = 0.0, min(n - 1.0, math.ceil(root) - 1.0)
    count = hi - lo + 1.0
    return total + (count * d0 + d1 * (lo + hi) * count / 2.0 if count > 0 else 0.0)
