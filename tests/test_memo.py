"""The server's memory after its users leave: the planner's grids, /train's searches and /load's
simulations in shared caches that empty themselves (ui/runtime/memo.py), never in session state,
at most one /train search computed at a time, and freed arrays returned to the operating system
(ui/runtime/heap.py)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT
from ui.load import run as load_run
from ui.plan import inputs as plan_inputs
from ui.runtime import memo
from ui.train import run as train_run


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


def test_caches_in_one_pool_keep_their_bytes_together_within_it_least_recent_first():
    clock = Clock()
    pool = memo.Pool(max_bytes=2_000)
    grids, searches = (
        memo.Shared(entries=8, max_bytes=2_000, idle_s=60, clock=clock, pool=pool) for _ in range(2)
    )
    grids.get("a", lambda: frame(100))  # 932 B (800 of values + 132 of index)
    clock.now = 1.0
    searches.get("x", lambda: frame(100))  # 1,864 B in the pool: both kept
    clock.now = 2.0
    b = grids.get("b", lambda: frame(100))  # 2,796 B > 2,000: the pool's oldest, "a", goes
    assert pool.held_bytes() == 2 * 932 and len(grids) == 1 and len(searches) == 1
    clock.now = 3.0
    searches.get("y", lambda: frame(100))  # over again: "x" (used at 1.0) goes, not "b" (2.0)
    assert grids.get("b", lambda: "recomputed") is b
    assert searches.get("x", lambda: "recomputed") == "recomputed"
    assert pool.held_bytes() <= 2_000
    grids.purge(), searches.purge()
    clock.now = 100.0  # 60 s unused: the caches empty and the pool holds nothing
    assert grids.purge() == 0 and searches.purge() == 0 and pool.held_bytes() == 0


def test_the_heavy_pages_share_one_pool():
    pooled = {id(c) for c in memo.HEAVY_BYTES._caches}
    assert {id(plan_inputs.GRIDS), id(train_run.SEARCHES), id(load_run.SIMULATED)} <= pooled
    assert memo.HEAVY_BYTES.max_bytes == 128 * 2**20


def test_the_timer_empties_an_unused_cache_and_then_stops():
    cache = memo.Shared(entries=2, max_bytes=10**6, idle_s=0.05)
    cache.get("k", lambda: frame(1))
    assert cache._timer is not None and cache._timer.is_alive()
    # a wait, not a timing check: on a busy machine the purge's heap trim (malloc_trim of this
    # whole process) has taken over 5 s, so the loop allows 60 and ends as soon as it holds
    deadline = time.monotonic() + 60
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
    from ui.runtime import heap

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
    from ui.runtime import heap

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


CYCLE_PROBE = textwrap.dedent(
    """
    import gc
    import numpy as np
    from ui.runtime import heap

    def rss_mib():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024

    heap.return_freed_arrays()
    gc.disable()  # as on an idle server: no allocations, so no collection of its own

    class Session:  # refers to itself, as a lapsed session or a frame with cached columns does
        def __init__(self):
            self.me, self.arrays = self, [np.ones(1 << 16) for _ in range(400)]  # 200 MiB

    Session()  # dropped at once: only the collector can free it
    before = rss_mib()
    heap.trim()
    print(before - rss_mib())
    """
)


def test_the_heap_trim_frees_what_is_held_only_by_a_reference_cycle():
    """200 MiB in 512 kB arrays held by a dropped object that refers to itself: trim collects
    it and returns the pages (malloc_trim alone returns nothing, the arrays still being live)."""
    run = [sys.executable, "-c", CYCLE_PROBE]
    out = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, check=True, timeout=60)
    assert float(out.stdout) > 180


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


# --- one heavy computation at a time, the decorator, result sizes --------------------------------


def test_one_slot_computes_one_result_at_a_time_and_a_waiter_takes_the_result():
    """Three threads on two caches sharing one slot (as /train's and /load's): two keys
    computed one after the other (never both at once), and the third, asking for a key being
    computed, gets that result without computing it again."""
    slots = memo.Slots(1)
    searches = memo.Shared(entries=8, max_bytes=10**6, idle_s=60, slots=slots)
    simulations = memo.Shared(entries=8, max_bytes=10**6, idle_s=60, slots=slots)
    running, most, calls = [0], [0], []
    lock = threading.Lock()

    def compute(name):
        def run():
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
                calls.append(name)
            time.sleep(0.2)
            with lock:
                running[0] -= 1
            return frame(10)

        return run

    got = {}
    asks = [(searches, "a"), (simulations, "b"), (searches, "a")]
    threads = [
        threading.Thread(target=lambda c=c, k=k, i=i: got.__setitem__(i, c.get(k, compute(k))))
        for i, (c, k) in enumerate(asks)
    ]
    for t in threads:
        t.start()
        time.sleep(0.02)  # in this order
    for t in threads:
        t.join(timeout=10)
    assert most[0] == 1  # never two computations at once
    assert sorted(calls) == ["a", "b"]  # "a" computed once
    assert got[0] is got[2]


def test_a_computation_holding_the_slot_may_use_the_cache_again():
    """/load's checks call its cached run: with one slot, the inner call must not wait for the
    slot its own thread holds."""
    cache = memo.Shared(entries=8, max_bytes=10**6, idle_s=60, slots=memo.Slots(1))
    done = []
    outer = threading.Thread(
        target=lambda: done.append(cache.get("outer", lambda: cache.get("inner", lambda: 7)))
    )
    outer.start()
    outer.join(timeout=5)
    assert done == [7] and not outer.is_alive()
    assert cache.get("inner", lambda: 8) == 7  # the inner result was kept too


def test_the_decorator_keys_by_the_arguments_however_they_are_passed():
    cache, calls = memo.Shared(entries=8, max_bytes=10**6, idle_s=60), []

    @memo.cached(cache)
    def grid(rows: int, scale: float = 1.0) -> pd.DataFrame:
        calls.append((rows, scale))
        return frame(rows) * scale

    first = grid(3)
    assert grid(rows=3) is first and grid(3, scale=1.0) is first  # one call, three spellings
    assert grid(3, 2.0) is not first
    assert calls == [(3, 1.0), (3, 2.0)]

    @memo.cached(cache)
    def refuse(n: int) -> int:
        calls.append(n)
        raise ValueError("too big")

    for _ in range(2):  # an exception is not kept: each call tries again
        with pytest.raises(ValueError, match="too big"):
            refuse(1)
    assert calls[-2:] == [1, 1]


def test_a_file_is_keyed_by_its_digest_and_a_scenario_by_its_text():
    data = b"arrival_s,input_tokens,output_tokens\n" * 30_000  # 1.1 MB
    key = memo.fingerprint(data)
    assert key == memo.fingerprint(bytes(data)) and len(key) == 64  # not a 1 MB string
    assert memo.fingerprint(data + b"0") != key
    w = engine.Workload(input_tokens=512, output_tokens=128, arrivals=engine.OpenLoop(2.0))
    assert memo.fingerprint(w) == repr(w)


def test_the_size_of_a_result_counts_its_arrays_frames_and_series():
    @dataclasses.dataclass(frozen=True)
    class Run:  # as engine.LoadResult: values, per-request arrays, time series
        values: dict
        per_request: dict
        timeseries: dict

    run = Run(
        values={"requests": 3},
        per_request={"ttft_s": np.zeros(1000), "e2e_s": np.zeros(1000)},  # 2 x 8,000 B
        timeseries={"time_s": np.zeros(500)},  # 4,000 B
    )
    nbytes = memo.result_bytes(run)
    assert 20_000 <= nbytes <= 20_000 + 8 * memo.NOMINAL_BYTES
    assert memo.result_bytes(frame(100)) == 800 + 132  # 8 B a row + the index
    assert memo.result_bytes(frame(100)["x"]) == 800 + 132
    assert memo.result_bytes("text") == memo.NOMINAL_BYTES


def test_train_and_load_share_their_results_between_sessions_and_keep_none_in_session_state(
    monkeypatch,
):
    """Two sessions on /train and on /load's defaults: the second computes nothing the first
    computed (the caches hold no more entries), and neither keeps a frame in session state.

    The caches' idle purge (entries unused for 60 s) is held off here: on a busy machine one
    session's run can take longer than that, and then the purge thread, not the sharing,
    decides what the second session finds (the purge itself is tested on a fake clock:
    test_entries_unused_for_idle_seconds_are_purged_and_used_ones_kept)."""
    for page, cache in (("train", train_run.SEARCHES), ("load", load_run.SIMULATED)):
        monkeypatch.setattr(cache, "purge", cache.__len__)
        before, sessions = None, []
        for _ in range(2):
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
            at.switch_page(f"pages/{page}.py").run()
            assert not at.exception, [e.message for e in at.exception]
            before = len(cache) if before is None else before
            sessions.append(at)
        assert before > 0 and len(cache) == before, page  # the second session's were the first's
        for at in sessions:
            for key, value in at.session_state.items():
                held = value if isinstance(value, tuple) else (value,)
                assert not any(isinstance(v, pd.DataFrame) for v in held), (page, key)


@pytest.mark.parametrize("rank_by", ["tokens_per_s", "mfu", "cost"])
def test_the_scaling_curve_searched_count_by_count_is_the_search_over_every_count(rank_by):
    """/train's scaling curve runs one search per GPU count (a seventh of the memory): the
    same rows as one search over every count, best of each count first, a count where nothing
    fits left out (1 GPU cannot hold a 70B model's training state)."""
    cat = engine.load_catalog()
    run = engine.TrainRun(
        cat.models["Llama-3.1-70B"],
        cat.hardware["H100"],
        gpus=64,
        global_batch_size=512,
        seq_len=8192,
    )
    space = engine.LayoutSpace(
        tp=[1, 2, 4, 8], pp=[1, 2, 4, 8], vp=[1, 2], micro_batch_size=[1, 2, 4], zero=[0, 1, 3]
    )
    curve = (1, 16, 64, 256)
    joint = engine.train_search(dataclasses.replace(run, gpus=curve), space, rank_by=rank_by)
    joint = joint.groupby("gpus", sort=True).head(1).sort_values("gpus").reset_index(drop=True)
    each = train_run.scaling(run, space, rank_by=rank_by, curve=curve)
    pd.testing.assert_frame_equal(each, joint)
    assert 1 not in set(each["gpus"]) and len(each) == 3
