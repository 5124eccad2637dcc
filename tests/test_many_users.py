"""Many users at once: 20 concurrent sessions against one server, 4 of them in Chromium.

Every simulated user has its own Streamlit session (the test checks that the server handed out
20 different session ids) and opens a different share link of the single-solve page; once all
20 are open, each types a new batch size into the page several times, with a short random pause
between changes, all users at once. After the first load and after every change the page must
show *that user's* scenario: the title names its model and accelerator, the caption its batch
and precision, the address bar its own parameters, the batch field its value, and the Latency
and Bottleneck metrics equal `engine.solve` for it, formatted as the page formats them. Every
user holds a different batch in every round, so a value leaking from one session into another
fails.

Four users are Chromium contexts driven by Playwright's async API (each with its own cookies,
storage and websocket), spread over the arrival order; they check what a browser draws under
the load. The other sixteen are protocol clients (tools/tab.py): each speaks the browser's own
websocket protocol, holds and sends back every widget value as a browser tab does, and reads
the same checks off the elements the server sends, so the server does the same work for them
as for a browser tab. Drawing a Streamlit page costs a browser far more CPU than the server
spends running its script (here ~10 CPU s per first load and ~1.5 per rerun in Chromium,
against ~0.2 in the server): twenty browsers on two cores measured mostly themselves and took
three minutes of the suite; `bench/many_users_report.py --browsers 20` still runs that load.

Figures (`pytest -s` prints them; each is also a `record_property` in the JUnit XML):
- rerun latency seen by the Chromium users: from the batch change to the new numbers drawn with
  the script idle, p50/p95/max; the first load likewise;
- rerun round trip, every user: from the rerun request leaving the client to the server's
  "script finished" message (the server's work and queueing, without the browser's drawing);
- the server's memory: VmRSS before, sampled peak VmRSS and the kernel's VmHWM, from
  /proc/<pid>/status of the `streamlit run` process; its CPU seconds and the machine's load.

One Streamlit process runs all sessions' scripts under one GIL, so 20 simultaneous reruns are
served one after another: the round trip is mostly that queue.

The harness lives in tools/ (tools/many_users/), shared with the benchmark that runs the same
load with more users, browsers, rounds or pauses: `.venv/bin/python bench/many_users_report.py
-h`.
"""

from __future__ import annotations

import itertools
from urllib.parse import urlencode

import pytest
from streamlit.proto.Heading_pb2 import Heading
from streamlit.proto.Markdown_pb2 import Markdown
from streamlit.proto.Metric_pb2 import Metric
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.WidgetStates_pb2 import WidgetState

from tools.many_users.client import page_state
from tools.many_users.config import BATCH_LABEL, ManyUsersConfig, Scenario, compare, scenarios
from tools.many_users.run import run_many_users
from tools.many_users.user import User
from tools.server import CHROMIUM
from tools.tab import Element, RunResult, Tab

pytestmark = pytest.mark.browser

# Bounds asserted by the test: guards against a stuck or pathologically slow rerun, wide
# enough for the load on 2 busy cores. Measured with 20 browsers (2 slow cores shared with other
# work, load average 4-40): client p95 22-46 s, round trip p95 9-19 s, VmHWM 188-195 MB; with 4
# browsers and 16 protocol clients on a quiet machine: client p95 4.7 s, round trip p95 3.9 s.
P95_BOUND_S = 60.0  # client-observed rerun latency
SERVER_P95_BOUND_S = 30.0  # websocket round trip of a rerun
PEAK_RSS_BOUND_MB = 2048.0


def test_scenarios_are_distinguishable():
    """The load only proves isolation if every user's states differ from the others'."""
    config = ManyUsersConfig()
    users = scenarios(config.sessions, config.rounds)
    assert len({(u.model, u.hardware, u.precision) for u in users}) == config.sessions
    for r in range(config.rounds + 1):
        assert len({u.batches[r] for u in users}) == config.sessions
    for u in users:
        shown = [u.expected(b)["latency"] for b in u.batches]
        assert all(a != b for a, b in itertools.pairwise(shown)), (u, shown)


def test_the_check_catches_another_users_numbers():
    """The page check itself: its own state passes, another user's values fail, a field still
    showing the widget default or an element not drawn yet is waited for, errors fail."""
    me, other = scenarios(2, 1)
    user = User(me, ManyUsersConfig(), None)
    user.batch = me.batches[1]

    def state(sc: Scenario, batch: int) -> dict:
        want = sc.expected(batch)
        query = {"model": sc.model, "hardware": sc.hardware, "batch": batch}
        query |= {"precision": sc.precision, "efficiency": 0.5}
        return {
            "title": want["title"],
            "caption": want["caption"] + " FLOPs as catalogued",
            "latency": want["latency"],
            "bottleneck": want["bottleneck"],
            "batch_input": str(batch),
            "search": "?" + urlencode(query),
            "errors": [],
        }

    mine, theirs = state(me, user.batch), state(other, other.batches[1])
    assert user._compare(mine) == ([], [])
    wrong, _ = user._compare(theirs)
    assert {w.split(" shows")[0] for w in wrong} >= {"title", "latency", "batch field", "URL batch"}
    wrong, _ = user._compare(mine | {"search": theirs["search"]})
    urls = {f"URL {key}" for key in ("model", "hardware", "batch", "precision")}
    assert {w.split(" shows")[0] for w in wrong} == urls
    wrong, pending = user._compare(mine | {"latency": None, "batch_input": "1"})
    assert not wrong and len(pending) == 2
    assert user._compare(mine | {"batch_input": "2"})[0] == [
        f"batch field shows '2', expected '{user.batch}'"
    ]
    assert user._compare(mine | {"errors": ["stException: Traceback"]})[0]


def test_a_protocol_client_reads_its_page_and_catches_another_users_numbers():
    """The protocol client's check: the title, caption, metrics and batch field read off the
    elements a run sent (sidebar elements and other captions ignored), the query string the
    server set; another user's elements fail, an element not sent fails, an error fails."""
    me, other = scenarios(2, 1)

    def run(sc: Scenario, batch: int, drop: str = "", error: str = "") -> tuple[Tab, RunResult]:
        want = sc.expected(batch)
        field = NumberInput(id="batch-id", label=BATCH_LABEL, default=1)
        sent = {
            "sidebar": Element((1, 0), "heading", Heading(tag="h1", body="Roofline Explorer")),
            "title": Element((0, 0), "heading", Heading(tag="h1", body=want["title"])),
            "other caption": Element((0, 1), "markdown", caption("Sources: ...")),
            "caption": Element((0, 2), "markdown", caption(want["caption"] + " FLOPs as …")),
            "latency": Element((0, 3, 1), "metric", Metric(label="Latency", body=want["latency"])),
            "bottleneck": Element(
                (0, 3, 0), "metric", Metric(label="Bottleneck", body=want["bottleneck"])
            ),
            "field": Element((1, 2), "number_input", field),
        }
        tab = Tab("http://127.0.0.1:1", "solve")
        tab.values = {"batch-id": WidgetState(id="batch-id", int_value=batch)}
        query = urlencode({"model": sc.model, "hardware": sc.hardware, "batch": batch})
        query += "&" + urlencode({"precision": sc.precision, "efficiency": 0.5})
        elements = tuple(e for name, e in sent.items() if name != drop)
        return tab, RunResult(seconds=0.1, query_string=query, error=error, elements=elements)

    assert compare(me, me.batches[1], page_state(*run(me, me.batches[1]))) == ([], [])
    wrong, _ = compare(me, me.batches[1], page_state(*run(other, other.batches[1])))
    assert {w.split(" shows")[0] for w in wrong} >= {"title", "latency", "batch field", "URL batch"}
    for drop in ("title", "caption", "latency", "bottleneck", "field"):
        wrong, missing = compare(me, me.batches[1], page_state(*run(me, me.batches[1], drop)))
        assert not wrong and len(missing) == 1, drop
    state = page_state(*run(me, me.batches[1], error="exception on the page: boom"))
    assert compare(me, me.batches[1], state)[0] == [
        "errors on the page: ['exception on the page: boom']"
    ]


def caption(body: str) -> Markdown:
    return Markdown(body=body, element_type=Markdown.CAPTION)


@pytest.mark.filterwarnings("ignore:record_property is incompatible with junit_family")
def test_many_concurrent_sessions_each_see_their_own_numbers(record_property):
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    config = ManyUsersConfig()
    report = run_many_users(config)
    print("\n" + report.text())
    for key, value in report.figures().items():
        record_property(f"load_{key}", value)

    n, browsers = config.sessions, config.browsers
    assert 0 < browsers < n
    assert not report.failures, "\n".join(report.failures)
    assert not report.server_errors, "\n".join(report.server_errors)
    assert len(report.session_ids) == n, "each user must be its own server session"
    assert report.concurrent_sessions == n
    assert report.sessions_done == n
    assert report.verified == n * (config.rounds + 1)
    assert len(report.rerun_s) == browsers * config.rounds  # drawn and checked in Chromium
    assert report.protocol_reruns == (n - browsers) * config.rounds
    assert len(report.server_rerun_s) >= 0.9 * n * config.rounds, report.text()
    f = report.figures()
    assert f["rerun_p95_s"] < P95_BOUND_S, report.text()
    assert f["server_rerun_p95_s"] < SERVER_P95_BOUND_S, report.text()
    assert f["server_vmhwm_mb"] < PEAK_RSS_BOUND_MB, report.text()
