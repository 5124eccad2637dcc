"""Metric cards and charts in rows that wrap, the one way every page draws them.

In `st.columns(4)` each card had a quarter of the main area whatever its text: in an 800 px
window (sidebar open) labels and values were cut ("Latency at batc…", "7.24 …"). Here each row
is a horizontal container: the cards share the row by what their text needs, and a card that
does not fit moves to the next line, whole.

Charts side by side had the same flaw: `st.columns(2)` stacks them only below a 640 px window,
so between 640 and about 1100 px (sidebar open) each chart got 180-270 px and its axis titles
and subtitle ran past its edge. `chart_row` gives each chart a fixed width instead, in a row
that wraps: side by side where they fit, one under the other where they do not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

# (label, value, help or None, and any captions under the value), or st.metric's arguments
Card = tuple[str | None, ...] | Mapping[str, Any]
PER_ROW = 4  # cards per row where the window is wide enough
# px: two side by side in a 1440 px window with the sidebar open (980 px of main area), a
# phone's whole width (a container narrower than this shrinks the chart to fit)
CHART_WIDTH = 440


def cards(items: Sequence[Card], per_row: int = PER_ROW) -> None:
    """Draw `items` as metric cards, `per_row` to a row, each row wrapping where it must."""
    for start in range(0, len(items), per_row):
        with st.container(horizontal=True):
            for item in items[start : start + per_row]:
                if isinstance(item, Mapping):  # e.g. with a delta
                    st.metric(**item, width="stretch")
                    continue
                label, value, tip, *captions = item
                if not captions:
                    st.metric(label, value, help=tip, width="stretch")
                    continue
                with st.container(width="content"):  # as wide as its label, value and notes
                    st.metric(label, value, help=tip)
                    for caption in captions:
                        st.caption(caption)


def chart_row(count: int, width: int = CHART_WIDTH) -> list:
    """`count` containers `width` px wide, side by side where the window has room for them and
    one under the other where it has not; draw one chart in each."""
    with st.container(horizontal=True, gap="medium"):
        return [st.container(width=width) for _ in range(count)]
