"""The light clients of bench/capacity.py and bench/memory_burst.py, and the input they change.

Each client is a `tools.tab.Tab`: one Streamlit session over the browser's own WebSocket
protocol, holding and sending back every widget value as a browser tab does, so the server does
the same work as for a browser while the client costs milliseconds per rerun.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from streamlit.proto.WidgetStates_pb2 import WidgetState

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.tab import RunResult, Tab

__all__ = ["RunResult", "Session", "Widget", "change_for"]

CHOICE_WIDGETS = ("selectbox", "multiselect")


@dataclass(frozen=True)
class Widget:
    """A choice widget the page drew: its kind, id, label and option labels."""

    kind: str
    id: str
    label: str
    options: tuple[str, ...]


class Session(Tab):
    """A client tab that also lists the choice widgets its last run drew."""

    @property
    def widgets(self) -> list[Widget]:
        return [
            Widget(kind=e.kind, id=e.proto.id, label=e.proto.label, options=tuple(e.proto.options))
            for e in self.elements
            if e.kind in CHOICE_WIDGETS
        ]


def change_for(widgets: list[Widget], user: int, turn: int) -> tuple[WidgetState | None, str]:
    """The widget value a user changes on its `turn`-th rerun, and a label for the report.

    The accelerator picker if the page has one (a selectbox cycles through the accelerators; a
    multiselect picks two neighbouring ones); else the first multiselect (one option); else the
    first selectbox; else nothing (a plain rerun, as the browser's "Rerun"). Users start at
    different options so they do not ask for the same scenarios at the same time.
    """
    ranked = sorted(
        (w for w in widgets if len(w.options) >= 2),
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
