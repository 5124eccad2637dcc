"""Chart styling shared by every figure builder: the accelerator palette, theme-neutral greys,
WebGL threshold, log axes with decade ticks (1, 10, 100, 1k) and a legend under the plot.

Streamlit's plotly theme (`st.plotly_chart(theme="streamlit")`, the default) supplies the
background, fonts and grid for the light or dark theme the browser asks for; colours here are
chosen to read on both (no black or white marks). Palette: Plotly/D3 category10.
"""

from __future__ import annotations

import textwrap

from ui.core.format import log_ticks

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
GAP_COLOR = "#7f7f7f"  # mid-grey: visible on a white and on a near-black background
WEBGL_POINTS = 500  # more points than this in a trace: Scattergl


def log_axis(title: str, values, extra=()) -> dict:
    """A log axis with labelled decades (1, 10, 100, 1k) covering `values` and `extra`."""
    return {"type": "log", "title": {"text": title}, "automargin": True} | log_ticks(
        values, extra=extra
    )


def legend_below(rows: int = 1) -> dict:
    """A horizontal legend at the bottom of the figure, under the axis title (the container
    anchors it, so a narrow 390 px chart never draws it over the title)."""
    return {
        "orientation": "h",
        "yref": "container",
        "yanchor": "bottom",
        "y": 0,
        "font": {"size": 11},
    }


def wrap_lines(text: str, width: int = 48) -> str:
    """Plain text broken into lines of at most `width` characters with <br> (a chart's subtitle
    on a 390 px phone: plotly never wraps text by itself)."""
    return "<br>".join(textwrap.wrap(text, width)) or text


def wrap_title(title: str) -> dict:
    """A chart title that fits a phone: 'Roofline: H100, fp16' -> 'Roofline' over a smaller
    'H100, fp16' line (plotly never wraps a title by itself); a Chinese title breaks at its
    full-width colon (U+FF1A) the same way."""
    colon = ": " if ": " in title else "\uff1a"
    head, sep, tail = title.partition(colon)
    return {"text": f"{head}<br><sup>{tail}</sup>" if sep and "<br>" not in title else title}
