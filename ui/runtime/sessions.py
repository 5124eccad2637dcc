"""Ending the sessions Streamlit lets lapse: the server's memory after its users have left.

Streamlit keeps a disconnected session for `server.disconnectedSessionTTL` seconds (120) so its
browser can reconnect. When that time is up, its session store lets the entry lapse but never
shuts the session down (Streamlit 1.67, runtime/memory_session_storage.py): the runtime's file
managers keep the session's last references, so every CSV button's deferred callable, and the
DataFrame it would write, stays for the life of the process. After a burst of 16 clients that
was 40 MiB of DataFrames, kept after every client had gone (bench/memory_burst.py).

`end_lapsed_sessions` releases what lapsed sessions hold, as Streamlit does for a closed one, and
`start` runs it on a daemon thread. It reads two Streamlit internals (the session manager's
store and its lock): where they are not as expected it does nothing, and
tests/test_browser_sessions.py checks, on a real server, that a lapsed session is ended.
"""

from __future__ import annotations

import functools
import threading
import time

from streamlit import config, runtime
from streamlit.logger import get_logger

from ui.runtime import heap

LOG = get_logger(__name__)
PERIOD_S = 30.0  # at most this long between two looks (shorter if the TTL is)


def end_lapsed_sessions() -> int:
    """Release what the disconnected sessions whose reconnection time is up still hold; how
    many. Their references are cleared one by one and the files no session uses are collected
    once (as after one script run): AppSession.shutdown collects once per session, and a
    download file Streamlit has just written for a live session is deleted at the second
    collection before the browser fetches it (a /load CSV download failed that way)."""
    if not runtime.exists():
        return 0
    rt = runtime.get_instance()
    manager = getattr(rt, "_session_mgr", None)
    store = getattr(getattr(manager, "_session_storage", None), "_cache", None)
    lock = getattr(manager, "_storage_lock", None)
    if lock is None or not callable(getattr(store, "expire", None)):
        return 0
    with lock:  # the lock the manager holds while it saves or resumes a session
        lapsed = store.expire()  # [(session id, SessionInfo)]: no longer resumable
    for session_id, _ in lapsed:  # its downloads, table sources and uploads
        rt.media_file_mgr.clear_session_refs(session_id)
        rt.dataframe_source_mgr.clear_all_for_session(session_id)
        rt.uploaded_file_mgr.remove_session_files(session_id)
    if lapsed:
        rt.media_file_mgr.remove_orphaned_files()
        heap.trim()
        LOG.info("Ended %d disconnected session(s) past their reconnection time", len(lapsed))
    return len(lapsed)


@functools.cache
def start() -> threading.Thread:
    """The daemon thread that ends lapsed sessions (once per process)."""
    ttl = float(config.get_option("server.disconnectedSessionTTL") or PERIOD_S)
    period = max(1.0, min(PERIOD_S, ttl / 2))

    def run() -> None:
        while True:
            time.sleep(period)
            try:
                end_lapsed_sessions()
            except Exception:  # never let the sweeper die; say why
                LOG.exception("Ending lapsed sessions failed")

    thread = threading.Thread(target=run, name="end-lapsed-sessions", daemon=True)
    thread.start()
    return thread
