"""The tornado builder (ui/charts/tornado.py): bars from the engine's elasticity rows, largest on
top, with the perturbation in the legend and the changes in percent."""

from __future__ import annotations

import engine
from ui.charts.tornado import tornado_figure


def rows(step=0.1):
    s = engine.sensitivity(
        engine.Deployment("Llama-3.1-70B", "A100"),
        engine.Batch(input_tokens=1024, output_tokens=128),
        engine.Perturbation(step=step),
    )
    return [r for r in s.rows if r["metric"] == "tpot_ms"]


def test_bars_are_the_engines_changes_in_percent_largest_on_top():
    r = rows()
    fig = tornado_figure(rows=r, labels={}, title="t", step=0.1)
    minus, plus = fig.data
    assert minus.y[-1] == "memory_bandwidth"  # plotly draws the last category on top
    bw = next(x for x in r if x["parameter"] == "memory_bandwidth")
    assert minus.x[-1] == bw["change_at_minus_step"] * 100  # +10.98 %: 1/0.9 − 1 of 98.8 %
    assert plus.x[-1] == bw["change_at_plus_step"] * 100  # −8.98 %
    assert minus.name == "parameter −10%" and plus.name == "parameter +10%"
    assert minus.text[-1].startswith("+") and not plus.text[-1].startswith("+")
    flops = list(minus.y).index("peak_flops")
    assert minus.x[flops] == 0 and minus.text[flops] == ""  # no bar, no label


def test_labels_and_height_follow_the_rows():
    r = rows(step=0.05)
    fig = tornado_figure(rows=r, labels={"memory_bandwidth": "BW"}, title="t", step=0.05)
    assert "BW" in fig.data[0].y and fig.layout.height == 120 + 36 * len(r)
    assert fig.data[0].name == "parameter −5%"
