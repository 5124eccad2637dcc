"""A light Streamlit client for bench/capacity.py: one session over the browser's own protocol.

A browser tab talks to a Streamlit server over one WebSocket at `/_stcore/stream`, carrying
protobuf messages: the tab sends a `BackMsg` (`rerun_script` with the URL's query string, the
page and the widget values) and the server answers with `ForwardMsg`s (new session, the page's
elements, query-string updates, ...) ending in `script_finished`. `Session` speaks exactly that,
with the protobuf classes that ship with Streamlit, so the server does the same work as for a
browser tab, while the client costs a few milliseconds per rerun instead of a browser's seconds
of drawing.

Only what a user changes is sent: the server keeps every other widget's value from the previous
run, as it does for a browser.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

CHOICE_WIDGETS = ("selectbox", "multiselect")
FINISHED_OK = "FINISHED_SUCCESSFULLY"


@dataclass(frozen=True)
class Widget:
    """A choice widget the page drew: its kind, id, label and option labels."""

    kind: str
    id: str
    label: str
    options: tuple[str, ...]


@dataclass(frozen=True)
class RunResult:
    """One script run as the client saw it.

    Attributes:
        seconds: from sending the BackMsg to receiving `script_finished`.
        query_string: the page's query string after the run (what the address bar would hold).
        error: empty if the run finished cleanly; else what went wrong.
    """

    seconds: float
    query_string: str
    error: str = ""


def change_for(widgets: list[Widget], user: int, turn: int) -> tuple[WidgetState | None, str]:
    """The widget value a user changes on its `turn`-th rerun, and a label for the report.

    The accelerator picker if the page has one (a selectbox cycles through the accelerators; a
    multiselect picks two neighbouring ones); else the first multiselect (one option); else the
    first selectbox; else nothing (a plain rerun, as the browser's "Rerun"). Users start at
    different options so they do not ask for the same scenarios at the same time.
    """
    ranked = sorted(
        (w for w in widgets if w.kind in CHOICE_WIDGETS and len(w.options) >= 2),
        key=lambda w: (not w.label.startswith("Accelerator"), w.kind != "multiselect"),
    )
    if not ranked:
        return None, "plain rerun (no inputs)"
    widget = ranked[0]
    n = len(widget.options)
    first = (user * 3 + turn + 1) % n
    state = WidgetState(id=widget.id)
    if widget.kind == "selectbox":
        state.string_value = widget.options[first]
    else:
        count = 2 if widget.label.startswith("Accelerator") else 1
        state.string_array_value.data.extend(widget.options[(first + i) % n] for i in range(count))
    return state, f"{widget.label} ({widget.kind})"


class Session:
    """One simulated browser tab on one page of a Streamlit server."""

    def __init__(self, base_url: str, page: str) -> None:
        """Args:
        base_url: the server's http URL, e.g. "http://127.0.0.1:8501".
        page: the page's URL path without slashes ("" for the entry page, "solve", ...).
        """
        self.ws_url = base_url.replace("http://", "ws://", 1) + "/_stcore/stream"
        self.page_url = f"{base_url}/{page}"
        self.page = page
        self.query_string = ""
        self.widgets: list[Widget] = []
        self._ws = None

    async def open(self, timeout_s: float) -> RunResult:
        """Connect and run the page once with its defaults (the first load)."""
        self._ws = await asyncio.wait_for(
            websockets.connect(
                self.ws_url, subprotocols=["streamlit"], max_size=None, ping_interval=None
            ),
            timeout_s,
        )
        return await self.run(None, timeout_s)

    async def run(self, change: WidgetState | None, timeout_s: float) -> RunResult:
        """Send one rerun (with `change`, if any) and wait for the script to finish."""
        msg = BackMsg()
        client = msg.rerun_script
        client.query_string = self.query_string
        client.page_name = self.page
        query = self.query_string
        client.context_info.url = self.page_url + (f"?{query}" if query else "")
        if change is not None:
            client.widget_states.widgets.append(change)
        start = time.perf_counter()
        try:
            await self._ws.send(msg.SerializeToString())
            error = await asyncio.wait_for(self._until_finished(), timeout_s)
        except (TimeoutError, websockets.ConnectionClosed) as exc:
            error = f"{type(exc).__name__} {exc}".strip()
        return RunResult(time.perf_counter() - start, self.query_string, error)

    async def _until_finished(self) -> str:
        """Read ForwardMsgs up to `script_finished`; returns an error description or ""."""
        problems: list[str] = []
        widgets: list[Widget] = []
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(await self._ws.recv())
            kind = fwd.WhichOneof("type")
            if kind == "page_info_changed":
                self.query_string = fwd.page_info_changed.query_string
            elif kind == "page_not_found":
                problems.append(f"page not found: {fwd.page_not_found.page_name!r}")
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                self._read_element(fwd.delta.new_element, widgets, problems)
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(fwd.script_finished)
                if status != FINISHED_OK:
                    problems.append(f"script finished with {status}")
                self.widgets = widgets or self.widgets
                return "; ".join(problems)

    @staticmethod
    def _read_element(element, widgets: list[Widget], problems: list[str]) -> None:
        kind = element.WhichOneof("type")
        if kind == "exception":
            problems.append(f"exception on the page: {element.exception.message[:200]}")
        elif kind in CHOICE_WIDGETS:
            proto = getattr(element, kind)
            widgets.append(
                Widget(kind=kind, id=proto.id, label=proto.label, options=tuple(proto.options))
            )

    async def close(self) -> None:
        """Close the WebSocket (the server then ends the session)."""
        if self._ws is not None:
            await self._ws.close()
