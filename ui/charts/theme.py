# ruff: noqa: RUF001 (full-width signs: where a Chinese line may not break)
"""Chart styling shared by every figure builder: the accelerator palette, theme-neutral greys,
WebGL threshold, log axes with decade ticks (1, 10, 100, 1k) and a legend under the plot.

Streamlit's plotly theme (`st.plotly_chart(theme="streamlit")`, the default) supplies the
background, fonts and grid for the light or dark theme the browser asks for; colours here are
chosen to read on both (no black or white marks). Palette: Plotly/D3 category10.
"""

from __future__ import annotations

import re
import unicodedata

from ui.words.format import log_ticks

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
GAP_COLOR = "#7f7f7f"  # mid-grey: visible on a white and on a near-black background
WEBGL_POINTS = 500  # more points than this in a trace: Scattergl
TITLE_COLUMNS = 56  # a subtitle's line: 56 columns of 12 px text fit a 390 px phone
HEAD_COLUMNS = 36  # a title's own line: 36 columns of plotly's 17 px title text fit it too


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


# a word, one CJK character (or full-width sign), or a run of spaces
_TOKENS = re.compile(
    r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]|[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]+|\s+"
)
_NO_START = set("，。、；：！？）」』”’》,.;:!?)")  # never the first sign of a line
_NO_END = set("（「『“‘《(")  # never the last


def _columns(text: str) -> int:
    """Columns `text` takes: a CJK character or full-width sign two, anything else one."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap_lines(text: str, width: int = 48) -> str:
    """Plain text broken into lines of at most `width` columns with <br> (a chart's subtitle on
    a 390 px phone: plotly never wraps text by itself). A CJK character takes two columns and a
    line may break between two of them (not before a closing sign, nor after an opening one);
    other text breaks at spaces."""
    lines: list[list[str]] = [[]]
    used, space = 0, False
    for token in _TOKENS.findall(text):
        if token.isspace():
            space = bool(lines[-1])
            continue
        need = _columns(token) + space
        line = lines[-1]
        if line and used + need > width and token not in _NO_START:
            carried = [line.pop()] if line[-1] in _NO_END and len(line) > 1 else []
            lines.append(carried)
            used, need = _columns("".join(carried)), _columns(token)
        elif space:
            line.append(" ")
        lines[-1].append(token)
        used += need
        space = False
    return "<br>".join("".join(line) for line in lines if line) or text


def wrap_title(title: str) -> dict:
    """A chart title that fits a phone: 'Roofline: H100, fp16' -> 'Roofline' over a smaller
    'H100, fp16' line (plotly never wraps a title by itself), the smaller line broken where it
    is long (`wrap_lines`); a Chinese title breaks at its full-width colon (U+FF1A) the same
    way. A title without a colon longer than a phone's line breaks between words at full size."""
    colon = ": " if ": " in title else "\uff1a"
    head, sep, tail = title.partition(colon)
    if "<br>" in title:
        return {"text": title}
    if not sep:  # no colon to break at: the title's own lines, each short enough
        return {"text": wrap_lines(title, HEAD_COLUMNS)}
    return {"text": f"{head}<br><sup>{wrap_lines(tail, TITLE_COLUMNS)}</sup>"}
