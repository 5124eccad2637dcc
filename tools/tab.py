"""One browser tab without a browser: a Streamlit session over the browser's own protocol.

A browser tab talks to a Streamlit server over one WebSocket at `/_stcore/stream`, carrying
protobuf messages. The tab sends a `BackMsg` (`rerun_script`: the URL's query string, the page,
and the value of every widget the last run drew) and the server answers with `ForwardMsg`s (the
session's id, the page's elements, query-string updates, ...) ending in `script_finished`.
`Tab` speaks exactly that, with the protobuf classes that ship with Streamlit, and holds the
widget values as the browser's widget manager does: a widget drawn for the first time takes its
default, a value the script sets replaces what the tab held, and a rerun sends back the value of
every widget of the last run. The server so does the same work as for a browser tab, while the
client costs milliseconds per rerun instead of a browser's seconds of drawing.

Used by the many-users load (tools/many_users/) and the capacity benchmarks (bench/).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.WidgetStates_pb2 import WidgetState

FINISHED_OK = "FINISHED_SUCCESSFULLY"
# The widgets whose value a tab holds and sends back on every rerun (buttons hold none).
VALUE_WIDGETS = frozenset(
    {"number_input", "selectbox", "radio", "multiselect", "checkbox", "text_input"}
)


@dataclass(frozen=True)
class Element:
    """One element a run drew: where (its delta path: 0 main area, 1 sidebar), its kind
    ("metric", "heading", "selectbox", ...) and its protobuf message."""

    path: tuple[int, ...]
    kind: str
    proto: object


@dataclass(frozen=True)
class RunResult:
    """One script run as the tab saw it.

    Attributes:
        seconds: from sending the BackMsg to receiving `script_finished`.
        query_string: the page's query string after the run (what the address bar would hold).
        error: empty if the run finished cleanly; else what went wrong.
        elements: the elements the run drew, in order.
    """

    seconds: float
    query_string: str
    error: str = ""
    elements: tuple[Element, ...] = field(default=(), repr=False)


def held_value(kind: str, proto) -> WidgetState | None:
    """The value a browser tab holds for a widget the script has just drawn or set (None: the
    kind keeps no value, e.g. a button)."""
    if kind not in VALUE_WIDGETS:
        return None
    state = WidgetState(id=proto.id)
    if kind == "number_input":
        if proto.set_value or proto.HasField("default"):
            value = proto.value if proto.set_value else proto.default
            if proto.data_type == NumberInput.INT:
                state.int_value = int(value)
            else:
                state.double_value = value
    elif kind in ("selectbox", "radio"):
        if proto.set_value:
            state.string_value = proto.raw_value
        elif proto.HasField("default"):
            state.string_value = proto.options[proto.default]
    elif kind == "multiselect":
        chosen = proto.raw_values if proto.set_value else [proto.options[i] for i in proto.default]
        state.string_array_value.data.extend(chosen)
    elif kind == "checkbox":
        state.bool_value = proto.value if proto.set_value else proto.default
    elif proto.set_value or proto.HasField("default"):  # text_input
        state.string_value = proto.value if proto.set_value else proto.default
    return state


class Tab:
    """One simulated browser tab on one page of a Streamlit server.

    Attributes after a run: `session_id` (the server's session), `query_string`, `elements`
    (the last run's), `values` (widget id → the value this tab holds and sends back).
    """

    def __init__(self, base_url: str, page: str, query_string: str = "") -> None:
        """Args:
        base_url: the server's http URL, e.g. "http://127.0.0.1:8501".
        page: the page's URL path without slashes ("" for the entry page, "solve", ...).
        query_string: the link's query string (without "?") the tab opens with.
        """
        self.ws_url = base_url.replace("http://", "ws://", 1) + "/_stcore/stream"
        self.page_url = f"{base_url}/{page}"
        self.page = page
        self.query_string = query_string
        self.session_id = ""
        self.page_script_hash = ""
        self.elements: tuple[Element, ...] = ()
        self.values: dict[str, WidgetState] = {}
        self._ws = None

    async def open(self, timeout_s: float) -> RunResult:
        """Connect and run the page once from its link (the first load)."""
        self._ws = await asyncio.wait_for(
            websockets.connect(
                self.ws_url, subprotocols=["streamlit"], max_size=None, ping_interval=None
            ),
            timeout_s,
        )
        return await self.run(None, timeout_s)

    async def run(self, change: WidgetState | None, timeout_s: float) -> RunResult:
        """Send one rerun with every held widget value (and `change`, if any, replacing its
        widget's) and wait for the script to finish."""
        if change is not None:
            self.values[change.id] = change
        msg = BackMsg()
        rerun = msg.rerun_script
        rerun.query_string = self.query_string
        rerun.page_name = self.page
        rerun.page_script_hash = self.page_script_hash
        rerun.context_info.url = self.page_url
        rerun.widget_states.widgets.extend(self.values.values())
        start = time.perf_counter()
        try:
            await self._ws.send(msg.SerializeToString())
            error = await asyncio.wait_for(self._until_finished(), timeout_s)
        except (TimeoutError, websockets.ConnectionClosed) as exc:
            error = f"{type(exc).__name__} {exc}".strip()
        seconds = time.perf_counter() - start
        return RunResult(
            seconds=seconds, query_string=self.query_string, error=error, elements=self.elements
        )

    async def _until_finished(self) -> str:
        """Read ForwardMsgs up to `script_finished`; returns an error description or ""."""
        problems: list[str] = []
        elements: list[Element] = []
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(await self._ws.recv())
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                self.session_id = fwd.new_session.initialize.session_id
            elif kind == "navigation":  # the page the run resolved to, sent back on reruns
                self.page_script_hash = fwd.navigation.page_script_hash
            elif kind == "page_info_changed":
                self.query_string = fwd.page_info_changed.query_string
            elif kind == "page_not_found":
                problems.append(f"page not found: {fwd.page_not_found.page_name!r}")
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                new = fwd.delta.new_element
                what = new.WhichOneof("type")
                elements.append(Element(tuple(fwd.metadata.delta_path), what, getattr(new, what)))
                if what == "exception":
                    problems.append(f"exception on the page: {new.exception.message[:200]}")
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(fwd.script_finished)
                if status != FINISHED_OK:
                    problems.append(f"script finished with {status}")
                self._hold(elements)
                return "; ".join(problems)

    def _hold(self, elements: list[Element]) -> None:
        """Keep the run's elements, and the widget values a browser tab would now hold: those of
        the widgets this run drew, the script's own values replacing the tab's."""
        values = {}
        for e in elements:
            state = held_value(e.kind, e.proto)
            if state is None:
                continue
            keep = e.proto.id in self.values and not getattr(e.proto, "set_value", False)
            values[e.proto.id] = self.values[e.proto.id] if keep else state
        self.elements, self.values = tuple(elements), values

    async def close(self) -> None:
        """Close the WebSocket (the server then ends the session)."""
        if self._ws is not None:
            await self._ws.close()
