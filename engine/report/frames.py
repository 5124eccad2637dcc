"""Columns of a grid DataFrame, built without waste (engine/serving/sweep.py's frames).

A million-row frame is mostly fresh memory, and the first touch of fresh pages is what a first
sweep in a process pays for. So every column is written once, in its final dtype, from small
per-axis arrays; and a column that holds one value on every row (an assumption echoed per row)
costs no memory per row: it is a read-only view with a zero stride, shared with a `pd.Series`
that this module keeps, so pandas' Copy-on-Write sees a shared column and copies it on the
first write (`df.loc[...] = ...`, `fillna(inplace=True)`, ...). A read-only column that nothing
else shares would make such writes raise instead (https://github.com/pandas-dev/pandas/issues/62144).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas loads on the first sweep, keeping `import engine` fast
    import pandas as pd

MAX_ROWS = 2_000_000  # the longest constant column (serve_sweep's MAX_SERVE_SWEEP_ROWS)
MAX_CONSTANTS = 1024  # distinct values kept (about 2 kB each); beyond: ordinary columns
_CONSTANTS: dict[bytes, pd.Series] = {}  # value's bytes -> its column; never evicted (see above)


def constant(value: float, rows: int) -> pd.Series | np.ndarray:
    """`rows` float64 copies of `value` that cost no memory per row (pass them to
    `pd.DataFrame(..., copy=False)`; any write copies first), or an ordinary array once
    MAX_CONSTANTS values are kept or beyond MAX_ROWS rows."""
    import pandas as pd

    x = np.float64(value)
    shared = _CONSTANTS.get(x.tobytes())
    if shared is None and len(_CONSTANTS) < MAX_CONSTANTS:
        column = pd.Series(np.broadcast_to(x, (MAX_ROWS,)), copy=False)
        shared = _CONSTANTS.setdefault(x.tobytes(), column)  # atomic: one column per value
    if shared is None or rows > MAX_ROWS:
        return np.full(rows, x)
    return shared.iloc[:rows]  # a view: pandas tracks that it shares `shared`'s values


def full(value, shape: tuple, dtype) -> np.ndarray:
    """`value` broadcast to `shape`, as one flat column (one write, no temporary)."""
    out = np.empty(shape, dtype=dtype)
    out[...] = value
    return out.reshape(-1)


def code_dtype(categories: int) -> type:
    """The codes' dtype pandas keeps for this many categories (it copies any other)."""
    return next(t for t in (np.int8, np.int16, np.int32) if categories < np.iinfo(t).max)


def categorical(codes: np.ndarray, labels: list, shape: tuple | None = None) -> pd.Categorical:
    """A categorical column over a grid of `shape` from one code per value of an axis (`codes`
    laid along it, broadcasting; None: `codes` is the whole column); repeated labels share one
    category."""
    shape = np.shape(codes) if shape is None else shape
    import pandas as pd

    unique = list(dict.fromkeys(labels))
    remap = np.array([unique.index(label) for label in labels], dtype=code_dtype(len(unique)))
    return pd.Categorical.from_codes(full(remap[codes], shape, remap.dtype), categories=unique)
