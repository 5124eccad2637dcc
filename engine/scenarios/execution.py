"""Where a search's simulations run: `Execution(workers, ray_address, progress)`.

`workers`: processes on this machine (None: one per core, `os.cpu_count()`; 1: in this process,
no pool). `ray_address`: a Ray cluster to run them on instead (`"auto"`, `"ray://host:10001"`,
`"host:6379"`; None: the `RAY_ADDRESS` environment variable when it is set, else no Ray).
`progress`: a plain callable `progress(done, total)` told after each simulation (a page's
progress bar; not compared, not part of the answer). The answer never depends on any of them:
every simulation is seeded, and the searches decide exactly as they would serially
(engine/load/parallel.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from engine.scenarios.bind import Fields

MAX_WORKERS = 256  # processes on one machine, refused above
MAX_ADDRESS = 300  # characters of a Ray address


def default_workers() -> int:
    """One process per core of this machine."""
    return max(os.cpu_count() or 1, 1)


@dataclass(frozen=True, slots=True)
class Execution(Fields):
    """How many processes (or which Ray cluster) run a search's simulations."""

    workers: int | None = None
    ray_address: str | None = None
    progress: Callable[[int, int], None] | None = field(default=None, compare=False)

    ARG: ClassVar[str] = "execution"

    def __post_init__(self) -> None:
        w = self.workers
        if w is not None:
            ok = isinstance(w, int) and not isinstance(w, bool)
            if not (ok and 1 <= w <= MAX_WORKERS):
                raise ValueError(
                    f"workers: expected a whole number of processes from 1 to {MAX_WORKERS}, "
                    f"got {str(w)[:40]!r}"
                )
        a = self.ray_address
        if a is not None and (not isinstance(a, str) or not a.strip() or len(a) > MAX_ADDRESS):
            raise ValueError(
                "ray_address: expected a Ray address ('auto', 'ray://host:10001' or "
                f"'host:6379', at most {MAX_ADDRESS} characters)"
            )
        if self.progress is not None and not callable(self.progress):
            raise ValueError("progress: expected a callable progress(done, total)")

    @property
    def processes(self) -> int:
        """The processes on this machine (the default: one per core)."""
        return default_workers() if self.workers is None else self.workers

    @property
    def address(self) -> str | None:
        """The Ray cluster to use: `ray_address`, else RAY_ADDRESS, else None (no Ray)."""
        return self.ray_address or (os.environ.get("RAY_ADDRESS") or "").strip() or None


SERIAL = Execution(workers=1)
