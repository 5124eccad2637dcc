"""A cache shared by every session for large read-only results that cost a rerun to recompute
(the planner's grid): bounded in entries and in bytes, and emptied of entries unused for `idle_s`
seconds by a timer, so the memory of a burst of users is released once they have gone.

Why not Streamlit's caches or session state: `st.cache_resource(ttl=…)` drops an expired entry
only when that cache is next called, and session state stays with a disconnected session until
Streamlit's session store is next written (someone connects). After a burst of 16 clients both
held /plan's grids, up to 24 MiB each, until the next visitor (bench/memory_burst.py).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from ui.core import heap


def frame_bytes(value: Any) -> int:
    """The bytes a result holds: a DataFrame's columns (without Python strings' own size), else
    a nominal 1 KiB."""
    usage = getattr(value, "memory_usage", None)
    return int(usage(index=True).sum()) if callable(usage) else 1024


class Shared:
    """Least recently used entries, at most `entries` of them and `max_bytes` in all; an entry
    unused for `idle_s` seconds is dropped by a daemon thread that runs while the cache holds
    anything (so an idle server holds no entry and no thread). A result larger than `max_bytes`
    is returned, not kept. Thread-safe: two sessions asking for one key at once may both compute
    it (the second result is kept); nothing is computed under the lock."""

    def __init__(
        self,
        entries: int,
        max_bytes: int,
        idle_s: float,
        size: Callable[[Any], int] = frame_bytes,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.entries, self.max_bytes, self.idle_s = entries, max_bytes, idle_s
        self._size, self._clock = size, clock
        self._items: OrderedDict[Hashable, tuple[Any, int, float]] = OrderedDict()
        self._lock = threading.Lock()
        self._timer: threading.Thread | None = None

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The kept result for `key`, else `compute()`'s, kept."""
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items[key] = hit[0], hit[1], self._clock()
                self._items.move_to_end(key)
                return hit[0]
        value = compute()
        nbytes = self._size(value)
        if nbytes > self.max_bytes:
            return value
        with self._lock:
            self._items.pop(key, None)
            self._items[key] = value, nbytes, self._clock()
            while len(self._items) > self.entries or self.held_bytes() > self.max_bytes:
                self._items.popitem(last=False)
            self._start_timer()
        return value

    def held_bytes(self) -> int:
        """Bytes of the kept results (as counted when kept)."""
        return sum(nbytes for _, nbytes, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def purge(self) -> int:
        """Drop the entries unused for `idle_s` seconds, and give the heap's freed pages back to
        the OS if any were dropped; the number left."""
        now = self._clock()
        with self._lock:
            old = [k for k, (_, _, used) in self._items.items() if now - used >= self.idle_s]
            for key in old:
                del self._items[key]
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
