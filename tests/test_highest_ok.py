"""engine.load.analytic.highest_ok: the rate searches' bracket, several bits per call.

It must give exactly what plain bisection gives for a test that holds below a threshold, at
every array size (small ones take 4 bits a call, large ones 1), in fewer calls when small.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from engine.load import analytic as an


def bisection(ok, hi, halvings):
    """The loop highest_ok replaces: halve [0, hi] `halvings` times, keep the last good."""
    lo = np.zeros_like(hi)
    for _ in range(halvings):
        mid = (lo + hi) / 2.0
        good = ok(mid)
        lo, hi = np.where(good, mid, lo), np.where(good, hi, mid)
    return lo


@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.sampled_from([1, 3, 40, 500, 5_000]),
    halvings=st.integers(1, 30),
)
def test_it_is_bisection_for_a_threshold_test(seed, size, halvings):
    rng = np.random.default_rng(seed)
    hi = rng.uniform(0.1, 100.0, size)
    threshold = hi * rng.uniform(-0.2, 1.2, size)  # below 0 (none good) to above hi (all good)
    ok = lambda x: x <= threshold  # noqa: E731
    got = an.highest_ok(ok, hi, halvings)
    # the same grid point: k·hi/2^halvings, the largest at or below the threshold (0 if none)
    np.testing.assert_allclose(got, bisection(ok, hi, halvings), rtol=1e-12, atol=0.0)
    step = hi / 2.0**halvings
    assert np.all(got <= np.maximum(threshold, 0.0))
    assert np.all(got + step + 1e-12 * hi >= np.minimum(threshold, hi))  # never reaches hi


def test_a_few_deployments_take_a_quarter_of_the_calls_thousands_the_same():
    calls = []

    def ok(x):
        calls.append(x.shape)
        return x <= 0.3

    an.highest_ok(ok, np.ones(12), 12)
    # 12 bits at 4 a call (15 points each): 3 calls instead of 12 bisection steps
    assert calls == [(15, 12)] * 3
    calls.clear()
    an.highest_ok(ok, np.ones(10_000), 12)
    assert calls == [(1, 10_000)] * 12  # 15 × 10,000 would exceed CANDIDATES: plain bisection
    calls.clear()
    an.highest_ok(ok, np.ones(300), 7)  # 7 × 300 > 2,048: 2 bits (3 points) a call, then 1
    assert calls == [(3, 300)] * 3 + [(1, 300)]
