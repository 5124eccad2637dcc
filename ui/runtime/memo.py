"""A cache shared by every session for large read-only results that cost a rerun to recompute
(the planner's grids, /train's searches, /load's simulations): bounded in entries and in bytes,
and emptied of entries unused for `idle_s` seconds by a timer, so the memory of a burst of users
is released once they have gone. `cached` puts a function's results in one.

Why not Streamlit's caches or session state: `st.cache_resource(ttl=…)` drops an expired entry
only when that cache is next called, and session state stays with a disconnected session until
Streamlit's session store is next written (someone connects). After a burst of 16 clients both
held /plan's grids, up to 24 MiB each, until the next visitor (bench/memory_burst.py);
`st.cache_resource(max_entries=16)` kept 16 of /train's searches per function for the life of
the process.

Caches may also bound how many of their results are computed at once (`Slots`, shared by the
caches of the heavy pages, HEAVY): a /train search holds about four times its frame while it
runs (a 35,000-row search: a 13 MiB frame, 52 MiB at its peak), so three sessions searching at
once held three such peaks. The server has one core (the pod's `limits.cpu`) and runs Python
under one lock: one heavy computation after another ends no later than three side by side, and
holds one working set. A page that computes nothing heavy never waits for a slot.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import inspect
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import numpy as np

from ui.runtime import heap

NOMINAL_BYTES = 1024  # what a result of another kind counts for


def frame_bytes(value: Any) -> int:
    """The bytes a result holds: a DataFrame's columns (without Python strings' own size), else
    a nominal 1 KiB."""
    usage = getattr(value, "memory_usage", None)
    return int(usage(index=True).sum()) if callable(usage) else NOMINAL_BYTES


def result_bytes(value: Any, depth: int = 0) -> int:
    """The bytes a result holds: a DataFrame's or Series' columns, an array's data, and those
    inside a dict, tuple, list or dataclass (a load run's per-request arrays and time series),
    three levels deep; anything else a nominal 1 KiB."""
    usage = getattr(value, "memory_usage", None)
    if callable(usage):
        used = usage(index=True)
        return int(used.sum() if hasattr(used, "sum") else used)
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if depth < 3:
        parts = None
        if isinstance(value, dict):
            parts = value.values()
        elif isinstance(value, tuple | list):
            parts = value
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            parts = [getattr(value, f.name) for f in dataclasses.fields(value)]
        if parts is not None:
            return sum(result_bytes(part, depth + 1) for part in parts) + NOMINAL_BYTES
    return NOMINAL_BYTES


def fingerprint(value: Any) -> Hashable:
    """A value as part of a cache key: bytes by their SHA-256 (an uploaded file), anything else
    by its exact text (`repr`: a scenario holds specs whose read-only mappings do not hash)."""
    if isinstance(value, bytes | bytearray):
        return hashlib.sha256(value).hexdigest()
    return repr(value)


class Slots:
    """At most `at_once` computations at a time, over every cache given these slots; a thread
    that holds one computes what its computation asks of such a cache without another."""

    def __init__(self, at_once: int):
        self._free = threading.BoundedSemaphore(at_once)
        self._held = threading.local()  # whether this thread holds a slot

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """One slot for this thread's computation (none more inside one)."""
        if getattr(self._held, "on", False):
            yield
            return
        with self._free:
            self._held.on = True
            try:
                yield
            finally:
                self._held.on = False


HEAVY = Slots(at_once=1)  # /train's searches and /load's simulations, one at a time


class Pool:
    """A byte budget shared by several caches: when their kept results together hold more than
    `max_bytes`, the least recently used entries of them all are dropped first."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._caches: list[Shared] = []
        self._lock = threading.Lock()  # taken before a cache's lock, never after

    def join(self, cache: Shared) -> None:
        self._caches.append(cache)

    def held_bytes(self) -> int:
        """Bytes the pool's caches keep (as counted when kept)."""
        return sum(cache.held_bytes() for cache in self._caches)

    def shrink(self) -> None:
        """Drop the least recently used entries, over every cache, until the pool is within
        its budget."""
        with self._lock:
            while self.held_bytes() > self.max_bytes:
                oldest = min(self._caches, key=lambda cache: cache.oldest_use())
                if not oldest.drop_oldest():
                    return


# The heavy pages' results together: /plan's grids, /train's searches, /load's simulations.
# 128 MiB: a few of each (a grid up to 24 MiB, a search up to about 37 MiB), and with the
# server's 200 MiB at idle and one heavy computation's working set, within the pod's 512 MiB
# limit (bench/memory_burst.py).
HEAVY_BYTES = Pool(max_bytes=128 * 2**20)


class Shared:
    """Least recently used entries, at most `entries` of them and `max_bytes` in all; an entry
    unused for `idle_s` seconds is dropped by a daemon thread that runs while the cache holds
    anything (so an idle server holds no entry and no thread). A result larger than `max_bytes`
    is returned, not kept. Thread-safe; nothing is computed under the lock.

    Without `slots`, two sessions asking for one key at once may both compute it (the second
    result is kept). With them, a computation waits for a slot, then looks for its key again
    first: a result another session was computing meanwhile is not computed twice. With a
    `pool`, its caches' results together stay within the pool's bytes as well.
    """

    def __init__(
        self,
        entries: int,
        max_bytes: int,
        idle_s: float,
        size: Callable[[Any], int] = frame_bytes,
        clock: Callable[[], float] = time.monotonic,
        slots: Slots | None = None,
        pool: Pool | None = None,
    ):
        self.entries, self.max_bytes, self.idle_s = entries, max_bytes, idle_s
        self._size, self._clock = size, clock
        self._items: OrderedDict[Hashable, tuple[Any, int, float]] = OrderedDict()
        self._bytes = 0  # of the kept results, as counted when kept
        self._lock = threading.Lock()
        self._timer: threading.Thread | None = None
        self._slots, self._pool = slots, pool
        if pool is not None:
            pool.join(self)

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The kept result for `key`, else `compute()`'s, kept."""
        found, value = self._hit(key)
        if found:
            return value
        with self._slots.slot() if self._slots else contextlib.nullcontext():
            found, value = self._hit(key)  # computed by the thread this one waited for
            if found:
                return value
            return self._keep(key, compute())  # kept before the slot is free

    def _hit(self, key: Hashable) -> tuple[bool, Any]:
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return False, None
            self._items[key] = hit[0], hit[1], self._clock()
            self._items.move_to_end(key)
            return True, hit[0]

    def _keep(self, key: Hashable, value: Any) -> Any:
        nbytes = self._size(value)
        if nbytes > self.max_bytes:
            return value
        with self._lock:
            self._drop(key)
            self._items[key] = value, nbytes, self._clock()
            self._bytes += nbytes
            while len(self._items) > self.entries or self._bytes > self.max_bytes:
                self._drop(next(iter(self._items)))
            self._start_timer()
        if self._pool is not None:
            self._pool.shrink()
        return value

    def _drop(self, key: Hashable) -> None:  # under the lock
        dropped = self._items.pop(key, None)
        if dropped is not None:
            self._bytes -= dropped[1]

    def held_bytes(self) -> int:
        """Bytes of the kept results (as counted when kept)."""
        return self._bytes

    def oldest_use(self) -> float:
        """When the least recently used entry was last used (infinity if none is kept)."""
        with self._lock:
            return next((used for _, _, used in self._items.values()), float("inf"))

    def drop_oldest(self) -> bool:
        """Drop the least recently used entry; whether there was one."""
        with self._lock:
            if not self._items:
                return False
            self._drop(next(iter(self._items)))
            return True

    def __len__(self) -> int:
        return len(self._items)

    def purge(self) -> int:
        """Drop the entries unused for `idle_s` seconds, and give the heap's freed pages back to
        the OS if any were dropped; the number left."""
        now = self._clock()
        with self._lock:
            old = [k for k, (_, _, used) in self._items.items() if now - used >= self.idle_s]
            for key in old:
                self._drop(key)
            left = len(self._items)
        if old:
            heap.trim()
        return left

    def _start_timer(self) -> None:  # under the lock
        if self._timer is None or not self._timer.is_alive():
            self._timer = threading.Thread(target=self._run, name="memo-purge", daemon=True)
            self._timer.start()

    def _run(self) -> None:
        while True:
            time.sleep(self.idle_s / 2)
            with self._lock:
                if not self._items:
                    self._timer = None
                    return
            self.purge()


def cached(cache: Shared, key: Callable[[Any], Hashable] = fingerprint) -> Callable:
    """Decorator: the function's results kept in `cache`, keyed by the function and each
    argument's `key` (positional and keyword calls alike); an exception is not kept."""

    def wrap(function: Callable) -> Callable:
        signature = inspect.signature(function)
        name = f"{function.__module__}.{function.__qualname__}"

        @functools.wraps(function)
        def call(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            parts = tuple((n, key(v)) for n, v in bound.arguments.items())
            return cache.get((name, parts), lambda: function(*args, **kwargs))

        return call

    return wrap
