"""A session Streamlit lets lapse is shut down (ui/runtime/sessions.py).

A server whose disconnected sessions may reconnect for 2 s serves /plan to a real Chromium; the
browser leaves. Streamlit's store then lets the session lapse without shutting it down (its CSV
button's callable, and the planner's grid it holds, stayed for the life of the process); the
app's sweeper must end it within a few of its periods and say so in the server's log. This also
guards the two Streamlit internals the sweeper reads: if they move, nothing is ended and this
fails.
"""

from __future__ import annotations

import threading
import time

import pytest

from tests.conftest import start_fresh_server, stop_server, wait_idle

pytestmark = pytest.mark.browser
TTL_S = 2  # server.disconnectedSessionTTL of this server: the sweeper looks every 1 s


ENDED = "Ended 1 disconnected session(s) past their reconnection time"


def test_a_lapsed_session_is_shut_down(tab):
    proc, url = start_fresh_server({"STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": str(TTL_S)})
    log: list[str] = []  # the server's log, read as it is written (the pipe never fills)
    reader = threading.Thread(
        target=lambda: log.extend(line.decode(errors="replace") for line in proc.stderr),
        daemon=True,
    )
    reader.start()
    try:
        page = tab.context.new_page()  # a tab of its own, in the worker's browser
        page.goto(f"{url}/plan")
        wait_idle(page)
        # the grid was computed: its chart comes in after the script's first elements (on a
        # busy machine, after wait_idle's quiet spell), so wait for the chart itself
        page.wait_for_selector(".js-plotly-plot", timeout=120_000)
        page.close()  # the user leaves: the session is kept TTL_S s for a reconnect
        left = time.monotonic()
        # past the reconnection time and a few sweeper periods at most (it used to sleep 6 s)
        while time.monotonic() < left + TTL_S + 4 and not any(ENDED in line for line in log):
            time.sleep(0.2)
        assert time.monotonic() - left >= TTL_S  # never before its reconnection time
    finally:
        stop_server(proc)
        reader.join(timeout=5)
    assert any(ENDED in line for line in log), "".join(log)[-2000:]
