"""One simulated user without a browser: its own Streamlit session over the browser's protocol.

The same user as tools/many_users/user.py (its share link, its batch changes, the same check
after each step), but its session is a `tools.tab.Tab`: one WebSocket carrying the messages a
browser tab sends and receives, every widget value held and sent back as a browser does. The
server does the same work for it as for a browser tab. The check reads the page from the run's
elements: the title (the main area's h1), the caption starting "Batch ", the Latency and
Bottleneck metrics, the batch field's value (the one the tab holds and sends back), the query
string the server set for the address bar, and any exception drawn.
"""

from __future__ import annotations

import asyncio
import contextlib
import random

from streamlit.proto.Markdown_pb2 import Markdown
from streamlit.proto.WidgetStates_pb2 import WidgetState

from tools.many_users.config import BATCH_LABEL, ManyUsersConfig, Report, Scenario, compare
from tools.tab import Element, RunResult, Tab

MAIN = 0  # the first index of a main-area element's delta path (1: the sidebar)


def page_state(tab: Tab, result: RunResult) -> dict:
    """What the page shows after a run, in the form of the browsers' snapshot (js.STATE_JS)."""
    elements = [e for e in result.elements if e.path[0] == MAIN]
    titles = [e.proto.body for e in elements if e.kind == "heading" and e.proto.tag == "h1"]
    captions = [
        e.proto.body
        for e in elements
        if e.kind == "markdown" and e.proto.element_type == Markdown.CAPTION
    ]
    metrics = {e.proto.label: e.proto.body for e in elements if e.kind == "metric"}
    field = batch_field(result.elements)
    held = tab.values.get(field) if field else None
    return {
        "title": titles[0] if titles else None,
        "caption": next((c for c in captions if c.startswith("Batch ")), None),
        "latency": metrics.get("Latency"),
        "bottleneck": metrics.get("Bottleneck"),
        "batch_input": str(held.int_value) if held is not None else None,
        "search": "?" + result.query_string,
        "errors": [result.error] if result.error else [],
    }


def batch_field(elements: tuple[Element, ...]) -> str | None:
    """The widget id of the batch size field among a run's elements."""
    return next(
        (e.proto.id for e in elements if e.kind == "number_input" and e.proto.label == BATCH_LABEL),
        None,
    )


class ProtocolUser:
    """One simulated user: its own WebSocket and Streamlit session, checked after each step."""

    def __init__(self, sc: Scenario, config: ManyUsersConfig, report: Report):
        self.sc, self.config, self.report = sc, config, report
        self.tab: Tab | None = None
        self.batch = sc.batches[0]
        self.ok = False  # every check so far passed
        self.rng = random.Random(sc.index)

    async def open(self, _browser, base_url: str) -> None:
        """Open the share link (no browser: `_browser` is unused); its first numbers must be
        this user's."""
        await self._guard("first load", self._open(base_url))

    async def change_batches(self) -> None:
        """Type each next batch size; after each, this user's new numbers must show."""
        if self.ok:
            await self._guard("batch changes", self._change_batches())

    async def _open(self, base_url: str) -> None:
        path, _, query = self.sc.link().lstrip("/").partition("?")
        self.tab = Tab(base_url, path, query)
        self.report.frames["rerun requests sent"] += 1
        result = await self.tab.open(self.config.step_timeout_s)
        self._count(result, self.report.server_load_s)
        self.ok = self._check(result, "first load")

    async def _change_batches(self) -> None:
        for batch in self.sc.batches[1:]:
            await asyncio.sleep(self.rng.uniform(*self.config.think_s))
            self.batch = batch
            change = WidgetState(id=batch_field(self.tab.elements), int_value=batch)
            self.report.frames["rerun requests sent"] += 1
            result = await self.tab.run(change, self.config.step_timeout_s)
            self._count(result, self.report.server_rerun_s)
            if not self._check(result, f"batch {batch}"):
                self.ok = False
                return
            self.report.protocol_reruns += 1
        self.report.sessions_done += 1

    async def close(self) -> None:
        if self.tab is not None:
            with contextlib.suppress(Exception):
                await self.tab.close()

    async def _guard(self, what: str, step) -> None:
        """Run `step`; a lost connection or any other error is recorded, with the batch."""
        try:
            await step
        except Exception as exc:
            self.ok = False
            first_line = (str(exc).splitlines() or [""])[0][:200]
            self.report.failures.append(
                f"user {self.sc.index} ({self.sc.link()}, protocol client) {what}, at batch "
                f"{self.batch}: {type(exc).__name__}: {first_line}"
            )

    def _count(self, result: RunResult, round_trips: list[float]) -> None:
        """The session id, the run's outcome and, for a clean run, its round trip."""
        if self.tab.session_id:
            self.report.session_ids.add(self.tab.session_id)
        if result.error:
            self.report.frames["script runs not finished cleanly"] += 1
        else:
            self.report.frames["script runs finished_successfully"] += 1
            round_trips.append(result.seconds)

    def _check(self, result: RunResult, what: str) -> bool:
        """The run must have drawn this user's scenario at its current batch: every element
        has arrived once the script has finished, so a missing one fails as a wrong one does."""
        wrong, pending = compare(self.sc, self.batch, page_state(self.tab, result))
        if wrong or pending:
            self.report.failures.append(
                f"user {self.sc.index} ({self.sc.link()}, protocol client) {what}: "
                + "; ".join(wrong + pending)
            )
            return False
        self.report.verified += 1
        return True
