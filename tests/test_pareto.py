"""`engine.pareto_front` and `engine.pareto_table`: small cases by hand and the two defining
properties (hypothesis): no point of the front is dominated, and every point off it is dominated
by a point on it."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import engine


def dominates(a: np.ndarray, b: np.ndarray) -> bool:
    """a dominates b, minimising every objective."""
    return bool(np.all(a <= b) and np.any(a < b))


def test_two_objectives_by_hand():
    # (1, 5), (2, 2), (5, 1) trade off; (3, 3) is dominated by (2, 2); (1, 5) twice: both kept.
    points = [[1, 5], [2, 2], [3, 3], [5, 1], [1, 5], [6, 6]]
    assert engine.pareto_front(points).tolist() == [True, True, False, True, True, False]


def test_maximising_flips_the_direction():
    # step time (min) against tokens/s (max): (1 s, 100) beats (2 s, 50); (3 s, 300) trades.
    points = [[1, 100], [2, 50], [3, 300]]
    assert engine.pareto_front(points, maximize=[False, True]).tolist() == [True, False, True]


def test_one_objective_keeps_the_best_and_its_ties():
    assert engine.pareto_front([3, 1, 2, 1]).tolist() == [False, True, False, True]


def test_missing_values_are_never_on_the_front():
    points = [[1, np.nan], [2, 2], [0, 0.5]]
    assert engine.pareto_front(points).tolist() == [False, False, True]


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError):
        engine.pareto_front(np.zeros((3, 2)), maximize=[True])
    with pytest.raises(ValueError):
        engine.pareto_front(np.zeros((2, 2, 2)))


def test_table_applies_limits_before_the_front():
    df = pd.DataFrame({"step_s": [1.0, 2.0, 3.0], "memory_gb": [90.0, 50.0, 10.0]})
    out = engine.pareto_table(df, {"step_s": "min", "memory_gb": "min"}, {"memory_gb": (None, 80)})
    assert out["feasible"].tolist() == [False, True, True]
    assert out["pareto"].tolist() == [False, True, True]
    with pytest.raises(ValueError):
        engine.pareto_table(df, {"nope": "min"})
    with pytest.raises(ValueError):
        engine.pareto_table(df, {"step_s": "lowest"})


def _check(points: np.ndarray, front: np.ndarray) -> None:
    on, off = points[front], points[~front]
    for p in on:  # no front point is dominated by any point
        assert not any(dominates(q, p) for q in points)
    for p in off:  # every other point is dominated by a front point
        assert any(dominates(q, p) for q in on)


@settings(max_examples=80, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 60), st.integers(1, 4)),
        elements=st.integers(0, 6).map(float),  # small integers: many ties
    )
)
def test_front_properties(points):
    _check(points, engine.pareto_front(points))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_front_properties_beyond_one_block(seed):
    # more rows than one comparison block (128) with three objectives
    points = np.random.default_rng(seed).integers(0, 30, size=(300, 3)).astype(float)
    _check(points, engine.pareto_front(points))
