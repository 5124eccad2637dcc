"""Kernels that run on Python floats or numpy arrays alike: the `xp` convention.

A kernel takes `xp`, either `SCALAR` (the few numpy functions it needs, for plain floats: a
scalar `serve` in microseconds) or `numpy` itself (a vectorised sweep); the same code then
gives the same numbers both ways. Booleans are Python bools or boolean arrays.
"""

from __future__ import annotations

import math

INF = float("inf")


class _Scalar:
    """The numpy functions the kernels use, for Python floats (20x faster than 0-d arrays)."""

    maximum = staticmethod(max)
    minimum = staticmethod(min)
    floor = staticmethod(math.floor)
    ceil = staticmethod(math.ceil)
    log2 = staticmethod(math.log2)

    @staticmethod
    def where(cond, a, b):
        return a if cond else b

    @staticmethod
    def any(value) -> bool:
        return bool(value)


SCALAR = _Scalar()
