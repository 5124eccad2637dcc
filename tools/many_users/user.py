"""One simulated user of the load: a browser context on its own share link, checked each step."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time

from tools.many_users.config import (
    BATCH_LABEL,
    CHECK_PATIENCE_S,
    ManyUsersConfig,
    Report,
    Scenario,
    compare,
)
from tools.many_users.js import IDLE_JS, SHOWN_JS, STATE_JS, WATCH_JS


class User:
    """One simulated user: its own browser context, page, websocket and Streamlit session."""

    def __init__(self, sc: Scenario, config: ManyUsersConfig, report: Report):
        self.sc, self.config, self.report = sc, config, report
        self.context = self.page = None
        self.batch = sc.batches[0]
        self.ok = False  # every check so far passed
        self.rng = random.Random(sc.index)
        self._sent_at: float | None = None  # when the last rerun request left the browser

    async def open(self, browser, base_url: str) -> None:
        """Open the share link; its first numbers must be this user's."""
        await self._guard("first load", self._open(browser, base_url))

    async def change_batches(self) -> None:
        """Type each next batch size; after each, this user's new numbers must show."""
        if self.ok:
            await self._guard("batch changes", self._change_batches())

    async def close(self) -> None:
        if self.context is not None:
            with contextlib.suppress(Exception):
                await self.context.close()

    async def _open(self, browser, base_url: str) -> None:
        width, height = self.config.viewport
        self.context = await browser.new_context(
            viewport={"width": width, "height": height}, reduced_motion="reduce"
        )
        self.context.set_default_timeout(self.config.step_timeout_s * 1e3)
        await self.context.add_init_script(WATCH_JS)
        self.page = await self.context.new_page()
        self.page.on("websocket", self._on_websocket)
        start = time.perf_counter()
        await self.page.goto(base_url + self.sc.link(), wait_until="domcontentloaded")
        await self._until_shown(self.batch)
        self.report.load_s.append(time.perf_counter() - start)
        self.ok = await self._check("first load")

    async def _change_batches(self) -> None:
        box = self.page.get_by_label(BATCH_LABEL)
        for batch in self.sc.batches[1:]:
            await asyncio.sleep(self.rng.uniform(*self.config.think_s))
            self.batch = batch
            start = time.perf_counter()
            await box.fill(str(batch))
            await box.press("Enter")
            await self._until_shown(batch)
            self.report.rerun_s.append(time.perf_counter() - start)
            if not await self._check(f"batch {batch}"):
                self.ok = False
                return
        self.report.sessions_done += 1

    async def _until_shown(self, batch: int) -> None:
        """Until `batch`'s caption and latency are drawn with the script idle."""
        want = self.sc.expected(batch)
        timeout = self.config.step_timeout_s * 1e3
        await self.page.wait_for_function(
            SHOWN_JS, arg=[want["caption"], want["latency"]], timeout=timeout, polling=100
        )

    async def _check(self, what: str) -> bool:
        """The page must show this user's scenario at its current batch.

        A wrong value fails at once (that is what a leak looks like). Two things are waited
        for, up to CHECK_PATIENCE_S: an element not drawn yet, and the batch field showing the
        widget's default "1" (Streamlit draws a number input with its default, then the value
        from session state; under load the default stays visible for seconds). Both are
        counted in the report.
        """
        await asyncio.sleep(self.config.settle_s)
        await self.page.wait_for_function(IDLE_JS, timeout=self.config.step_timeout_s * 1e3)
        began = time.perf_counter()
        waited = set()
        while True:
            state = await self.page.evaluate(STATE_JS)
            wrong, pending = self._compare(state)
            if wrong or not pending or time.perf_counter() - began > CHECK_PATIENCE_S:
                break
            waited.update(pending)
            await asyncio.sleep(0.25)
        self.report.late_elements += "missing" in " ".join(waited)
        self.report.default_flicker += any("default" in w for w in waited)
        if waited:
            self.report.pending_max_s = max(self.report.pending_max_s, time.perf_counter() - began)
        if wrong or pending:
            self.report.failures.append(
                f"user {self.sc.index} ({self.sc.link()}) {what}: " + "; ".join(wrong + pending)
            )
            return False
        self.report.verified += 1
        return True

    def _compare(self, state: dict) -> tuple[list[str], list[str]]:
        return compare(self.sc, self.batch, state)

    async def _guard(self, what: str, step) -> None:
        """Run `step`; a timeout or browser error is recorded with what the page showed."""
        try:
            await step
        except Exception as exc:
            self.ok = False
            state = ""
            with contextlib.suppress(Exception):
                state = f" — page showed {await self.page.evaluate(STATE_JS)}"
            self.report.failures.append(
                f"user {self.sc.index} ({self.sc.link()}) {what}, at batch {self.batch}: "
                f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}{state}"
            )

    # The websocket, read at the protocol level: session ids and rerun round trips.
    def _on_websocket(self, ws) -> None:
        if "_stcore/stream" in ws.url:
            ws.on("framesent", self._on_sent)
            ws.on("framereceived", self._on_received)

    def _on_sent(self, payload: str | bytes) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        with contextlib.suppress(Exception):
            msg.ParseFromString(payload if isinstance(payload, bytes) else payload.encode())
            if msg.WhichOneof("type") == "rerun_script":
                self._sent_at = time.perf_counter()
                self.report.frames["rerun requests sent"] += 1

    def _on_received(self, payload: str | bytes) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = ForwardMsg()
        try:
            msg.ParseFromString(payload if isinstance(payload, bytes) else payload.encode())
        except Exception:
            return
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.report.session_ids.add(msg.new_session.initialize.session_id)
        elif kind == "script_finished":
            status = ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)
            self.report.frames[f"script runs {status.lower()}"] += 1
            if msg.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                self.report.failures.append(f"user {self.sc.index}: script compile error")
            elif msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY and self._sent_at:
                took = time.perf_counter() - self._sent_at
                first = self.batch == self.sc.batches[0]
                (self.report.server_load_s if first else self.report.server_rerun_s).append(took)
                self._sent_at = None
