"""Simulations in parallel: in this process, a process pool on this machine, or a Ray cluster.

`Runner(execution)` maps a module-level function over items and returns the answers in the
items' order, whatever finishes first, so a caller's answer never depends on where or in what
order the work ran (every simulation is seeded: engine/load/workload.py `draw`). Backends:

- one worker: a plain loop in this process (no pool, nothing to import);
- N workers: the standard library's `concurrent.futures.ProcessPoolExecutor` with the "spawn"
  start method (a fresh interpreter per worker: safe under a web server's threads);
- a Ray address (`Execution.ray_address`, or the RAY_ADDRESS environment variable): Ray's tasks
  (`ray.remote`, `ray.get`; https://docs.ray.io/en/latest/ray-core/tasks.html), joining the
  cluster with `ray.init(address=...)` unless this process already joined one. Ray is optional:
  imported only then, with a clear message when it is not installed.

`progress(done, total)`, when given, is called in the caller's process after each answer. No
Execution (None) runs in this process: the engine's functions start no process unless asked
(the CLI asks for one per core by default).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from typing import Any

from engine.scenarios.execution import SERIAL, Execution

NO_RAY = (
    "Ray is not installed: `pip install ray` (Ray 2.60 is the version tested), or drop "
    "--ray-address (and RAY_ADDRESS) to run on this machine's processes"
)


def _ray():
    """The `ray` module, imported only when a Ray address is used."""
    try:
        import ray
    except ImportError:
        raise ValueError(NO_RAY) from None
    return ray


def _call(fn: Callable, item: Any) -> Any:
    return fn(item)


class Runner:
    """Maps functions over items on one Execution's workers (a context manager: the pool, if
    any, is started on first use and shut down on exit)."""

    def __init__(self, execution: Execution | None = None, total: int | None = None):
        self.execution = execution or SERIAL
        # no Execution asked for: this process, whatever RAY_ADDRESS says
        self.address = None if execution is None else self.execution.address
        self.width = self.execution.processes
        self._pool: ProcessPoolExecutor | None = None
        self._remote = None
        self.done, self.total = 0, total
        if self.address is not None:
            ray = _ray()
            if not ray.is_initialized():
                try:
                    ray.init(address=self.address, include_dashboard=False)
                except (ConnectionError, RuntimeError) as exc:
                    raise ValueError(
                        f"ray_address {self.address[:80]!r}: cannot join the Ray cluster ({exc})"
                    ) from None
            self.width = max(int(ray.cluster_resources().get("CPU", 1)), 1)
            self._remote = ray.remote(_call)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _tick(self) -> None:
        self.done += 1
        tell = self.execution.progress
        if tell is not None:
            tell(self.done, max(self.total or 0, self.done))

    def map(self, fn: Callable, items: Iterable) -> list:
        """[fn(item) for item in items], run on the workers; answers in the items' order."""
        items = list(items)
        if self._remote is not None:
            return self._ray_map(fn, items)
        if self.width <= 1 or len(items) <= 1:
            out = []
            for item in items:
                out.append(fn(item))
                self._tick()
            return out
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.width, mp_context=get_context("spawn")
            )
        futures = {self._pool.submit(fn, item): k for k, item in enumerate(items)}
        out: list = [None] * len(items)
        for f in as_completed(futures):
            out[futures[f]] = f.result()
            self._tick()
        return out

    def _ray_map(self, fn: Callable, items: Sequence) -> list:
        ray = _ray()
        refs = [self._remote.remote(fn, item) for item in items]
        index = {ref: k for k, ref in enumerate(refs)}
        out: list = [None] * len(items)
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            out[index[ready[0]]] = ray.get(ready[0])
            self._tick()
        return out


def run_all(fn: Callable, items: Iterable, execution: Execution | None = None) -> list:
    """`fn` over `items` on `execution`'s workers, the answers in the items' order."""
    items = list(items)
    with Runner(execution, total=len(items)) as runner:
        return runner.map(fn, items)
