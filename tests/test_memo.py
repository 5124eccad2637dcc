"""The server's memory after its users leave (issue 18 item 4): the planner's grids in a shared
cache that empties itself (ui/core/memo.py), never in session state, and freed arrays returned to
the operating system (ui/core/heap.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pandas as pd
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT
from ui.core import memo
from ui.plan import inputs as plan_inputs


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame({"x": [1.0] * rows})  # 8 B a row + the index's 132 B


def test_a_kept_result_is_returned_without_computing_again():
    cache, calls = memo.Shared(entries=2, max_bytes=10**6, idle_s=60), []
    first = cache.get("k", lambda: calls.append(1) or frame(10))
    assert cache.get("k", lambda: calls.append(2) or frame(10)) is first
    assert calls == [1]


def test_entries_unused_for_idle_seconds_are_purged_and_used_ones_kept():
    clock = Clock()
    cache = memo.Shared(entries=4, max_bytes=10**6, idle_s=60, clock=clock)
    cache.get("old", lambda: frame(1))
    clock.now = 30.0
    cache.get("new", lambda: frame(1))
    clock.now = 59.9  # "old" unused for 59.9 s: kept
    assert cache.purge() == 2
    clock.now = 60.0  # "old" unused for 60 s, "new" for 30 s
    assert cache.purge() == 1
    clock.now = 89.0
    cache.get("new", lambda: frame(1))  # a hit counts as a use: "new" kept to 149 s
    clock.now = 148.0
    assert cache.purge() == 1
    clock.now = 149.0
    assert cache.purge() == 0


def test_the_least_recently_used_goes_first_when_entries_or_bytes_are_over():
    clock = Clock()
    cache = memo.Shared(entries=2, max_bytes=2_000, idle_s=60, clock=clock)
    cache.get("a", lambda: frame(10))  # 80 + 132 = 212 B
    cache.get("b", lambda: frame(10))
    cache.get("a", lambda: frame(10))  # "a" used last
    cache.get("c", lambda: frame(10))  # 3 entries > 2: "b" (least recent) goes
    assert len(cache) == 2 and cache.get("b", lambda: "recomputed") == "recomputed"
    cache = memo.Shared(entries=8, max_bytes=2_000, idle_s=60, clock=clock)
    cache.get("a", lambda: frame(100))  # 800 + 132 = 932 B
    cache.get("b", lambda: frame(100))  # 1,864 B in all: both kept
    cache.get("c", lambda: frame(100))  # 2,796 B > 2,000: "a" goes
    assert len(cache) == 2 and cache.held_bytes() == 2 * 932
    big = cache.get("d", lambda: frame(1_000))  # 8,132 B > max_bytes: returned, not kept
    assert len(big) == 1_000 and len(cache) == 2


def test_the_timer_empties_an_unused_cache_and_then_stops():
    cache = memo.Shared(entries=2, max_bytes=10**6, idle_s=0.05)
    cache.get("k", lambda: frame(1))
    assert cache._timer is not None and cache._timer.is_alive()
    deadline = time.monotonic() + 5
    while (len(cache) or cache._timer is not None) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(cache) == 0 and cache._timer is None  # nothing kept, no thread left
    cache.get("k", lambda: frame(1))  # a new entry starts a new timer
    assert cache._timer is not None and cache._timer.is_alive()


def test_the_planner_shares_one_grid_between_sessions_and_keeps_none_in_session_state():
    plan_inputs.GRIDS.purge()
    before = len(plan_inputs.GRIDS)
    sessions = []
    for _ in range(2):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.switch_page("pages/plan.py").run()
        assert not at.exception
        sessions.append(at)
    assert len(plan_inputs.GRIDS) <= before + 1  # the second session's grid was the first's
    for at in sessions:
        for key, value in at.session_state.items():
            held = value if isinstance(value, tuple) else (value,)
            assert not any(isinstance(v, pd.DataFrame) for v in held), key


PROBE = textwrap.dedent(
    """
    import sys
    import numpy as np
    from ui.core import heap

    def rss_mib():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024

    if sys.argv[1] == "on":
        assert heap.return_freed_arrays()
    big = np.ones(1 << 20)  # 8 MiB, then freed: glibc raises its threshold to 8 MiB
    del big
    arrays, small = [], []
    for _ in range(100):  # 2 MiB arrays between small long-lived blocks (2 kB, from the heap)
        arrays.append(np.ones(1 << 18))
        small.append(bytearray(2_000))
    peak = rss_mib()
    del arrays
    print(peak - rss_mib())
    """
)


def test_freed_arrays_go_back_to_the_operating_system():
    def freed(mode: str) -> float:  # MiB returned when 200 MiB of arrays are freed
        run = [sys.executable, "-c", PROBE, mode]
        out = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, check=True, timeout=60)
        return float(out.stdout)

    assert freed("off") < 20  # glibc's default: the 200 MiB stay with the process
    assert freed("on") > 180  # 2 MiB arrays, over the fixed 1 MiB threshold: returned


THREAD_PROBE = textwrap.dedent(
    """
    import threading
    import numpy as np
    from ui.core import heap

    def rss_mib():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024

    heap.return_freed_arrays()
    kept = {}

    def rerun():  # as a script thread: its own glibc arena
        arrays, small = [], []
        for _ in range(400):  # 512 kB arrays (under the 1 MiB threshold: from the arena's
            arrays.append(np.ones(1 << 16))  # heap), between small long-lived blocks
            small.append(bytearray(2_000))
        kept["peak"], kept["small"] = rss_mib(), small

    thread = threading.Thread(target=rerun)
    thread.start()
    thread.join()
    freed = kept["peak"] - rss_mib()
    heap.trim()
    print(freed, kept["peak"] - rss_mib())
    """
)


def test_the_heap_trim_returns_what_a_script_thread_freed():
    """200 MiB of arrays freed in a thread stay with its arena until trim hands them back."""
    run = [sys.executable, "-c", THREAD_PROBE]
    out = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, check=True, timeout=60)
    before_trim, after_trim = map(float, out.stdout.split())
    assert before_trim < 20 and after_trim > 180


def test_the_planner_keys_its_grids_by_what_the_catalogue_is_loaded_from(tmp_path, monkeypatch):
    """A shared grid outlives the catalogue object it was computed from, so its key is the
    catalogue's files and their stamps (an object's id can be reused by the next one)."""
    from ui.core import frame

    team = tmp_path / "team.toml"
    team.write_text("# no entries\n")
    monkeypatch.setenv(frame.ENV_VAR, str(team))
    first = frame.catalog_key()
    assert first == frame.catalog_key()
    team.write_text("# no entries, edited\n")  # another size: another stamp
    assert frame.catalog_key() != first
    monkeypatch.setenv(frame.ENV_VAR, "")
    assert frame.catalog_key() != first
