"""The latency split of a single solve: latency = max(compute, memory) + fixed overhead, as a
stacked bar beside the two roofline terms (only the larger one counts; Williams et al. 2009).

Pure: numbers in ms in, a plotly Figure out. Values on the bars and in the legend come from
ui.words.format; a bar label that cannot be drawn at 12 px is hidden (its legend entry still carries
the value), so nothing on the chart is too small to read.
"""

from __future__ import annotations

import plotly.graph_objects as go

from ui.charts.theme import GAP_COLOR, legend_below
from ui.words.format import fmt, pct
from ui.words.i18n import _

MS = 1e-3  # the inputs' unit (ms) in seconds


def _bar(y: list, x: list, name: str, color: str, text: list[str]) -> dict:
    return {
        "type": "bar",
        "orientation": "h",
        "y": y,
        "x": x,
        "name": name,
        "marker": {"color": color},
        "text": text,
        "textposition": "auto",
        "textangle": 0,  # never turned on its side to fit a thin bar
        "hoverinfo": "name",
    }


def _ms(value: float) -> str:
    return fmt(value * MS, "s")


def _layout(total: str) -> dict:
    return {
        "barmode": "stack",
        "height": 260,
        "title": {"text": _("Latency split: {total}").format(total=total)},
        "xaxis": {"ticksuffix": " ms", "automargin": True},  # no title: the legend sits below
        "yaxis": {"automargin": True},
        "uniformtext": {"minsize": 12, "mode": "hide"},
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    }


def latency_breakdown_figure(
    t_compute_ms: float, t_memory_ms: float, t_overhead_ms: float
) -> go.Figure:
    """Latency = max(compute, memory) + fixed overhead, as a stacked bar beside the terms.

    Bar labels are at least 12 px or hidden (then the legend entry carries the value)."""
    bound = _("compute") if t_compute_ms > t_memory_ms else _("memory")
    binding = max(t_compute_ms, t_memory_ms)
    total = binding + t_overhead_ms
    share = {k: pct(v / total, digits=2) for k, v in (("b", binding), ("o", t_overhead_ms))}
    traces = [
        _bar(
            y=[_("latency")],
            x=[binding],
            name=_("{bound} (binding): {time}, {share}").format(
                bound=bound, time=_ms(binding), share=share["b"]
            ),
            color="#1f77b4",
            text=[f"{bound} {_ms(binding)}"],
        ),
        _bar(
            y=[_("latency")],
            x=[t_overhead_ms],
            name=_("fixed overhead: {time}, {share}").format(
                time=_ms(t_overhead_ms), share=share["o"]
            ),
            color=GAP_COLOR,
            text=[_("overhead {time} ({share})").format(time=_ms(t_overhead_ms), share=share["o"])],
        ),
        _bar(
            y=[_("compute term"), _("memory term")],
            x=[t_compute_ms, t_memory_ms],
            name=_("terms (only the larger counts)"),
            color="#aec7e8",
            text=[_ms(t_compute_ms), _ms(t_memory_ms)],
        ),
    ]
    return go.Figure(data=traces, layout=_layout(_ms(total)))
