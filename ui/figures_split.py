"""The latency split of a single solve: latency = max(compute, memory) + fixed overhead, as a
stacked bar beside the two roofline terms (only the larger one counts; Williams et al. 2009).

Pure: numbers in ms in, a plotly Figure out. Values on the bars and in the legend come from
ui.format; a bar label that cannot be drawn at 12 px is hidden (its legend entry still carries
the value), so nothing on the chart is too small to read.
"""

from __future__ import annotations

import plotly.graph_objects as go

from ui.format import fmt, pct
from ui.theme import GAP_COLOR, legend_below

MS = 1e-3  # the inputs' unit (ms) in seconds


def latency_breakdown_figure(
    t_compute_ms: float, t_memory_ms: float, t_overhead_ms: float
) -> go.Figure:
    """Latency = max(compute, memory) + fixed overhead, as a stacked bar beside the terms.

    Bar labels are at least 12 px or hidden (then the legend entry carries the value)."""
    bound = "compute" if t_compute_ms > t_memory_ms else "memory"
    binding = max(t_compute_ms, t_memory_ms)
    total = binding + t_overhead_ms

    def bar(y, x, name, color, text) -> dict:
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

    def ms(value: float) -> str:
        return fmt(value * MS, "s")

    traces = [
        bar(
            ["latency"],
            [binding],
            f"{bound} (binding): {ms(binding)}, {pct(binding / total, digits=2)}",
            "#1f77b4",
            [f"{bound} {ms(binding)}"],
        ),
        bar(
            ["latency"],
            [t_overhead_ms],
            f"fixed overhead: {ms(t_overhead_ms)}, {pct(t_overhead_ms / total, digits=2)}",
            GAP_COLOR,
            [f"overhead {ms(t_overhead_ms)} ({pct(t_overhead_ms / total, digits=2)})"],
        ),
        bar(
            ["compute term", "memory term"],
            [t_compute_ms, t_memory_ms],
            "terms (only the larger counts)",
            "#aec7e8",
            [ms(t_compute_ms), ms(t_memory_ms)],
        ),
    ]
    layout = {
        "barmode": "stack",
        "height": 260,
        "title": {"text": f"Latency split: {ms(total)}"},
        "xaxis": {"ticksuffix": " ms", "automargin": True},  # no title: the legend sits below
        "yaxis": {"automargin": True},
        "uniformtext": {"minsize": 12, "mode": "hide"},
        "legend": legend_below(),
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    }
    return go.Figure(data=traces, layout=layout)
