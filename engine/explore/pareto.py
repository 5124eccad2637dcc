"""The Pareto front of a table of results, and constraints on it (design-space exploration).

`pareto_front(values, maximize)` marks the rows no other row dominates: row j dominates row i
when j is at least as good on every objective and better on one. It is vectorised (numpy, no
Python loop over rows): equal rows are merged first (they share a verdict: neither dominates
the other), the distinct rows sorted lexicographically (a row can only be dominated by one
sorted before it); with two objectives a row is dominated exactly when the running minimum of
the second objective over the rows before it is at most its own (O(n log n)); with more, blocks
of rows, in sorted order, are compared at once with the front found so far and with each
other. A row with a missing (NaN) objective is never on the front and dominates nothing.

`pareto_table(df, objectives, limits)` applies constraints (bounds on columns) and marks the
front of the rows that meet them: the columns `feasible` and `pareto`. docs/model.md,
"Design-space exploration".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

DIRECTIONS = ("min", "max")
BLOCK_ROWS = 128  # rows compared at once when there are more than two objectives
MAX_ROWS = 1_000_000


def pareto_front(values, maximize: Sequence[bool] | None = None) -> np.ndarray:
    """A boolean mask of the rows of `values` (n × k, or n values) on the Pareto front.

    Args:
        values: the objectives, one row per point, one column per objective.
        maximize: per objective, True where larger is better (default: every one minimised).
    """
    x = np.asarray(values, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] == 0:
        raise ValueError(f"values: give n rows of k ≥ 1 objectives, got shape {x.shape}")
    if len(x) > MAX_ROWS:
        raise ValueError(f"values: at most {MAX_ROWS:,} rows, got {len(x):,}")
    signs = np.ones(x.shape[1])
    if maximize is not None:
        flags = np.asarray(maximize, dtype=bool).ravel()
        if flags.shape != signs.shape:
            raise ValueError(f"maximize: one flag per objective ({x.shape[1]}), got {flags.size}")
        signs[flags] = -1.0
    x = x * signs
    ok = ~np.isnan(x).any(axis=1)
    out = np.zeros(len(x), dtype=bool)
    if not ok.any():
        return out
    unique, inverse = np.unique(x[ok], axis=0, return_inverse=True)  # sorted lexicographically
    front = _front_sorted(unique)
    out[ok] = front[inverse.ravel()]
    return out


def _front_sorted(u: np.ndarray) -> np.ndarray:
    """The front of distinct rows sorted lexicographically (minimising every column)."""
    n, k = u.shape
    if k == 1:
        return np.arange(n) == 0
    if k == 2:
        before = np.minimum.accumulate(np.concatenate(([np.inf], u[:-1, 1])))
        return ~(before <= u[:, 1])
    keep = np.zeros(n, dtype=bool)
    front = u[:0]
    for start in range(0, n, BLOCK_ROWS):  # blocks in sorted order, each compared at once
        block = u[start : start + BLOCK_ROWS]
        # a dominated row is dominated by a front row sorted before it: the front so far or
        # the block's own earlier rows
        by_front = _dominated_by(block, front)
        within = _dominated_by(block, block)
        keep[start : start + BLOCK_ROWS] = ~(by_front | within)
        front = u[: start + len(block)][keep[: start + len(block)]]
    return keep


def _dominated_by(rows: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Whether each of `rows` is dominated by one of `others` (distinct rows, minimising)."""
    if len(others) == 0:
        return np.zeros(len(rows), dtype=bool)
    le = (others[None, :, :] <= rows[:, None, :]).all(axis=2)
    lt = (others[None, :, :] < rows[:, None, :]).any(axis=2)
    return (le & lt).any(axis=1)


def pareto_table(
    df: pd.DataFrame,
    objectives: Mapping[str, str],
    limits: Mapping[str, tuple[float | None, float | None]] | None = None,
) -> pd.DataFrame:
    """`df` with `feasible` (every limit met) and `pareto` (on the front of the feasible rows).

    Args:
        df: one row per configuration.
        objectives: column -> "min" or "max" (what is better).
        limits: column -> (lowest, highest) allowed (None: no bound on that side).
    """
    for column, way in objectives.items():
        if column not in df:
            raise ValueError(f"objective {column!r}: no such column")
        if way not in DIRECTIONS:
            raise ValueError(f"objective {column!r}: 'min' or 'max', got {way!r}"[:120])
    feasible = np.ones(len(df), dtype=bool)
    for column, (low, high) in (limits or {}).items():
        if column not in df:
            raise ValueError(f"limit {column!r}: no such column")
        values = df[column].to_numpy(dtype=float)
        if low is not None:
            feasible &= values >= low
        if high is not None:
            feasible &= values <= high
    front = np.zeros(len(df), dtype=bool)
    if feasible.any() and objectives:
        values = df.loc[feasible, list(objectives)].to_numpy(dtype=float)
        front[feasible] = pareto_front(values, [w == "max" for w in objectives.values()])
    return df.assign(feasible=feasible, pareto=front)
